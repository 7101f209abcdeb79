package io.strand.coldtier;

/**
 * The fixed-size end of a segment (layout in {@link SegmentWriter}): where the footer is, what the
 * segment holds, and its hashes. Hashes are lowercase hex.
 *
 * @param sha256          SHA-256 of bytes {@code [0, footerOffset)}: the header and every block
 * @param prevChainSha256 the log's entry hash chain before {@code firstSeq} (the previous segment's {@code chainSha256})
 * @param chainSha256     the chain after {@code lastSeq}: {@code c(n) = SHA-256(c(n-1) || encoded entry n)}
 * @param size            total object size in bytes
 */
public record SegmentTrailer(long footerOffset, int footerLength, long firstSeq, long lastSeq, long firstTs,
                             long lastTs, long entries, String sha256, String prevChainSha256,
                             String chainSha256, long size) {

    public int blockCount() {
        return (footerLength - 4) / SegmentWriter.BLOCK_INDEX_SIZE;
    }
}

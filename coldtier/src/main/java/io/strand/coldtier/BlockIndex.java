package io.strand.coldtier;

/**
 * One block's entry in a segment footer: which seqs and times it holds and where its compressed
 * bytes are, so a page read fetches just this range.
 *
 * @param offset    byte offset of the compressed block in the segment
 * @param length    compressed length
 * @param rawLength uncompressed length
 * @param crc32c    CRC32C of the compressed bytes
 */
public record BlockIndex(long firstSeq, long lastSeq, long firstTs, long lastTs, long offset, int length,
                         int rawLength, int entries, int crc32c) {

    public boolean contains(long seq) {
        return seq >= firstSeq && seq <= lastSeq;
    }
}

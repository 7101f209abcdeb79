package io.strand.coldtier;

/**
 * One live segment as the manifest lists it. The manifest, not an object listing, is what readers
 * trust; {@code sha256} ties this entry to the exact object bytes (checked against the trailer on open).
 *
 * @param key             store-relative object key, {@code ws/log/seg/{firstSeq:020d}-{lastSeq:020d}.seg}
 * @param bytes           object size
 * @param sha256          body SHA-256 from the trailer (hex)
 * @param prevChainSha256 entry hash chain before {@code firstSeq}: equals the previous segment's {@code chainSha256}
 * @param chainSha256     entry hash chain after {@code lastSeq}
 */
public record SegmentMeta(String key, long firstSeq, long lastSeq, long firstTs, long lastTs, long entries,
                          long bytes, String sha256, String prevChainSha256, String chainSha256) {

    public static SegmentMeta of(String key, SegmentTrailer t) {
        return new SegmentMeta(key, t.firstSeq(), t.lastSeq(), t.firstTs(), t.lastTs(), t.entries(), t.size(),
                t.sha256(), t.prevChainSha256(), t.chainSha256());
    }

    public boolean contains(long seq) {
        return seq >= firstSeq && seq <= lastSeq;
    }

    /** True when {@code t} is the trailer of exactly this segment. */
    public boolean matches(SegmentTrailer t) {
        return t.firstSeq() == firstSeq && t.lastSeq() == lastSeq && t.firstTs() == firstTs && t.lastTs() == lastTs
                && t.entries() == entries && t.size() == bytes && t.sha256().equals(sha256)
                && t.prevChainSha256().equals(prevChainSha256) && t.chainSha256().equals(chainSha256);
    }
}

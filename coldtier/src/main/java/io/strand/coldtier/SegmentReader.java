package io.strand.coldtier;

import com.github.luben.zstd.Zstd;
import io.strand.core.Entry;
import io.strand.core.StrandException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a segment written by {@link SegmentWriter}: the tail first (trailer + footer index), then
 * single blocks by ranged read. Immutable after {@link #open}, so one instance is shared by every
 * thread reading that segment.
 *
 * <p>Every check failure is a {@code CORRUPT} {@link StrandException} naming the segment key and
 * seq range; a reader never returns bytes that did not pass their CRC (blocks) or SHA-256 (verify).
 */
public final class SegmentReader {
    /**
     * Bytes fetched from the end on open: trailer and footer of segments up to ~290 blocks in one read;
     * bigger footers cost a second read, once per segment, since the parsed index is cached.
     */
    static final int TAIL_GUESS = 16 * 1024;
    private static final Pattern KEY_RANGE = Pattern.compile("(\\d{20})-(\\d{20})\\.seg$");

    /** Where a segment's bytes come from: a ranged GET, a local file, an array. May return fewer bytes at the end. */
    @FunctionalInterface
    public interface RangeSource {
        byte[] read(long offset, int length);
    }

    private final String key;
    private final RangeSource source;
    private final SegmentTrailer trailer;
    private final List<BlockIndex> blocks;

    private SegmentReader(String key, RangeSource source, SegmentTrailer trailer, List<BlockIndex> blocks) {
        this.key = key;
        this.source = source;
        this.trailer = trailer;
        this.blocks = blocks;
    }

    /** Reads and checks the tail of a segment of {@code size} bytes (one ranged read, two for huge footers). */
    public static SegmentReader open(String key, long size, RangeSource source) {
        int min = SegmentWriter.HEADER_SIZE + 4 + SegmentWriter.TRAILER_SIZE;
        if (size < min) {
            throw corrupt(key, "only " + size + " bytes, shorter than an empty segment");
        }
        int tailLen = (int) Math.min(size, TAIL_GUESS);
        byte[] tail = source.read(size - tailLen, tailLen);
        if (tail.length != tailLen) {
            throw corrupt(key, "truncated: object has fewer than " + size + " bytes");
        }
        ByteBuffer t = ByteBuffer.wrap(tail, tailLen - SegmentWriter.TRAILER_SIZE, SegmentWriter.TRAILER_SIZE);
        long footerOffset = t.getLong();
        int footerLength = t.getInt();
        if (!Arrays.equals(tail, tailLen - 8, tailLen, SegmentWriter.END_MAGIC, 0, 8)) {
            throw corrupt(key, "no end magic: truncated or damaged trailer");
        }
        if (footerLength < 4 || (footerLength - 4) % SegmentWriter.BLOCK_INDEX_SIZE != 0
                || footerOffset < SegmentWriter.HEADER_SIZE
                || footerOffset + footerLength + SegmentWriter.TRAILER_SIZE != size) {
            throw corrupt(key, "trailer places the footer at " + footerOffset + "+" + footerLength
                    + ", which does not fit a " + size + "-byte object");
        }
        byte[] footerAndTrailer;
        int need = footerLength + SegmentWriter.TRAILER_SIZE;
        if (need <= tailLen) {
            footerAndTrailer = Arrays.copyOfRange(tail, tailLen - need, tailLen);
        } else {
            byte[] head = source.read(footerOffset, need - tailLen);
            if (head.length != need - tailLen) {
                throw corrupt(key, "truncated footer");
            }
            footerAndTrailer = new byte[need];
            System.arraycopy(head, 0, footerAndTrailer, 0, head.length);
            System.arraycopy(tail, 0, footerAndTrailer, head.length, tailLen);
        }
        return parse(key, size, source, footerAndTrailer, footerLength);
    }

    /** A reader over a whole segment held in memory. */
    public static SegmentReader open(String key, byte[] whole) {
        return open(key, whole.length, slice(whole));
    }

    private static SegmentReader parse(String key, long size, RangeSource source, byte[] ft, int footerLength) {
        int crcAt = ft.length - 12;
        int stored = ByteBuffer.wrap(ft, crcAt, 4).getInt();
        if (stored != SegmentWriter.crc(ft, 0, crcAt)) {
            throw corrupt(key, "footer/trailer CRC mismatch");
        }
        ByteBuffer t = ByteBuffer.wrap(ft, footerLength, SegmentWriter.TRAILER_SIZE);
        long footerOffset = t.getLong();
        t.getInt();
        long firstSeq = t.getLong();
        long lastSeq = t.getLong();
        long firstTs = t.getLong();
        long lastTs = t.getLong();
        long entries = t.getLong();
        byte[] sha = new byte[32];
        byte[] prev = new byte[32];
        byte[] chain = new byte[32];
        t.get(sha).get(prev).get(chain);
        int version = t.getShort() & 0xffff;
        int reserved = t.getShort();
        if (version != SegmentWriter.FORMAT_VERSION || reserved != 0) {
            throw corrupt(key, "unsupported segment format version " + version);
        }
        HexFormat hex = HexFormat.of();
        SegmentTrailer trailer = new SegmentTrailer(footerOffset, footerLength, firstSeq, lastSeq, firstTs, lastTs,
                entries, hex.formatHex(sha), hex.formatHex(prev), hex.formatHex(chain), size);

        ByteBuffer f = ByteBuffer.wrap(ft, 0, footerLength);
        int n = f.getInt();
        if (n != trailer.blockCount() || n < 1) {
            throw corrupt(key, firstSeq, lastSeq, "footer lists " + n + " blocks in " + footerLength + " bytes");
        }
        List<BlockIndex> blocks = new ArrayList<>(n);
        long expectOffset = SegmentWriter.HEADER_SIZE;
        long expectSeq = firstSeq;
        long prevTs = firstTs;
        for (int i = 0; i < n; i++) {
            BlockIndex b = new BlockIndex(f.getLong(), f.getLong(), f.getLong(), f.getLong(), f.getLong(),
                    f.getInt(), f.getInt(), f.getInt(), f.getInt());
            if (b.offset() != expectOffset || b.length() <= 0 || b.firstSeq() != expectSeq
                    || b.lastSeq() < b.firstSeq() || b.entries() != b.lastSeq() - b.firstSeq() + 1
                    || b.firstTs() < prevTs || b.lastTs() < b.firstTs() || b.rawLength() < BlockEntryCodec.FIXED) {
                throw corrupt(key, firstSeq, lastSeq, "footer entry for block " + i + " is inconsistent");
            }
            blocks.add(b);
            expectOffset = b.offset() + b.length();
            expectSeq = b.lastSeq() + 1;
            prevTs = b.lastTs();
        }
        if (expectOffset != footerOffset || expectSeq != lastSeq + 1 || prevTs != lastTs
                || entries != lastSeq - firstSeq + 1) {
            throw corrupt(key, firstSeq, lastSeq, "footer does not add up to the trailer");
        }
        return new SegmentReader(key, source, trailer, List.copyOf(blocks));
    }

    public String key() {
        return key;
    }

    public SegmentTrailer trailer() {
        return trailer;
    }

    public List<BlockIndex> blocks() {
        return blocks;
    }

    /** Index of the block holding {@code seq}, or -1 when the segment does not hold it. */
    public int blockOf(long seq) {
        int lo = 0;
        int hi = blocks.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            BlockIndex b = blocks.get(mid);
            if (seq < b.firstSeq()) {
                hi = mid - 1;
            } else if (seq > b.lastSeq()) {
                lo = mid + 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    /** Index of the first block whose last entry has {@code ts ≥ time}, or -1 when every entry is older. */
    public int firstBlockAtOrAfterTime(long time) {
        int lo = 0;
        int hi = blocks.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (blocks.get(mid).lastTs() < time) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo == blocks.size() ? -1 : lo;
    }

    /** Fetches block {@code i} (one ranged read), checks its CRC and contents, and decodes it. */
    public List<Entry> readBlock(int i) {
        return readBlock(i, source);
    }

    /** As {@link #readBlock(int)}, fetching from {@code from} (the caller's own handle on the same bytes). */
    public List<Entry> readBlock(int i, RangeSource from) {
        BlockIndex b = blocks.get(i);
        return decodeBlock(key, i, b, from.read(b.offset(), b.length()), null, null);
    }

    /**
     * Checks every byte of a whole segment: header, each block's CRC and entries, the body
     * SHA-256 against the trailer, and the entry chain from {@code prevChain} to {@code chain}.
     * Each entry goes to {@code sink} in order (compaction streams them into a new segment).
     */
    public static SegmentReader verifyAll(String key, byte[] whole, Consumer<Entry> sink) {
        SegmentReader r = open(key, whole);
        SegmentTrailer t = r.trailer;
        ByteBuffer h = ByteBuffer.wrap(whole, 0, SegmentWriter.HEADER_SIZE);
        if (!Arrays.equals(whole, 0, 8, SegmentWriter.MAGIC, 0, 8)
                || h.getShort(8) != SegmentWriter.FORMAT_VERSION || h.get(10) != SegmentWriter.CODEC_ZSTD
                || h.get(11) != 0 || h.getInt(12) != SegmentWriter.crc(whole, 0, 12)) {
            throw corrupt(key, t.firstSeq(), t.lastSeq(), "bad header");
        }
        MessageDigest body = BlockEntryCodec.sha256();
        body.update(whole, 0, (int) t.footerOffset());
        if (!HexFormat.of().formatHex(body.digest()).equals(t.sha256())) {
            throw corrupt(key, t.firstSeq(), t.lastSeq(), "body SHA-256 differs from the trailer");
        }
        MessageDigest chainSha = BlockEntryCodec.sha256();
        byte[][] chain = {HexFormat.of().parseHex(t.prevChainSha256())};
        for (int i = 0; i < r.blocks.size(); i++) {
            BlockIndex b = r.blocks.get(i);
            byte[] compressed = Arrays.copyOfRange(whole, (int) b.offset(), (int) (b.offset() + b.length()));
            for (Entry e : decodeBlock(key, i, b, compressed, chainSha, chain)) {
                sink.accept(e);
            }
        }
        if (!HexFormat.of().formatHex(chain[0]).equals(t.chainSha256())) {
            throw corrupt(key, t.firstSeq(), t.lastSeq(), "entry hash chain differs from the trailer");
        }
        return r;
    }

    static List<Entry> decodeBlock(String key, int blockNo, BlockIndex b, byte[] compressed,
                                   MessageDigest chainSha, byte[][] chain) {
        if (compressed.length != b.length()) {
            throw corrupt(key, b.firstSeq(), b.lastSeq(), "block " + blockNo + " truncated: "
                    + compressed.length + " of " + b.length() + " bytes");
        }
        if (SegmentWriter.crc(compressed, 0, compressed.length) != b.crc32c()) {
            throw corrupt(key, b.firstSeq(), b.lastSeq(), "block " + blockNo + " CRC mismatch");
        }
        if (b.rawLength() > 256 * 1024 * 1024) {
            throw corrupt(key, b.firstSeq(), b.lastSeq(), "block " + blockNo + " claims " + b.rawLength() + " bytes");
        }
        byte[] raw = new byte[b.rawLength()];
        long n;
        try {
            n = Zstd.decompress(raw, compressed);
        } catch (RuntimeException e) {
            throw corrupt(key, b.firstSeq(), b.lastSeq(), "block " + blockNo + " does not decompress: " + e.getMessage());
        }
        if (n != b.rawLength()) {
            throw corrupt(key, b.firstSeq(), b.lastSeq(), "block " + blockNo + " decompressed to " + n
                    + " bytes, index says " + b.rawLength());
        }
        return BlockEntryCodec.decode(raw, b, key, blockNo, chainSha, chain);
    }

    static RangeSource slice(byte[] whole) {
        return (offset, length) -> {
            if (offset >= whole.length) {
                return new byte[0];
            }
            return Arrays.copyOfRange(whole, (int) offset, (int) Math.min(whole.length, offset + length));
        };
    }

    private static StrandException corrupt(String key, long firstSeq, long lastSeq, String what) {
        return ColdErrors.corrupt(key, firstSeq, lastSeq, what);
    }

    /** Before the trailer is trusted, the seq range comes from the key ({@code …/{first}-{last}.seg}). */
    private static StrandException corrupt(String key, String what) {
        Matcher m = KEY_RANGE.matcher(key);
        if (m.find()) {
            return ColdErrors.corrupt(key, Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), what);
        }
        return ColdErrors.corrupt(key, what);
    }
}

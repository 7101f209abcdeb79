package io.strand.coldtier;

import com.github.luben.zstd.Zstd;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Writes one immutable cold segment to a local file: entries packed into zstd blocks, a footer
 * index, and a fixed trailer. Owned by one thread (the roller or the compactor) for its short life.
 *
 * <h2>Layout (format version 1, all integers big-endian)</h2>
 * <pre>
 * offset          size      field
 * 0               8         magic "STRNDSEG"
 * 8               2         format version = 1
 * 10              1         codec = 1 (zstd)
 * 11              1         reserved = 0
 * 12              4         CRC32C of bytes 0..11
 * 16              …         blocks, back to back; block i = one zstd frame of its encoded entries
 *                           (entry = seq u64 | ts u64 | keyLen i32, -1 = none | key UTF-8 | dataLen i32 | data;
 *                           byte table in {@link BlockEntryCodec}),
 *                           cut after the entry that takes it past ~64 KiB uncompressed
 * F               4         footer: block count n
 * F+4             56 × n    per block: firstSeq u64, lastSeq u64, firstTs u64, lastTs u64, offset u64,
 *                           length u32, rawLength u32, entryCount u32, CRC32C of the compressed bytes u32
 * T = F+4+56n     8         trailer: footerOffset F
 * T+8             4         footerLength (4 + 56n)
 * T+12            8 × 5     firstSeq, lastSeq, firstTs, lastTs, entryCount
 * T+52            32        SHA-256 of bytes 0..F-1 (header and all blocks): the object's identity in the manifest
 * T+84            32        prevChain: the log's entry hash chain before firstSeq (the previous segment's chain)
 * T+116           32        chain after lastSeq, c(n) = SHA-256(c(n-1) || encoded entry n), c(0) = 32 zero bytes
 * T+148           2         format version = 1
 * T+150           2         reserved = 0
 * T+152           4         CRC32C of bytes F..T+151 (footer and trailer)
 * T+156           8         end magic "STRNDEND"; the object is T+164 bytes long
 * </pre>
 *
 * <p>A reader fetches the tail (trailer + footer, one ranged GET for most segments), then only the
 * blocks a page needs. Every byte is covered by a check: header CRC, block CRC32C, footer/trailer
 * CRC, the two magics, and the body SHA-256; a verify also recomputes the entry chain, which links
 * segments by content, so it survives compaction re-blocking them.
 *
 * <p><b>Commit point:</b> a segment file is complete once {@link #finish()} has written the end
 * magic and fsynced; the segment is <i>committed</i> only when a manifest generation names it
 * (roll protocol, STYLE.md). A crash while writing leaves a local file without a valid trailer,
 * which readers reject as {@code CORRUPT} and the next roll rewrites from the hot entries; a crash
 * after upload leaves an object no manifest names, which the next roll overwrites (same key, same
 * bytes) and {@code verify} reports until then. Nothing in a segment is ever updated in place.
 */
public final class SegmentWriter implements AutoCloseable {
    public static final int FORMAT_VERSION = 1;
    public static final byte CODEC_ZSTD = 1;
    public static final int HEADER_SIZE = 16;
    public static final int BLOCK_INDEX_SIZE = 56;
    public static final int TRAILER_SIZE = 164;
    public static final int DEFAULT_BLOCK_BYTES = 64 * 1024;
    public static final int DEFAULT_ZSTD_LEVEL = 3;
    static final byte[] MAGIC = "STRNDSEG".getBytes(StandardCharsets.US_ASCII);
    static final byte[] END_MAGIC = "STRNDEND".getBytes(StandardCharsets.US_ASCII);

    private final Path file;
    private final FileChannel ch;
    private final int blockBytes;
    private final int zstdLevel;
    private final byte[] prevChain;
    private final MessageDigest bodySha = BlockEntryCodec.sha256();
    private final MessageDigest chainSha = BlockEntryCodec.sha256();
    private final BlockEntryCodec.Buf block;
    private final List<BlockIndex> index = new ArrayList<>();
    private byte[] chain;
    private long position;
    private long count;
    private long firstSeq = -1;
    private long lastSeq = -1;
    private long firstTs;
    private long lastTs;
    private long blockFirstSeq;
    private long blockFirstTs;
    private int blockEntries;
    private boolean finished;

    private SegmentWriter(Path file, byte[] prevChain, int blockBytes, int zstdLevel) throws IOException {
        if (prevChain.length != 32) {
            throw new IllegalArgumentException("prevChain must be 32 bytes");
        }
        this.file = file;
        this.blockBytes = blockBytes;
        this.zstdLevel = zstdLevel;
        this.prevChain = prevChain.clone();
        this.chain = prevChain.clone();
        this.block = new BlockEntryCodec.Buf(blockBytes + 1024);
        this.ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE);
        header.put(MAGIC).putShort((short) FORMAT_VERSION).put(CODEC_ZSTD).put((byte) 0);
        header.putInt(crc(header.array(), 0, 12));
        writeBody(header.array());
    }

    /**
     * Starts a segment at {@code file} (truncated if present).
     *
     * @param prevChainSha256 hex chain value before the first entry ({@code null} = start of the log)
     */
    public static SegmentWriter create(Path file, String prevChainSha256, int blockBytes, int zstdLevel) {
        if (blockBytes < 1024 || blockBytes > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("block size must be 1 KiB..16 MiB, not " + blockBytes);
        }
        byte[] prev = prevChainSha256 == null ? BlockEntryCodec.CHAIN_START : HexFormat.of().parseHex(prevChainSha256);
        try {
            return new SegmentWriter(file, prev, blockBytes, zstdLevel);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot write segment file " + file + ": " + e, Map.of(), e);
        }
    }

    public static SegmentWriter create(Path file, String prevChainSha256) {
        return create(file, prevChainSha256, DEFAULT_BLOCK_BYTES, DEFAULT_ZSTD_LEVEL);
    }

    /** Adds the next entry: its seq must be exactly one more than the last, its ts not earlier. */
    public void append(Entry e) {
        if (finished) {
            throw new IllegalStateException("segment already finished");
        }
        if (count > 0 && e.seq() != lastSeq + 1) {
            throw new StrandException(ErrorCode.SEQ_MISMATCH,
                    "segment entries must be contiguous: got seq " + e.seq() + " after " + lastSeq,
                    Map.of("head", lastSeq));
        }
        if (count > 0 && e.ts() < lastTs) {
            throw new IllegalArgumentException("entry " + e.seq() + " has ts " + e.ts() + " before " + lastTs);
        }
        if (e.seq() < 1) {
            throw new IllegalArgumentException("seq must be ≥ 1, not " + e.seq());
        }
        if (count == 0) {
            firstSeq = e.seq();
            firstTs = e.ts();
        }
        if (blockEntries == 0) {
            blockFirstSeq = e.seq();
            blockFirstTs = e.ts();
        }
        int start = BlockEntryCodec.encode(e, block);
        chain = BlockEntryCodec.chain(chainSha, chain, block.array(), start, block.size() - start);
        blockEntries++;
        count++;
        lastSeq = e.seq();
        lastTs = e.ts();
        if (block.size() >= blockBytes) {
            try {
                flushBlock();
            } catch (IOException ex) {
                throw new StrandException(ErrorCode.UNAVAILABLE, "cannot write segment file " + file + ": " + ex,
                        Map.of(), ex);
            }
        }
    }

    /** Entries appended so far. */
    public long count() {
        return count;
    }

    /** Uncompressed bytes appended so far plus compressed bytes written: a rough size for cutting segments. */
    public long approximateBytes() {
        return position + block.size();
    }

    /** Writes the last block, footer and trailer, fsyncs and closes the file. */
    public SegmentTrailer finish() {
        if (count == 0) {
            throw new IllegalStateException("a segment needs at least one entry");
        }
        if (finished) {
            throw new IllegalStateException("segment already finished");
        }
        try {
            flushBlock();
            long footerOffset = position;
            int footerLength = 4 + BLOCK_INDEX_SIZE * index.size();
            ByteBuffer tail = ByteBuffer.allocate(footerLength + TRAILER_SIZE);
            tail.putInt(index.size());
            for (BlockIndex b : index) {
                tail.putLong(b.firstSeq()).putLong(b.lastSeq()).putLong(b.firstTs()).putLong(b.lastTs())
                        .putLong(b.offset()).putInt(b.length()).putInt(b.rawLength()).putInt(b.entries())
                        .putInt(b.crc32c());
            }
            byte[] sha = bodySha.digest();
            tail.putLong(footerOffset).putInt(footerLength)
                    .putLong(firstSeq).putLong(lastSeq).putLong(firstTs).putLong(lastTs).putLong(count)
                    .put(sha).put(prevChain).put(chain)
                    .putShort((short) FORMAT_VERSION).putShort((short) 0);
            tail.putInt(crc(tail.array(), 0, tail.position()));
            tail.put(END_MAGIC);
            write(tail.array());
            ch.force(true);
            ch.close();
            finished = true;
            HexFormat hex = HexFormat.of();
            return new SegmentTrailer(footerOffset, footerLength, firstSeq, lastSeq, firstTs, lastTs, count,
                    hex.formatHex(sha), hex.formatHex(prevChain), hex.formatHex(chain), position);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot write segment file " + file + ": " + e, Map.of(), e);
        }
    }

    /** Closes the file; an unfinished segment is deleted, since it could never be valid. */
    @Override
    public void close() {
        if (finished) {
            return;
        }
        try {
            ch.close();
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // a leftover partial file has no trailer and is rejected by any reader
        }
    }

    private void flushBlock() throws IOException {
        if (blockEntries == 0) {
            return;
        }
        byte[] raw = Arrays.copyOf(block.array(), block.size());
        byte[] compressed = Zstd.compress(raw, zstdLevel);
        index.add(new BlockIndex(blockFirstSeq, lastSeq, blockFirstTs, lastTs, position, compressed.length,
                raw.length, blockEntries, crc(compressed, 0, compressed.length)));
        writeBody(compressed);
        block.reset();
        blockEntries = 0;
    }

    /** Writes part of the body (header or a block), which the body SHA-256 covers. */
    private void writeBody(byte[] bytes) throws IOException {
        bodySha.update(bytes);
        write(bytes);
    }

    private void write(byte[] bytes) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
            ch.write(buf);
        }
        position += bytes.length;
    }

    static int crc(byte[] bytes, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(bytes, off, len);
        return (int) c.getValue();
    }
}

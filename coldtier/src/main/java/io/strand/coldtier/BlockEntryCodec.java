package io.strand.coldtier;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * How one cold entry is laid out inside an uncompressed segment block, and the log's entry hash
 * chain over exactly those bytes. Stateless.
 *
 * <h2>Layout of one entry (all integers big-endian)</h2>
 * <pre>
 * offset    size      field
 * 0         8         seq u64 (dense inside a block, from the block index's firstSeq)
 * 8         8         ts u64, epoch millis (non-decreasing, inside the block's [firstTs, lastTs])
 * 16        4         keyLen i32; -1 = no key
 * 20        keyLen    key, UTF-8 (absent when keyLen is -1)
 * 20+k      4         dataLen i32 (k = max(keyLen, 0))
 * 24+k      dataLen   data, opaque bytes
 * </pre>
 *
 * <p>Entries sit back to back; a block is these bytes zstd-compressed as one frame. The chain is
 * {@code c(n) = SHA-256(c(n-1) || encoded entry n)} with {@code c(0)} = {@link #CHAIN_START}.
 * Nothing here is a commit point: the block is written inside a segment by {@link SegmentWriter},
 * whose Javadoc has the segment layout and the commit point; {@link #decode} checks every entry
 * against its block index, so a damaged block is {@code CORRUPT}, never a short page.
 */
final class BlockEntryCodec {
    static final int FIXED = 8 + 8 + 4 + 4;
    /** The chain value before a log's first entry. */
    static final byte[] CHAIN_START = new byte[32];

    private BlockEntryCodec() {
    }

    /** A byte buffer whose backing array can be hashed and compressed without a copy. */
    static final class Buf extends ByteArrayOutputStream {
        Buf(int size) {
            super(size);
        }

        byte[] array() {
            return buf;
        }

        void putLong(long v) {
            for (int s = 56; s >= 0; s -= 8) {
                write((int) (v >>> s));
            }
        }

        void putInt(int v) {
            for (int s = 24; s >= 0; s -= 8) {
                write(v >>> s);
            }
        }
    }

    /** Appends the entry's encoding to {@code out}; returns its start offset. */
    static int encode(Entry e, Buf out) {
        int start = out.size();
        out.putLong(e.seq());
        out.putLong(e.ts());
        if (e.key() == null) {
            out.putInt(-1);
        } else {
            byte[] k = e.key().getBytes(StandardCharsets.UTF_8);
            out.putInt(k.length);
            out.write(k, 0, k.length);
        }
        out.putInt(e.data().length);
        out.write(e.data(), 0, e.data().length);
        return start;
    }

    /** {@code SHA-256(prev || bytes[off, off+len))}. */
    static byte[] chain(MessageDigest sha, byte[] prev, byte[] bytes, int off, int len) {
        sha.update(prev);
        sha.update(bytes, off, len);
        return sha.digest();
    }

    /**
     * Decodes a whole uncompressed block, checking every entry against the block's index (dense
     * seqs from firstSeq, non-decreasing ts inside [firstTs, lastTs], exact byte count), and
     * advances {@code chain[0]} over each entry when {@code chain} is not null.
     */
    static List<Entry> decode(byte[] raw, BlockIndex b, String key, int blockNo, MessageDigest sha, byte[][] chain) {
        List<Entry> out = new ArrayList<>(b.entries());
        ByteBuffer in = ByteBuffer.wrap(raw);
        long expect = b.firstSeq();
        long prevTs = b.firstTs();
        try {
            while (in.hasRemaining()) {
                int start = in.position();
                long seq = in.getLong();
                long ts = in.getLong();
                if (seq != expect || ts < prevTs || ts > b.lastTs() || (seq == b.firstSeq() && ts != b.firstTs())) {
                    throw bad(key, b, blockNo, "entry " + seq + " out of order (expected seq " + expect + ")");
                }
                int keyLen = in.getInt();
                String k = null;
                if (keyLen > in.remaining()) {
                    throw bad(key, b, blockNo, "entry " + seq + " has key length " + keyLen);
                }
                if (keyLen >= 0) {
                    byte[] kb = new byte[keyLen];
                    in.get(kb);
                    k = new String(kb, StandardCharsets.UTF_8);
                } else if (keyLen != -1) {
                    throw bad(key, b, blockNo, "entry " + seq + " has key length " + keyLen);
                }
                int dataLen = in.getInt();
                if (dataLen < 0 || dataLen > in.remaining()) {
                    throw bad(key, b, blockNo, "entry " + seq + " has data length " + dataLen);
                }
                byte[] data = new byte[dataLen];
                in.get(data);
                if (chain != null) {
                    chain[0] = chain(sha, chain[0], raw, start, in.position() - start);
                }
                out.add(new Entry(seq, ts, k, data));
                expect++;
                prevTs = ts;
            }
        } catch (java.nio.BufferUnderflowException | NegativeArraySizeException e) {
            throw bad(key, b, blockNo, "entry " + expect + " runs past the end of the block");
        }
        if (out.size() != b.entries() || expect - 1 != b.lastSeq() || prevTs != b.lastTs()) {
            throw bad(key, b, blockNo, "holds " + out.size() + " entries, index says " + b.entries());
        }
        return out;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new StrandException(ErrorCode.INTERNAL, "no SHA-256 in this JVM");
        }
    }

    private static StrandException bad(String key, BlockIndex b, int blockNo, String what) {
        return ColdErrors.corrupt(key, b.firstSeq(), b.lastSeq(), "block " + blockNo + " " + what);
    }
}

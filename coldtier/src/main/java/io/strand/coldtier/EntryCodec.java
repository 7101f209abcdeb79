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
 * How one entry is laid out inside an uncompressed block, and the log's entry hash chain over
 * exactly those bytes. Big-endian: {@code seq u64 | ts u64 | keyLen i32 (-1 = no key) | key UTF-8 |
 * dataLen i32 | data}. Stateless.
 */
final class EntryCodec {
    static final int FIXED = 8 + 8 + 4 + 4;
    /** The chain value before a log's first entry. */
    static final byte[] CHAIN_START = new byte[32];

    private EntryCodec() {
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

package io.strand.logtier;

import io.strand.core.Entry;
import java.util.List;
import net.openhft.chronicle.bytes.Bytes;

/**
 * The layout of one Chronicle excerpt in a log's queue. One excerpt holds one whole append, so a
 * batch becomes visible all at once or not at all (Chronicle publishes an excerpt atomically).
 * A batch of {@code k} entries is followed by {@code k-1} padding excerpts so that every seq owns
 * exactly one queue index: seq → index stays arithmetic within a roll cycle ({@link SeqIndex}).
 *
 * <pre>
 * ENTRIES excerpt                         PADDING excerpt
 * byte    kind = 1                        byte  kind = 2
 * long    firstSeq                        long  seq       (the seq this index slot stands for)
 * long    ts (epoch ms, shared by batch)  long  headSeq   (firstSeq of the ENTRIES excerpt)
 * int     count k ≥ 1
 * byte    flags (bit0: producer present)
 * [utf8   producerId, long producerSeq]
 * k × { byte hasKey, [utf8 key], stopbit n, n bytes data (UTF-8 JSON) }
 * </pre>
 * Commit point: the ENTRIES excerpt's header. A crash before it leaves nothing; a crash among the
 * paddings leaves the data whole and {@link HotLog} writes the missing paddings on the next open.
 */
final class EntryCodec {
    static final byte ENTRIES = 1;
    static final byte PADDING = 2;
    private static final byte HAS_PRODUCER = 1;

    private EntryCodec() {
    }

    /** What the first bytes of an excerpt say, without decoding entries. */
    record Header(byte kind, long firstSeq, long ts, int count, String producerId, long producerSeq, long headSeq) {
        long lastSeq() {
            return kind == ENTRIES ? firstSeq + count - 1 : firstSeq;
        }
    }

    static void writeEntries(Bytes<?> out, long firstSeq, long ts, List<byte[]> data, List<String> keys,
                             String producerId, long producerSeq) {
        out.writeByte(ENTRIES);
        out.writeLong(firstSeq);
        out.writeLong(ts);
        out.writeInt(data.size());
        out.writeByte(producerId == null ? 0 : HAS_PRODUCER);
        if (producerId != null) {
            out.writeUtf8(producerId);
            out.writeLong(producerSeq);
        }
        for (int i = 0; i < data.size(); i++) {
            String key = keys.get(i);
            out.writeByte((byte) (key == null ? 0 : 1));
            if (key != null) {
                out.writeUtf8(key);
            }
            byte[] d = data.get(i);
            out.writeStopBit(d.length);
            out.write(d);
        }
    }

    static void writePadding(Bytes<?> out, long seq, long headSeq) {
        out.writeByte(PADDING);
        out.writeLong(seq);
        out.writeLong(headSeq);
    }

    /** Reads the header; for ENTRIES the input is left at the first entry. */
    static Header readHeader(Bytes<?> in) {
        byte kind = in.readByte();
        if (kind == PADDING) {
            long seq = in.readLong();
            long headSeq = in.readLong();
            return new Header(PADDING, seq, 0, 1, null, 0, headSeq);
        }
        if (kind != ENTRIES) {
            throw new IllegalStateException("unknown excerpt kind " + kind);
        }
        long firstSeq = in.readLong();
        long ts = in.readLong();
        int count = in.readInt();
        byte flags = in.readByte();
        String producerId = null;
        long producerSeq = 0;
        if ((flags & HAS_PRODUCER) != 0) {
            producerId = in.readUtf8();
            producerSeq = in.readLong();
        }
        return new Header(ENTRIES, firstSeq, ts, count, producerId, producerSeq, firstSeq);
    }

    /**
     * Reads the next entry of an ENTRIES excerpt and hands it to {@code sink}, its data copied
     * through the cursor's scratch array (no object per entry); returns its {@link Entry#weight}.
     */
    static int readEntry(Bytes<?> in, long seq, long ts, ReadCursors.Cursor cursor, EntrySink sink) {
        String key = in.readByte() != 0 ? in.readUtf8() : null;
        int n = (int) in.readStopBit();
        byte[] scratch = cursor.scratch;
        if (scratch.length < n) {
            scratch = new byte[Math.max(n, scratch.length * 2)];
            cursor.scratch = scratch;
        }
        if (n > 0 && in.read(scratch, 0, n) != n) {
            throw new IllegalStateException("entry " + seq + " is cut short: " + n + " data bytes announced");
        }
        sink.entry(seq, ts, key, scratch, 0, n);
        return Entry.weight(n, key);
    }

    /** Skips the next entry of an ENTRIES excerpt. */
    static void skipEntry(Bytes<?> in) {
        if (in.readByte() != 0) {
            in.readUtf8();
        }
        in.readSkip(in.readStopBit());
    }

    /** Sum of data bytes of the remaining entries of an ENTRIES excerpt (for the bytes counter on recovery). */
    static long dataBytes(Bytes<?> in, int count) {
        long total = 0;
        for (int i = 0; i < count; i++) {
            if (in.readByte() != 0) {
                in.readUtf8();
            }
            int n = (int) in.readStopBit();
            in.readSkip(n);
            total += n;
        }
        return total;
    }
}

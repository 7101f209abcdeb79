package io.strand.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Every write-ahead record type and the layout of its payload: the one place a record's type byte
 * is defined, for the stores that log records ({@link Writers.Commit#log}), the replayers they
 * register ({@link Writers#onReplay}) and txn commit records ({@link TxnIntents}). Stateless.
 *
 * <p>A record is framed by the group that holds it ({@link WalSegment}: {@code int} length of type
 * plus payload, one type byte, the payload); this class defines what follows the type byte.
 * Integers are big-endian. A <em>keyed</em> payload starts with its owner's key:
 * <pre>
 * keyed payload
 * offset  bytes  field
 * 0       2      k = key length (unsigned; UTF-8 bytes of "ws/name")
 * 2       k      key: workspace, '/', log or doc name
 * 2+k     ...    body (the rest of the payload)
 * </pre>
 *
 * <pre>
 * type  name        payload                                           replay (idempotent)
 * 1     LOG_APPEND  keyed "ws/log", body = the append's ENTRIES       a batch whose seqs the log's
 *                   excerpt exactly as stored in the log's hot queue  queue already holds is skipped
 *                   (logtier's excerpt codec, format 2, with its CRC)
 * 2     LOG_DELETE  keyed "ws/log", empty body                        forgets the log's hot files
 *                                                                     and name if still there
 * 3     DOC_CHANGE  a doc journal excerpt, whole (docstore's          PUT: a doc already at or
 *                   DocJournal: PUT or DELETE, version, "ws/doc",     past its version skips it;
 *                   value, CRC32C); not keyed: the key is inside      DELETE: a doc already gone
 * </pre>
 * Type bytes are stored in every segment and txn slot: a number is never reused for another
 * layout, and a new type needs a replayer registered before {@link WriteAheadLog#recover} (an
 * unknown type refuses the start as {@code corrupt}).
 */
public final class WalRecordType {
    /** A log append; payload {@link #keyed} by {@code "ws/log"}, body the stored excerpt. */
    public static final byte LOG_APPEND = 1;
    /** A log delete; payload {@link #keyed} by {@code "ws/log"}, empty body. */
    public static final byte LOG_DELETE = 2;
    /** A doc change; payload the whole doc journal excerpt (not keyed). */
    public static final byte DOC_CHANGE = 3;

    private WalRecordType() {
    }

    /** The type's name for messages, e.g. {@code LOG_APPEND}, or {@code unknown type 9}. */
    public static String name(byte type) {
        return switch (type) {
            case LOG_APPEND -> "LOG_APPEND";
            case LOG_DELETE -> "LOG_DELETE";
            case DOC_CHANGE -> "DOC_CHANGE";
            default -> "unknown type " + type;
        };
    }

    /** A keyed payload: {@code key} ({@code "ws/name"}) then {@code body}; read back with {@link #key} and {@link #rest}. */
    public static byte[] keyed(String key, byte[] body) {
        return keyed(key, body.length, (into, offset) -> System.arraycopy(body, 0, into, offset, body.length));
    }

    /** As {@link #keyed(String, byte[])}, the body copied in by {@code body} (one array, one copy). */
    public static byte[] keyed(String key, int bodyLength, BodyCopier body) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        byte[] payload = new byte[2 + k.length + bodyLength];
        ByteBuffer.wrap(payload).putShort((short) k.length).put(k);
        body.copyInto(payload, 2 + k.length);
        return payload;
    }

    /** Copies a payload's body into {@code into} at {@code offset}. */
    @FunctionalInterface
    public interface BodyCopier {
        void copyInto(byte[] into, int offset);
    }

    /** Reads the key of a {@link #keyed} payload, leaving {@code payload} at the body. */
    public static String key(ByteBuffer payload) {
        byte[] k = new byte[Short.toUnsignedInt(payload.getShort())];
        payload.get(k);
        return new String(k, StandardCharsets.UTF_8);
    }

    /** The rest of {@code payload} as an array (a keyed payload's body once {@link #key} has read the key). */
    public static byte[] rest(ByteBuffer payload) {
        byte[] body = new byte[payload.remaining()];
        payload.get(body);
        return body;
    }
}

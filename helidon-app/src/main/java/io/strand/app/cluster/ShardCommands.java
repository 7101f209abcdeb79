package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.core.Wire;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The bytes of one replicated write (a command in a shard's Raft entry) and of its reply. Written
 * by the node that took the request, read by every replica's {@link StoresEngine}; the reply is
 * written by the leader's replica and read by the node that proposed it. Stateless.
 *
 * <p>All integers big-endian ({@link DataOutputStream}); {@code str} = u32 length + UTF-8 bytes;
 * {@code opt<T>} = u8 0 (absent) or 1 followed by T.
 * <pre>
 * command  := u8 type, body
 *   1 append     str ws, str log, u32 n, n × (u32 len, data bytes (JSON), opt&lt;str&gt; key),
 *                opt&lt;i64&gt; expectedLastSeq, opt&lt;(str producerId, i64 producerSeq)&gt;
 *   2 doc        str op, str ws, str doc, opt&lt;str&gt; body (JSON)
 *   3 txn        str ws, str body (JSON)
 *   4 deleteLog  str ws, str log
 *   5 coldCovered str ws, str log, i64 coldLast   (step 6 of a roll: proposed by the shard's leader
 *                after its manifest commit; see {@link io.strand.logtier.LogStore#dropCovered})
 *   6 trim       str ws, str log, i64 before   (SPEC §12, a client's: refused past head+1)
 *   7 trimToPolicy str ws, str log, i64 before (the leader's retention worker: before clamped to head+1)
 *   8 retention  str ws, str log, str policy (JSON: maxAgeSeconds, maxEntries, maxBytes, each null = unlimited)
 *   9 coldDeleted str ws, str log, i64 generation (the shard's leader emptied a deleted log's shared manifest
 *                at that generation; see {@link io.strand.logtier.LogStore#coldDeleted})
 *  10 ds         str ws, u32 n, n bytes (a Durable Streams write, in the endpoint's own format: {@code ds/DsCall})
 * reply    := u8 0 (ok), result | u8 1 (error), error ({@link Wire}: str code (SPEC §2 wire code), str message, str extras (JSON object))
 *   append result   i64 firstSeq, i64 lastSeq, i64 ts, u8 duplicate
 *   doc/txn result  str reply (JSON object)
 *   deleteLog       u8 existed
 *   coldCovered     u32 hot files the answering replica dropped
 *   trim, trimToPolicy  i64 first, i64 head
 *   retention, coldDeleted  (nothing)
 *   ds              the rest of the reply: the endpoint's answer ({@code ds/DsAnswer}; a refused request is an answer)
 * </pre>
 * A command is committed when its Raft entry is (a majority of the shard's replicas hold it); it
 * takes effect on each replica when that replica applies the entry.
 */
public final class ShardCommands {
    static final byte APPEND = 1;
    static final byte DOC = 2;
    static final byte TXN = 3;
    static final byte DELETE_LOG = 4;
    static final byte COLD_COVERED = 5;
    static final byte TRIM = 6;
    static final byte TRIM_TO_POLICY = 7;
    static final byte RETENTION = 8;
    static final byte COLD_DELETED = 9;
    static final byte DS = 10;

    private ShardCommands() {
    }

    /**
     * A decoded command; {@code body} is the doc or txn request (a retention command's policy),
     * {@code append} the append, {@code seq} coldCovered's coldLast, a trim's before or coldDeleted's generation,
     * {@code call} a ds command's call.
     */
    public record Command(byte type, String ws, String name, String op, AppendRequest append, JsonNode body, long seq, byte[] call) {
        Command(byte type, String ws, String name, String op, AppendRequest append, JsonNode body, long seq) {
            this(type, ws, name, op, append, body, seq, null);
        }

        Command(byte type, String ws, String name, String op, AppendRequest append, JsonNode body) {
            this(type, ws, name, op, append, body, 0);
        }
    }

    public static byte[] append(String ws, String log, AppendRequest req) {
        int size = 64 + 3 * (ws.length() + log.length());
        for (byte[] d : req.data()) {
            size += 9 + d.length;
        }
        return write(size, out -> {
            out.writeByte(APPEND);
            str(out, ws);
            str(out, log);
            out.writeInt(req.data().size());
            for (int i = 0; i < req.data().size(); i++) {
                byte[] d = req.data().get(i);
                out.writeInt(d.length);
                out.write(d);
                optStr(out, req.keys().get(i));
            }
            optLong(out, req.expectedLastSeq());
            out.writeBoolean(req.producerId() != null);
            if (req.producerId() != null) {
                str(out, req.producerId());
                out.writeLong(req.producerSeq());
            }
        });
    }

    public static byte[] doc(String op, String ws, String doc, JsonNode body) {
        return write(out -> {
            out.writeByte(DOC);
            str(out, op);
            str(out, ws);
            str(out, doc);
            optStr(out, body == null ? null : Json.MAPPER.writeValueAsString(body));
        });
    }

    public static byte[] txn(String ws, JsonNode body) {
        return write(out -> {
            out.writeByte(TXN);
            str(out, ws);
            str(out, Json.MAPPER.writeValueAsString(body));
        });
    }

    public static byte[] deleteLog(String ws, String log) {
        return write(out -> {
            out.writeByte(DELETE_LOG);
            str(out, ws);
            str(out, log);
        });
    }

    public static byte[] coldCovered(String ws, String log, long coldLast) {
        return logAndSeq(COLD_COVERED, ws, log, coldLast);
    }

    /** The commands of one log and one number: coldCovered, trim, trimToPolicy, coldDeleted. */
    private static byte[] logAndSeq(byte type, String ws, String log, long value) {
        return write(out -> {
            out.writeByte(type);
            str(out, ws);
            str(out, log);
            out.writeLong(value);
        });
    }

    /** A trim; {@code toPolicy}: the leader's retention worker decided it (applied clamped to head+1). */
    public static byte[] trim(String ws, String log, long before, boolean toPolicy) {
        return logAndSeq(toPolicy ? TRIM_TO_POLICY : TRIM, ws, log, before);
    }

    public static byte[] retention(String ws, String log, RetentionPolicy policy) {
        return write(out -> {
            out.writeByte(RETENTION);
            str(out, ws);
            str(out, log);
            str(out, Json.MAPPER.writeValueAsString(policy));
        });
    }

    public static byte[] coldDeleted(String ws, String log, long generation) {
        return logAndSeq(COLD_DELETED, ws, log, generation);
    }

    /** Decodes a command; a command that does not decode is a bug or corruption, never a request error. */
    public static byte[] ds(String ws, byte[] call) {
        return write(16 + call.length, out -> {
            out.writeByte(DS);
            str(out, ws);
            out.writeInt(call.length);
            out.write(call);
        });
    }

    /** A ds command's reply: the endpoint's answer bytes (or the error the proposal failed with, thrown). */
    public static byte[] readDs(byte[] reply) {
        return read(reply, DataInputStream::readAllBytes);
    }

    /** A ds command's reply around the endpoint's answer. */
    public static byte[] dsReply(byte[] answer) {
        return write(1 + answer.length, out -> {
            out.writeByte(0);
            out.write(answer);
        });
    }

    public static Command read(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte type = in.readByte();
            return switch (type) {
                case APPEND -> {
                    String ws = str(in);
                    String log = str(in);
                    int n = in.readInt();
                    List<byte[]> data = new ArrayList<>(n);
                    List<String> keys = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        byte[] d = new byte[in.readInt()];
                        in.readFully(d);
                        data.add(d);
                        keys.add(optStr(in));
                    }
                    Long expected = in.readBoolean() ? in.readLong() : null;
                    String producerId = null;
                    Long producerSeq = null;
                    if (in.readBoolean()) {
                        producerId = str(in);
                        producerSeq = in.readLong();
                    }
                    yield new Command(type, ws, log, null, new AppendRequest(data, keys, expected, producerId, producerSeq), null);
                }
                case DOC -> {
                    String op = str(in);
                    String ws = str(in);
                    String doc = str(in);
                    String body = optStr(in);
                    yield new Command(type, ws, doc, op, null, body == null ? null : Json.MAPPER.readTree(body));
                }
                case TXN -> {
                    String ws = str(in);
                    yield new Command(type, ws, null, null, null, Json.MAPPER.readTree(str(in)));
                }
                case DELETE_LOG -> new Command(type, str(in), str(in), null, null, null);
                case COLD_COVERED, TRIM, TRIM_TO_POLICY, COLD_DELETED -> new Command(type, str(in), str(in), null, null, null, in.readLong());
                case RETENTION -> new Command(type, str(in), str(in), null, null, Json.MAPPER.readTree(str(in)));
                case DS -> new Command(type, str(in), null, null, null, null, 0, in.readNBytes(in.readInt()));
                default -> throw new IllegalStateException("unknown replicated command type " + type);
            };
        } catch (IOException e) {
            throw new UncheckedIOException("a replicated command does not decode", e);
        }
    }

    public static byte[] appendReply(AppendResult r) {
        return write(out -> {
            out.writeByte(0);
            out.writeLong(r.firstSeq());
            out.writeLong(r.lastSeq());
            out.writeLong(r.ts());
            out.writeBoolean(r.duplicate());
        });
    }

    public static byte[] jsonReply(ObjectNode reply) {
        return write(out -> {
            out.writeByte(0);
            str(out, Json.MAPPER.writeValueAsString(reply));
        });
    }

    public static byte[] booleanReply(boolean value) {
        return write(out -> {
            out.writeByte(0);
            out.writeBoolean(value);
        });
    }

    public static byte[] countReply(int count) {
        return write(out -> {
            out.writeByte(0);
            out.writeInt(count);
        });
    }

    public static byte[] trimReply(Retention.Trimmed t) {
        return write(out -> {
            out.writeByte(0);
            out.writeLong(t.first());
            out.writeLong(t.head());
        });
    }

    public static Retention.Trimmed readTrimmed(byte[] reply) {
        return read(reply, in -> new Retention.Trimmed(in.readLong(), in.readLong()));
    }

    public static byte[] emptyReply(Object ignored) {
        return new byte[] {0};
    }

    /** Throws the error the replica answered, if it did. */
    public static void readEmpty(byte[] reply) {
        read(reply, in -> null);
    }

    /** A retention command's policy. */
    static RetentionPolicy policy(Command c) {
        try {
            return Json.MAPPER.treeToValue(c.body(), RetentionPolicy.class);
        } catch (IOException e) {
            throw new UncheckedIOException("a replicated retention policy does not decode", e);
        }
    }

    public static int readCount(byte[] reply) {
        return read(reply, DataInputStream::readInt);
    }

    public static byte[] errorReply(StrandException e) {
        return write(out -> {
            out.writeByte(1);
            Wire.error(out, e);
        });
    }

    /** The append's result (with {@code durable} as given), or the error the replica answered, thrown. */
    public static AppendResult readAppend(byte[] reply, String durable) {
        return read(reply, in -> new AppendResult(in.readLong(), in.readLong(), in.readLong(), durable, in.readBoolean()));
    }

    public static ObjectNode readJson(byte[] reply) {
        return read(reply, in -> (ObjectNode) Json.MAPPER.readTree(str(in)));
    }

    public static boolean readBoolean(byte[] reply) {
        return read(reply, DataInputStream::readBoolean);
    }

    /** The reply's result, read by {@code ok}; the error a replica answered, thrown. */
    private static <T> T read(byte[] reply, Wire.Reader<T> ok) {
        return Wire.read(reply, "a replicated reply", in -> {
            if (in.readByte() == 0) {
                return ok.read(in);
            }
            throw Wire.error(in);
        });
    }

    private static byte[] write(Wire.Writer w) {
        return Wire.bytes(256, w);
    }

    private static byte[] write(int sizeHint, Wire.Writer w) {
        return Wire.bytes(sizeHint, w);
    }

    private static void str(DataOutputStream out, String s) throws IOException {
        Wire.str(out, s);
    }

    private static void optStr(DataOutputStream out, String s) throws IOException {
        out.writeBoolean(s != null);
        if (s != null) {
            str(out, s);
        }
    }

    private static void optLong(DataOutputStream out, Long v) throws IOException {
        out.writeBoolean(v != null);
        if (v != null) {
            out.writeLong(v);
        }
    }

    private static String str(DataInputStream in) throws IOException {
        return Wire.str(in);
    }

    private static String optStr(DataInputStream in) throws IOException {
        return in.readBoolean() ? str(in) : null;
    }
}

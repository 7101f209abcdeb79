package io.strand.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Stateless: the pieces the byte formats of replicated commands and their answers share (a
 * cluster's shard commands, a Durable Streams call and answer), each documented by the byte table
 * of the format that uses it. All integers big-endian ({@link DataOutputStream}).
 * <pre>
 * str   := u32 length, UTF-8 bytes
 * error := str code (SPEC §2 wire code), str message, str extras (JSON object)
 * </pre>
 */
public final class Wire {
    private Wire() {
    }

    /** Writes a format's fields. */
    public interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    /** Reads a format's fields. */
    public interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    /**
     * {@code w}'s bytes, written into a buffer of {@code sizeHint} bytes to start with (a batch of 100
     * entries is about 27 KiB, which from 256 bytes would take seven doublings, each a copy).
     */
    public static byte[] bytes(int sizeHint, Writer w) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(sizeHint);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            w.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** {@code bytes} read by {@code r}; bytes that do not decode are an {@link UncheckedIOException} naming {@code what}. */
    public static <T> T read(byte[] bytes, String what, Reader<T> r) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            return r.read(in);
        } catch (IOException e) {
            throw new UncheckedIOException(what + " does not decode", e);
        }
    }

    public static void str(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    public static String str(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A request error as {@code error}: what every replica answers alike. */
    public static void error(DataOutputStream out, StrandException e) throws IOException {
        str(out, e.code().wire());
        str(out, e.getMessage() == null ? "" : e.getMessage());
        str(out, Json.MAPPER.writeValueAsString(e.extras()));
    }

    /** An {@code error} read back (an unknown code reads as {@code internal}). */
    @SuppressWarnings("unchecked")
    public static StrandException error(DataInputStream in) throws IOException {
        ErrorCode code = ErrorCode.ofWire(str(in));
        String message = str(in);
        Map<String, Object> extras = Json.MAPPER.readValue(str(in), LinkedHashMap.class);
        return new StrandException(code, message, extras);
    }
}

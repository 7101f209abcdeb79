package io.strand.app.ds;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Built by the one thread that applies a {@link DsCall}, immutable once {@link #sent}: the answer to
 * a Durable Streams write, its status and protocol headers, or the request error it was refused with
 * (with the headers set before the refusal, such as the current {@code Producer-Epoch}). On a cluster
 * the leader's replica writes it and the node that took the request reads it and answers.
 *
 * <p>Bytes, big-endian; {@code str} = u32 length + UTF-8 bytes:
 * <pre>
 * answer := u16 status, u16 n, n × (str header name, str value),
 *           u8 0 | u8 1, str code (SPEC §2 wire code), str message, str extras (JSON object)
 * </pre>
 */
final class DsAnswer {
    private final Map<String, String> headers = new LinkedHashMap<>();
    private int status;
    private StrandException error;

    void header(HeaderName name, String value) {
        headers.put(name.defaultCase(), value);
    }

    /** The answer is complete with {@code s}. */
    void send(Status s) {
        status = s.code();
    }

    int status() {
        return status;
    }

    boolean sent() {
        return status != 0;
    }

    /** Refused with a request error (4xx), keeping the headers set so far. */
    DsAnswer refuse(StrandException e) {
        error = e;
        status = e.code().httpStatus();
        return this;
    }

    /** Writes the answer on the HTTP response. */
    void writeTo(ServerResponse res) {
        headers.forEach((n, v) -> res.header(HeaderNames.create(n), v));
        if (error != null) {
            HttpIo.error(res, error);
        } else {
            res.status(Status.create(status)).send();
        }
    }

    byte[] bytes() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(256);
        try (DataOutputStream out = new DataOutputStream(buf)) {
            out.writeShort(status);
            out.writeShort(headers.size());
            for (Map.Entry<String, String> h : headers.entrySet()) {
                DsCall.str(out, h.getKey());
                DsCall.str(out, h.getValue());
            }
            out.writeByte(error == null ? 0 : 1);
            if (error != null) {
                DsCall.str(out, error.code().wire());
                DsCall.str(out, error.getMessage() == null ? "" : error.getMessage());
                DsCall.str(out, Json.MAPPER.writeValueAsString(error.extras()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return buf.toByteArray();
    }

    @SuppressWarnings("unchecked")
    static DsAnswer read(byte[] bytes) {
        DsAnswer a = new DsAnswer();
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            a.status = in.readUnsignedShort();
            int n = in.readUnsignedShort();
            for (int i = 0; i < n; i++) {
                a.headers.put(DsCall.str(in), DsCall.str(in));
            }
            if (in.readByte() == 1) {
                ErrorCode code = ErrorCode.ofWire(DsCall.str(in));
                String message = DsCall.str(in);
                Map<String, Object> extras = Json.MAPPER.readValue(DsCall.str(in), LinkedHashMap.class);
                a.error = new StrandException(code, message, extras);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("a Durable Streams answer does not decode", e);
        }
        return a;
    }
}

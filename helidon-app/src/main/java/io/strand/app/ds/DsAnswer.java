package io.strand.app.ds;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.http.HttpIo;
import io.strand.core.StrandException;
import io.strand.core.Wire;
import java.util.Map;

/**
 * Built by the one thread that applies a {@link DsCall}, immutable once {@link #sent}: the answer to
 * a Durable Streams write, its status and protocol headers, or the request error it was refused with
 * (with the headers set before the refusal, such as the current {@code Producer-Epoch}). On a cluster
 * the leader's replica writes it and the node that took the request reads it and answers.
 *
 * <p>Bytes, big-endian; {@code str} and {@code error} as {@link Wire} writes them:
 * <pre>
 * answer := u16 status, u16 n, n × (str header name, str value), u8 0 | u8 1, error
 * </pre>
 */
final class DsAnswer {
    private final Map<String, String> headers = new java.util.LinkedHashMap<>();
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
        return Wire.bytes(256, out -> {
            out.writeShort(status);
            out.writeShort(headers.size());
            for (Map.Entry<String, String> h : headers.entrySet()) {
                Wire.str(out, h.getKey());
                Wire.str(out, h.getValue());
            }
            out.writeByte(error == null ? 0 : 1);
            if (error != null) {
                Wire.error(out, error);
            }
        });
    }

    static DsAnswer read(byte[] bytes) {
        return Wire.read(bytes, "a Durable Streams answer", in -> {
            DsAnswer a = new DsAnswer();
            a.status = in.readUnsignedShort();
            int n = in.readUnsignedShort();
            for (int i = 0; i < n; i++) {
                a.headers.put(Wire.str(in), Wire.str(in));
            }
            if (in.readByte() == 1) {
                a.error = Wire.error(in);
            }
            return a;
        });
    }
}

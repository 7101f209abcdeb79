package io.strand.app.ds;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.strand.core.StrandException;
import io.strand.core.Wire;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Immutable: one Durable Streams write (PUT, POST, DELETE; the expiry of a stream, or a read's
 * extension of its sliding TTL) as the
 * stream's state applies it: the target, the protocol headers it reads, the body, and the log name
 * a new stream or fork gets. A single node applies it on the request thread; a cluster node proposes
 * its bytes to the workspace's shard and every replica applies them in log order
 * ({@link DsState#apply}), so the name is chosen once, by the node that took the request.
 *
 * <p>Bytes, big-endian; {@code str} as {@link Wire} writes it (u32 length + UTF-8 bytes):
 * <pre>
 * call := u8 version (1), str method, str ws, str path, str location, str logName,
 *         u16 n, n × (str header name (lower case), str value), u32 body length, body bytes
 * </pre>
 */
record DsCall(String method, String ws, String path, String location, String logName, Map<String, String> headers,
              byte[] body) {
    static final String PUT = "PUT";
    static final String POST = "POST";
    static final String DELETE = "DELETE";
    /** Not an HTTP method: removes the stream if it is past its TTL or Expires-At when applied. */
    static final String EXPIRE = "EXPIRE";
    /** Not an HTTP method: a cluster node's GET of a stream with a sliding TTL, which extends it on every replica. */
    static final String TOUCH = "TOUCH";
    /** Not an HTTP method: a pull-wake subscription's event (the body), appended to its wake stream. */
    static final String WAKE = "WAKE";
    private static final byte VERSION = 1;

    /** The headers a write reads; nothing else of the request travels. */
    private static final List<HeaderName> READ = List.of(HeaderNames.CONTENT_TYPE, DsHeaders.CLOSED, DsHeaders.TTL,
            DsHeaders.EXPIRES_AT, DsHeaders.SEQ, DsHeaders.FORKED_FROM, DsHeaders.FORK_OFFSET, DsHeaders.FORK_SUB_OFFSET,
            DsHeaders.PRODUCER_ID, DsHeaders.PRODUCER_EPOCH, DsHeaders.PRODUCER_SEQ);

    /** The write a request asks for, with {@code body} already read (and size-checked). */
    static DsCall of(ServerRequest req, DsTarget t, byte[] body) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (HeaderName n : READ) {
            req.headers().first(n).ifPresent(v -> headers.put(n.lowerCase(), v));
        }
        String host = req.headers().first(HeaderNames.HOST).orElse("localhost");
        String method = req.prologue().method().text();
        // only a PUT may make a stream; a random name per append would be work on the append path for nothing
        return new DsCall(method, t.ws(), t.path(), "http://" + host + req.path().rawPath(),
                PUT.equals(method) ? DsRegistry.newLogName() : "", headers, body);
    }

    /** The expiry of the stream at {@code path} (proposed by the shard's leader in a cluster). */
    static DsCall expire(String ws, String path) {
        return new DsCall(EXPIRE, ws, path, "", "", Map.of(), new byte[0]);
    }

    /** A pull-wake event ({@code json}) for the wake stream at {@code path} (proposed by the node that holds the subscription). */
    static DsCall wake(String ws, String path, byte[] json) {
        return new DsCall(WAKE, ws, path, "", "", Map.of(), json);
    }

    /** The read of the stream at {@code path} that extends its sliding TTL (proposed by a cluster node before a GET). */
    static DsCall touch(String ws, String path) {
        return new DsCall(TOUCH, ws, path, "", "", Map.of(), new byte[0]);
    }

    DsTarget target() {
        return new DsTarget(ws, path);
    }

    String header(HeaderName name) {
        return headers.get(name.lowerCase());
    }

    boolean closedFlag() {
        String v = header(DsHeaders.CLOSED);
        return v != null && v.trim().equalsIgnoreCase("true");
    }

    Long ttl() {
        String v = header(DsHeaders.TTL);
        if (v == null) {
            return null;
        }
        if (!DsRequests.DECIMAL.matcher(v).matches()) {
            throw StrandException.badRequest("Stream-TTL must be whole seconds without sign or leading zeros, not '" + v + "'");
        }
        return Long.parseLong(v);
    }

    Instant expiresAt() {
        String v = header(DsHeaders.EXPIRES_AT);
        if (v == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(v, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            throw StrandException.badRequest("Stream-Expires-At must be an RFC 3339 timestamp, not '" + v + "'");
        }
    }

    byte[] bytes() {
        return Wire.bytes(128 + body.length, out -> {
            out.writeByte(VERSION);
            for (String s : new String[] {method, ws, path, location, logName}) {
                Wire.str(out, s);
            }
            out.writeShort(headers.size());
            for (Map.Entry<String, String> h : headers.entrySet()) {
                Wire.str(out, h.getKey());
                Wire.str(out, h.getValue());
            }
            out.writeInt(body.length);
            out.write(body);
        });
    }

    static DsCall read(byte[] bytes) {
        return Wire.read(bytes, "a Durable Streams call", in -> {
            byte version = in.readByte();
            if (version != VERSION) {
                throw new IllegalStateException("a Durable Streams call of version " + version + " (this node reads " + VERSION + ")");
            }
            String method = Wire.str(in);
            String ws = Wire.str(in);
            String path = Wire.str(in);
            String location = Wire.str(in);
            String logName = Wire.str(in);
            int n = in.readUnsignedShort();
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                headers.put(Wire.str(in).toLowerCase(Locale.ROOT), Wire.str(in));
            }
            byte[] body = in.readNBytes(in.readInt());
            return new DsCall(method, ws, path, location, logName, headers, body);
        });
    }
}

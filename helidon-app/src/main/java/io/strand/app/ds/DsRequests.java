package io.strand.app.ds;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.strand.core.Json;
import java.util.regex.Pattern;

/**
 * Immutable (the body limit is fixed at start-up), so any request thread uses it: reads the
 * protocol's request headers and bodies, refusing malformed ones with 400 and oversize bodies with
 * 413.
 */
final class DsRequests {
    /** Bodies above the limit but below this are read and discarded before the 413, so clients see the answer. */
    static final long DRAIN_LIMIT = 64L << 20;
    /** Whole numbers as the protocol's headers spell them: no sign, no leading zeros. */
    static final Pattern DECIMAL = Pattern.compile("0|[1-9][0-9]{0,15}");

    private final long maxBodyBytes;

    DsRequests(long maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
    }

    static String header(ServerRequest req, HeaderName name) {
        return req.headers().first(name).orElse(null);
    }

    /** The wake's callback token: callbacks authenticate with it instead of a Strand token. */
    static String wakeToken(ServerRequest req) {
        String v = header(req, HeaderNames.AUTHORIZATION);
        if (v == null || !v.startsWith("Bearer ")) {
            throw new DsFailure(401, "TOKEN_INVALID", "Missing or malformed Authorization header");
        }
        return v.substring(7);
    }

    /** A control API's JSON body ({@code {}} when empty); the protocol's 400 when it is not JSON. */
    JsonNode jsonBody(ServerRequest req) {
        byte[] b = body(req);
        if (b.length == 0) {
            return Json.MAPPER.createObjectNode();
        }
        try {
            return Json.parse(b);
        } catch (RuntimeException e) {
            throw new DsFailure(400, "INVALID_REQUEST", "Invalid JSON body");
        }
    }

    /** The body, refused with 413 past the limit after reading it (up to a bound) so the client sees the answer. */
    byte[] body(ServerRequest req) {
        return io.strand.app.http.HttpIo.body(req, maxBodyBytes, DRAIN_LIMIT);
    }
}

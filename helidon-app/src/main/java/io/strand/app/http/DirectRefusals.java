package io.strand.app.http;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;
import io.helidon.webserver.http.DirectHandlers;
import io.strand.app.ApiErrors;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.Map;

/**
 * The SPEC §2 error body for answers the web server gives before routing (a bad request line, a
 * URI or head over the limits, a body over the payload limit, a refused {@code Content-Encoding},
 * HTTP/1.0): every {@link DirectHandler.EventType} goes through {@link #handle}. Stateless; it only
 * asks the (thread-safe) {@link ConnectionGuard} about the calling connection.
 *
 * <p>Helidon 4.5 answers a head that is cut short or has an illegal method token with a 500
 * "internal error" and a logged stack trace; while {@link ConnectionGuard#readingHead()} those are
 * the client's {@code 400 bad_request} (a 500 past the head stays a 500, logged).
 *
 * <p>Helidon 4.5 refuses an oversized head and an unsupported encoding with a plain 400 whose
 * message alone says why; {@link #REFINED} gives those their own status (431, 415). EdgeErrorsIT
 * pins each message, so a Helidon upgrade that rewords one fails a test, not a client.
 */
public final class DirectRefusals implements DirectHandler {
    /** Helidon's message → the status that names the problem. */
    static final Map<String, Integer> REFINED = Map.of(
            "Header size exceeded", 431,
            "Unsupported content encoding", 415,
            "Content-Encoding header present when content encoding is disabled", 415);
    private static final int MAX_MESSAGE_CHARS = 200;
    private final ConnectionGuard guard;

    private DirectRefusals(ConnectionGuard guard) {
        this.guard = guard;
    }

    /** Handlers for every event type, for {@code WebServer.builder().directHandlers(…)}. */
    public static DirectHandlers all(ConnectionGuard guard) {
        DirectRefusals handler = new DirectRefusals(guard);
        DirectHandlers.Builder builder = DirectHandlers.builder();
        for (EventType type : EventType.values()) {
            builder.addHandler(type, handler);
        }
        return builder.build();
    }

    @Override
    public TransportResponse handle(TransportRequest request, EventType eventType, Status defaultStatus,
                                    ServerResponseHeaders headers, String message) {
        int status = message == null ? defaultStatus.code() : REFINED.getOrDefault(message, defaultStatus.code());
        if (eventType == EventType.INTERNAL_ERROR && guard.readingHead()) {
            // Helidon's catch-all while parsing a head: a client that hung up mid-head or sent an
            // unparsable request line (an illegal method token), not a fault of ours; a 500 would
            // also log a stack trace per such request
            status = 400;
            message = "malformed or incomplete request head";
        }
        StrandException error = ApiErrors.forStatus(status, describe(status, message));
        headers.contentType(MediaTypes.APPLICATION_JSON);
        headers.set(HeaderNames.CACHE_CONTROL, "no-store");
        if (error.code() == ErrorCode.UNSUPPORTED_ENCODING) {
            headers.set(HeaderNames.ACCEPT_ENCODING, "identity"); // RFC 7694: the codings a request body may use
        }
        return TransportResponse.builder()
                .status(Status.create(status))
                .headers(headers)
                .keepAlive(false)
                .entity(ApiErrors.httpBody(error))
                .build();
    }

    private static String describe(int status, String message) {
        return switch (status) {
            case 413 -> "request body too large";
            case 414 -> "request URI too long";
            case 415 -> "unsupported Content-Encoding: send the body without one";
            case 431 -> "request head (headers) too large";
            case 505 -> "HTTP version not supported: use HTTP/1.1";
            default -> message == null || message.isBlank() ? null : truncate(message);
        };
    }

    private static String truncate(String s) {
        return s.length() <= MAX_MESSAGE_CHARS ? s : s.substring(0, MAX_MESSAGE_CHARS) + "…";
    }
}

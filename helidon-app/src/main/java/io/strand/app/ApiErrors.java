package io.strand.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HttpException;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The one place where failures become the SPEC §2 error object, for HTTP and WebSocket alike. */
public final class ApiErrors {
    private static final System.Logger LOG = System.getLogger("strand.api");

    private ApiErrors() {
    }

    /**
     * Unwraps future wrappers and turns anything unexpected into {@code internal} (logged with its
     * stack trace). A web server exception that carries its own status (no route: 404, a bad
     * request the server refused before a handler ran) keeps that status and is not logged: it is
     * the client's mistake, and anyone could fill the log with them.
     */
    public static StrandException classify(Throwable t) {
        Throwable cause = t;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof StrandException se) {
            return se;
        }
        if (cause instanceof IllegalArgumentException iae) {
            return StrandException.badRequest(iae.getMessage());
        }
        if (cause instanceof HttpException he && he.status().code() < 500) {
            return forStatus(he.status().code(), he.getMessage());
        }
        if (cause instanceof RequestException re && re.status().code() < 500) {
            return forStatus(re.status().code(), re.safeMessage() ? re.getMessage() : null);
        }
        LOG.log(System.Logger.Level.ERROR, "unexpected failure", cause);
        return new StrandException(ErrorCode.INTERNAL, "internal error: " + cause.getClass().getSimpleName());
    }

    /**
     * The error for an answer whose status the web server chose (see {@link ErrorCode#forStatus}),
     * with {@code message}, or the status's reason phrase when there is none.
     */
    public static StrandException forStatus(int status, String message) {
        String text = message == null || message.isBlank() ? Status.create(status).reasonPhrase() : message;
        return new StrandException(ErrorCode.forStatus(status), text);
    }

    /** {@code {"code":…,"message":…, …extras}} */
    public static ObjectNode errorObject(StrandException e) {
        ObjectNode error = Json.MAPPER.createObjectNode();
        error.put("code", e.code().wire());
        error.put("message", e.getMessage());
        for (Map.Entry<String, Object> extra : e.extras().entrySet()) {
            error.set(extra.getKey(), Json.MAPPER.valueToTree(extra.getValue()));
        }
        return error;
    }

    public static byte[] httpBody(StrandException e) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.set("error", errorObject(e));
        return Json.bytes(body);
    }

    /** {@code {"id":…,"ok":false,"error":{…}}} */
    public static String socketReply(JsonNode id, StrandException e) {
        ObjectNode reply = Json.MAPPER.createObjectNode();
        reply.set("id", id);
        reply.put("ok", false);
        reply.set("error", errorObject(e));
        return Json.string(reply);
    }
}

package io.strand.app.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ApiErrors;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.RequestJson;
import io.strand.core.StrandException;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** Request and response plumbing every HTTP service shares: bounded JSON bodies, params, replies. */
public final class HttpIo {
    /** The header a cluster node marks the requests it relays or gathers with (the node's id). */
    public static final io.helidon.http.HeaderName FORWARDED_BY = HeaderNames.create("Strand-Forwarded-By");
    private final long maxBodyBytes;

    public HttpIo(long maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
    }

    /** The body as JSON, refusing more than the body limit with 413 before reading it all. */
    public JsonNode json(ServerRequest req) {
        return Json.parse(jsonBody(req));
    }

    /** An append's body as {@link #json} reads it, its payloads kept as the client's bytes ({@link RequestJson}). */
    public JsonNode appendJson(ServerRequest req) {
        return RequestJson.parse(jsonBody(req));
    }

    private byte[] jsonBody(ServerRequest req) {
        var length = req.headers().contentLength();
        if (length.isPresent() && length.getAsLong() > maxBodyBytes) {
            throw StrandException.tooLarge("request body is " + length.getAsLong() + " bytes; the limit is " + maxBodyBytes);
        }
        if (!req.content().hasEntity()) {
            throw StrandException.badRequest("a JSON body is required");
        }
        return body(req, maxBodyBytes, 0);
    }

    /**
     * The request's body (empty when it has none) of at most {@code max} bytes. Past that it reads and
     * drops up to {@code drain} more bytes, so a client that sends the whole body before it reads sees
     * the answer instead of a reset, and answers {@code 413}.
     */
    public static byte[] body(ServerRequest req, long max, long drain) {
        if (!req.content().hasEntity()) {
            return new byte[0];
        }
        try (InputStream in = req.content().inputStream()) {
            byte[] b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, max + 1));
            if (b.length > max) {
                long left = drain;
                byte[] sink = new byte[64 * 1024];
                int n;
                while (left > 0 && (n = in.read(sink)) > 0) {
                    left -= n;
                }
                throw StrandException.tooLarge("request body exceeds the limit of " + max + " bytes");
            }
            return b;
        } catch (IOException e) {
            throw StrandException.badRequest("cannot read the request body: " + e.getMessage());
        }
    }

    public static String param(ServerRequest req, String name) {
        return req.query().contains(name) ? req.query().get(name) : null;
    }

    /**
     * Refuses a query parameter other than {@code allowed} with {@code 400 bad_request}: on a request
     * that deletes, a misspelt condition ({@code ?expectversion=}) must not make it unconditional.
     */
    public static void onlyParams(ServerRequest req, java.util.Set<String> allowed) {
        for (String name : req.query().names()) {
            if (!allowed.contains(name)) {
                throw StrandException.badRequest("unknown query parameter '" + name + "'"
                        + (allowed.isEmpty() ? "; this request takes none" : "; allowed: " + String.join(", ", new java.util.TreeSet<>(allowed))));
            }
        }
    }

    public static String path(ServerRequest req, String name) {
        return req.path().pathParameters().get(name);
    }

    /** The authenticated caller, checked for {@code scope} on {@code ws}. */
    public static Principal require(ServerRequest req, String ws, Scope scope) {
        Principal p = req.context().get(Principal.class)
                .orElseThrow(() -> new StrandException(ErrorCode.UNAUTHORIZED, "missing bearer token"));
        p.require(ws, scope);
        return p;
    }

    /** As {@link #require}, for a workspace's docs ({@link Principal#requireDocs}). */
    public static Principal requireDocs(ServerRequest req, String ws, Scope scope) {
        Principal p = req.context().get(Principal.class)
                .orElseThrow(() -> new StrandException(ErrorCode.UNAUTHORIZED, "missing bearer token"));
        p.requireDocs(ws, scope);
        return p;
    }

    public static void send(ServerResponse res, int status, String json) {
        send(res, status, json.getBytes(StandardCharsets.UTF_8));
    }

    public static void send(ServerResponse res, int status, byte[] json) {
        res.status(Status.create(status));
        res.headers().contentType(MediaTypes.APPLICATION_JSON);
        res.headers().set(HeaderNames.CACHE_CONTROL, "no-store");
        res.send(json);
    }

    public static void ok(ServerResponse res, Object body) {
        send(res, 200, Json.bytes(body));
    }

    public static void error(ServerResponse res, Throwable t) {
        if (res.isSent()) {
            return;
        }
        if (t instanceof io.helidon.http.HttpException h && h.status().code() < 400) {
            // not an error: the static content's "304 Not Modified" (a browser's reload of the console) comes
            // as an exception, with its ETag / Last-Modified already on the response
            res.status(h.status()).send();
            return;
        }
        StrandException e = ApiErrors.classify(t);
        send(res, e.code().httpStatus(), ApiErrors.httpBody(e));
    }
}

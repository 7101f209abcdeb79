package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The Strand HTTP API for the CLI over the JDK's {@link HttpURLConnection}: JSON in, JSON out, and every
 * error reply turned into a {@link CliFailure} carrying the server's code and message.
 * Thread-safe (immutable; each request opens its own connection object).
 */
final class StrandClient {
    private static final int CONNECT_TIMEOUT_MILLIS = 10_000;
    private final String base;
    private final String token;

    private final Duration timeout;
    /** Said after a 401 when no token was sent: where the CLI looked for one. */
    private final String noTokenHint;

    StrandClient(String baseUrl, String token) {
        this(baseUrl, token, Duration.ofSeconds(60));
    }

    StrandClient(String baseUrl, String token, String noTokenHint) {
        this(baseUrl, token, Duration.ofSeconds(60), noTokenHint);
    }

    StrandClient(String baseUrl, String token, Duration timeout) {
        this(baseUrl, token, timeout, null);
    }

    private StrandClient(String baseUrl, String token, Duration timeout, String noTokenHint) {
        this.base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.token = token;
        this.timeout = timeout;
        this.noTokenHint = noTokenHint;
    }

    String token() {
        return token;
    }

    /** The socket URL of a workspace: {@code ws://host:port/v1/ws/{ws}/socket}. */
    String socketUrl(String ws) {
        return base.replaceFirst("^http", "ws") + "/v1/ws/" + segment(ws) + "/socket";
    }

    /**
     * A server's base URL as given on a command line ({@code http://HOST:PORT}, trailing slashes
     * dropped), for the option named {@code option} in the error.
     *
     * @throws IllegalArgumentException when it is not one (a path, no scheme, spaces)
     */
    static String baseUrl(String given, String option) {
        String url = given.strip().replaceAll("/+$", "");
        if (!url.matches("https?://[^/\\s]+")) {
            throw new IllegalArgumentException(option + ": '" + given + "' is not a server's base URL (http://HOST:PORT)");
        }
        return url;
    }

    /** The WebSocket URL of workspace {@code ws} on the server at {@code baseUrl}. */
    static String socketUrl(String baseUrl, String ws) {
        return baseUrl.replaceFirst("^http", "ws") + "/v1/ws/" + segment(ws) + "/socket";
    }

    /** A server's {@code GET /observe/metrics} (Prometheus text; open without a token), asked with a 5 s timeout. */
    static String metrics(String baseUrl) {
        return new StrandClient(baseUrl, null, Duration.ofSeconds(5)).text("/observe/metrics");
    }

    /** A path segment, percent-encoded (the server still validates the name). */
    static String segment(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Every name of a paged list route ({@code …/logs}, {@code …/docs}), in order: follows {@code after}
     * until the list ends or {@code limit} names (0 = all) were seen; {@code each} gets each name with
     * the reply page it came in.
     */
    com.fasterxml.jackson.databind.node.ArrayNode listAll(String route, String field, String after, int limit,
                                                          java.util.function.BiConsumer<JsonNode, JsonNode> each) {
        com.fasterxml.jackson.databind.node.ArrayNode all = Json.MAPPER.createArrayNode();
        String sep = route.contains("?") ? "&" : "?";
        String cursor = after;
        while (true) {
            int page = limit > 0 ? Math.min(1000, limit - all.size()) : 1000;
            JsonNode reply = get(route + sep + "limit=" + page + (cursor == null ? "" : "&after=" + segment(cursor)));
            for (JsonNode name : reply.path(field)) {
                all.add(name);
                each.accept(reply, name);
            }
            cursor = reply.hasNonNull("after") ? reply.get("after").asText() : null;
            if (cursor == null || reply.path(field).isEmpty() || (limit > 0 && all.size() >= limit)) {
                return all;
            }
        }
    }

    JsonNode get(String path) {
        return send("GET", path, null);
    }

    /** {@code GET path} of a text resource (e.g. {@code /observe/metrics}); a status other than 2xx fails as {@link #get} does. */
    String text(String path) {
        Exchange x = exchange("GET", path, null, "text/plain");
        if (x.status / 100 == 2) {
            return new String(x.body, StandardCharsets.UTF_8);
        }
        throw failure(x, null);
    }

    JsonNode delete(String path) {
        return send("DELETE", path, null);
    }

    JsonNode post(String path, JsonNode body) {
        return send("POST", path, Json.bytes(body));
    }

    JsonNode put(String path, JsonNode body) {
        return send("PUT", path, Json.bytes(body));
    }

    /**
     * One request over {@link HttpURLConnection} (kept-alive connections are pooled by the JDK). Not
     * the {@code java.net.http} client: building one loads its selector thread and the default TLS
     * context with every trusted certificate, about half the CPU of a short CLI command.
     */
    private JsonNode send(String method, String path, byte[] body) {
        Exchange x = exchange(method, path, body, "application/json");
        JsonNode parsed = null;
        try {
            parsed = x.body.length == 0 ? Json.MAPPER.createObjectNode() : Json.parse(x.body);
        } catch (StrandException notJson) {
            // reported below
        }
        if (x.status / 100 == 2 && parsed != null) {
            return parsed;
        }
        throw failure(x, parsed);
    }

    /** A reply's status and body. */
    private record Exchange(int status, byte[] body) {
    }

    private Exchange exchange(String method, String path, byte[] body, String accept) {
        int status;
        byte[] reply;
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(base + path).toURL().openConnection();
            c.setRequestMethod(method);
            c.setConnectTimeout(CONNECT_TIMEOUT_MILLIS);
            c.setReadTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            c.setRequestProperty("Content-Type", "application/json");
            c.setRequestProperty("Accept", accept);
            if (token != null) {
                c.setRequestProperty("Authorization", "Bearer " + token);
            }
            if (body != null) {
                c.setDoOutput(true);
                c.setFixedLengthStreamingMode(body.length);
                try (OutputStream out = c.getOutputStream()) {
                    out.write(body);
                }
            }
            status = c.getResponseCode();
            try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
                reply = in == null ? new byte[0] : in.readAllBytes();
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new CliFailure("unreachable", 0, "cannot reach " + base + " (" + describe(e) + ")");
        }
        return new Exchange(status, reply);
    }

    /** The failure a reply that is not a success stands for: the server's error code when its body is one. */
    private CliFailure failure(Exchange x, JsonNode parsed) {
        int status = x.status;
        byte[] reply = x.body;
        String hint = status == 401 && token == null && noTokenHint != null ? " (" + noTokenHint + ")" : "";
        if (parsed != null && parsed.path("error").has("code")) {
            return new CliFailure(parsed.path("error").path("code").asText(), status,
                    parsed.path("error").path("message").asText() + hint);
        }
        String text = new String(reply, StandardCharsets.UTF_8).strip();
        return new CliFailure("http_" + status, status,
                (text.isEmpty() ? "HTTP " + status : text.length() > 200 ? text.substring(0, 200) + "…" : text) + hint);
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : ": " + m);
    }
}

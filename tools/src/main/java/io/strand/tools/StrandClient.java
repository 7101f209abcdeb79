package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The Strand HTTP API for the CLI over the JDK {@link HttpClient}: JSON in, JSON out, and every
 * error reply turned into a {@link CliFailure} carrying the server's code and message.
 * Thread-safe (the HttpClient is).
 */
final class StrandClient {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String base;
    private final String token;

    private final Duration timeout;

    StrandClient(String baseUrl, String token) {
        this(baseUrl, token, Duration.ofSeconds(60));
    }

    StrandClient(String baseUrl, String token, Duration timeout) {
        this.base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.token = token;
        this.timeout = timeout;
    }

    String token() {
        return token;
    }

    /** The socket URL of a workspace: {@code ws://host:port/v1/ws/{ws}/socket}. */
    String socketUrl(String ws) {
        return base.replaceFirst("^http", "ws") + "/v1/ws/" + segment(ws) + "/socket";
    }

    /** A path segment, percent-encoded (the server still validates the name). */
    static String segment(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    JsonNode get(String path) {
        return send(request(path).GET());
    }

    JsonNode delete(String path) {
        return send(request(path).DELETE());
    }

    JsonNode post(String path, JsonNode body) {
        return send(request(path).POST(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body))));
    }

    JsonNode put(String path, JsonNode body) {
        return send(request(path).PUT(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body))));
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private JsonNode send(HttpRequest.Builder b) {
        HttpResponse<byte[]> r;
        try {
            r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new CliFailure("unreachable", 0, "cannot reach " + base + " (" + describe(e) + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure("interrupted", 0, "interrupted");
        }
        JsonNode body = null;
        try {
            body = r.body().length == 0 ? Json.MAPPER.createObjectNode() : Json.parse(r.body());
        } catch (StrandException notJson) {
            // reported below
        }
        if (r.statusCode() / 100 == 2 && body != null) {
            return body;
        }
        if (body != null && body.path("error").has("code")) {
            throw new CliFailure(body.path("error").path("code").asText(), r.statusCode(),
                    body.path("error").path("message").asText());
        }
        String text = new String(r.body(), StandardCharsets.UTF_8).strip();
        throw new CliFailure("http_" + r.statusCode(), r.statusCode(),
                text.isEmpty() ? "HTTP " + r.statusCode() : text.length() > 200 ? text.substring(0, 200) + "…" : text);
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : ": " + m);
    }
}

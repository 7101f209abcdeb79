package io.strand.app.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Stateless: Durable Streams requests to one server ({@code base}, e.g. {@code http://127.0.0.1:8080}) with any headers. */
public final class DsClient {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    public DsClient(String base) {
        this.base = base;
    }

    /** An answer: status, body, and the protocol headers. */
    public record Reply(int status, byte[] body, HttpResponse<byte[]> raw) {
        public String header(String name) {
            return raw.headers().firstValue(name).orElse(null);
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** {@code method path} with {@code body} (none when null) and {@code headers} as name, value pairs; 20 s at most. */
    public Reply send(String method, String path, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        try {
            HttpResponse<byte[]> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Reply(r.statusCode(), r.body(), r);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(method + " " + base + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

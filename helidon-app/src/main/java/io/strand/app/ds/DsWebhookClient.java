package io.strand.app.ds;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

/**
 * Thread-safe (the JDK's HTTP client; its callbacks run on virtual threads): the subscriptions'
 * one relationship with webhook receivers, a signed POST of a wake notification, and the rule for
 * which webhook URLs are accepted.
 */
final class DsWebhookClient implements AutoCloseable {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
            .executor(Executors.newVirtualThreadPerTaskExecutor()).build();
    private final DsWakeTokens tokens;

    DsWebhookClient(DsWakeTokens tokens) {
        this.tokens = tokens;
    }

    /** POSTs a notification body, signed now, to {@code url}; completes with the receiver's answer or the failure. */
    CompletableFuture<HttpResponse<byte[]>> send(String url, byte[] body) {
        String signature = tokens.signature(body);
        HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json").header("webhook-signature", signature)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray());
    }

    /** Why a webhook URL is refused (null when accepted): https to public hosts, or http to localhost / 127.x for development. */
    static String rejectUrl(String raw) {
        URI uri;
        try {
            uri = URI.create(raw);
        } catch (IllegalArgumentException e) {
            return "webhook.url must be a valid URL";
        }
        String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
        boolean localDev = host.equals("localhost") || host.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
        if ("http".equals(uri.getScheme())) {
            return localDev ? null : "http webhook URLs are only allowed for localhost or 127.0.0.x";
        }
        if (!"https".equals(uri.getScheme()) || host.isEmpty()) {
            return "webhook.url must use https";
        }
        if (host.equals("localhost")) {
            return "localhost webhook URLs must use http for dev";
        }
        if (host.matches("(10|127|0)\\..*|172\\.(1[6-9]|2\\d|3[01])\\..*|192\\.168\\..*|169\\.254\\..*") || host.startsWith("[")) {
            return "webhook.url must not target private, link-local or IPv6 literal hosts";
        }
        return null;
    }

    @Override
    public void close() {
        http.close();
    }
}

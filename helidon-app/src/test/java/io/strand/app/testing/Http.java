package io.strand.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.ChildJvm;
import io.strand.core.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

/** A small JSON client over the JDK HttpClient for tests. */
public final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    private final String token;
    private final Duration timeout;
    /**
     * True for the default timeout, which no healthy server comes near: a request past it dumps the
     * threads of every child JVM running ({@link ChildJvm#dumpThreadsOfLiveChildren}) and names the
     * files in its exception. A caller that picks its own timeout expects some requests to run past
     * it (a paused or dying node), and gets no dump.
     */
    private final boolean dumpOnTimeout;

    public Http(String base, String token) {
        this(base, token, Duration.ofSeconds(30), true);
    }

    private Http(String base, String token, Duration timeout, boolean dumpOnTimeout) {
        this.base = base;
        this.token = token;
        this.timeout = timeout;
        this.dumpOnTimeout = dumpOnTimeout;
    }

    public Http withToken(String t) {
        return new Http(base, t, timeout, dumpOnTimeout);
    }

    /** The same client with another per-request timeout (a request past it throws, with no thread dump). */
    public Http withTimeout(Duration t) {
        return new Http(base, token, t, false);
    }

    public record Reply(int status, String body) {
        public JsonNode json() {
            return Json.parse(body);
        }

        public String errorCode() {
            return json().path("error").path("code").asText();
        }
    }

    public Reply get(String path) {
        return send(builder(path).GET());
    }

    /**
     * The value of the first sample of metric {@code name} (Prometheus text at {@code /observe/metrics},
     * with or without labels); fails when the server does not list it.
     */
    public double metric(String name) {
        Reply metrics = get("/observe/metrics");
        if (metrics.status() != 200) {
            throw new AssertionError("GET /observe/metrics: " + metrics.status() + " " + metrics.body());
        }
        for (String line : metrics.body().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no " + name + " in " + metrics.body().substring(0, Math.min(500, metrics.body().length())));
    }

    public Reply delete(String path) {
        return send(builder(path).DELETE());
    }

    public Reply post(String path, String body) {
        return send(builder(path).POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    public Reply put(String path, String body) {
        return send(builder(path).PUT(HttpRequest.BodyPublishers.ofString(body)));
    }

    public Reply post(String path, byte[] body) {
        return send(builder(path).POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    private HttpRequest.Builder builder(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
                .header("Content-Type", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private Reply send(HttpRequest.Builder b) {
        try {
            HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body());
        } catch (java.net.http.HttpConnectTimeoutException e) {
            throw new IllegalStateException(e); // no server listening in time: nothing to dump
        } catch (HttpTimeoutException e) {
            if (!dumpOnTimeout) {
                throw new IllegalStateException(e);
            }
            // a server that does not answer: what it waits on is in its threads, not in this stack
            throw new IllegalStateException(e + " after " + timeout + "; " + ChildJvm.dumpThreadsOfLiveChildren(), e);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

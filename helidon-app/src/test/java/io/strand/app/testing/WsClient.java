package io.strand.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real JDK WebSocket client for tests. Frames land in a queue; {@code manualDemand} lets a test
 * read slowly (one frame at a time, on request) to exercise server-side pacing.
 */
public final class WsClient implements AutoCloseable {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    public final BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();
    public final CompletableFuture<Integer> closed = new CompletableFuture<>();
    /** The server's close frame's reason; set before {@link #closed} completes. */
    public volatile String closeReason;
    private final WebSocket socket;
    private final boolean manualDemand;
    private final StringBuilder partial = new StringBuilder();
    private final AtomicLong ids = new AtomicLong();

    private WsClient(String url, String token, boolean manualDemand) {
        this.manualDemand = manualDemand;
        WebSocket.Builder b = CLIENT.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        this.socket = b.buildAsync(URI.create(url), new Listener()).join();
    }

    public static WsClient connect(String url) {
        return new WsClient(url, null, false);
    }

    public static WsClient connect(String url, String token) {
        return new WsClient(url, token, false);
    }

    public static WsClient slow(String url) {
        return new WsClient(url, null, true);
    }

    public long nextId() {
        return ids.incrementAndGet();
    }

    public void send(String text) {
        synchronized (socket) {
            socket.sendText(text, true).join();
        }
    }

    /** Sends a request object with a fresh numeric id and returns the id. */
    public long request(String op, String fieldsJson) {
        long id = nextId();
        send("{\"id\":" + id + ",\"op\":\"" + op + "\"" + (fieldsJson.isEmpty() ? "" : "," + fieldsJson) + "}");
        return id;
    }

    /** Lets one more frame in (manual demand only). */
    public void demand(long n) {
        socket.request(n);
    }

    public JsonNode next(long timeoutMs) {
        try {
            JsonNode f = frames.poll(timeoutMs, TimeUnit.MILLISECONDS);
            if (f == null) {
                throw new AssertionError("no frame within " + timeoutMs + " ms");
            }
            return f;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Waits for the reply with this id, skipping (and keeping nothing of) other frames. */
    public JsonNode reply(long id, long timeoutMs) {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            JsonNode f = next(Math.max(1, deadline - System.currentTimeMillis()));
            if (f.has("id") && f.get("id").asLong() == id) {
                return f;
            }
        }
    }

    public void abort() {
        socket.abort();
    }

    @Override
    public void close() {
        try {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(2, TimeUnit.SECONDS);
        } catch (Exception e) {
            socket.abort();
        }
    }

    private final class Listener implements WebSocket.Listener {
        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(manualDemand ? 1 : Long.MAX_VALUE);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                frames.add(Json.parse(partial.toString()));
                partial.setLength(0);
            }
            if (manualDemand && !last) {
                webSocket.request(1);
            }
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closeReason = reason;
            closed.complete(statusCode);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            closed.complete(-1);
        }
    }
}

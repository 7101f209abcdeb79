package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A WebSocket client for benchmarks and the CLI (JDK {@link WebSocket}): replies are matched to
 * requests by id, pushed frames go to a sink. Frames arrive on the client's listener thread; the
 * sink must be quick (hand the frame over). {@link #closed} completes with the close code, or -1
 * when the connection broke without one.
 */
final class StrandSocket implements AutoCloseable {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final WebSocket socket;
    private final ConcurrentHashMap<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final StringBuilder partial = new StringBuilder();
    private volatile Consumer<JsonNode> pushed = f -> { };
    final CompletableFuture<Integer> closed = new CompletableFuture<>();

    StrandSocket(String wsUrl, String token) {
        WebSocket.Builder b = CLIENT.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        socket = b.buildAsync(URI.create(wsUrl), new Listener()).join();
    }

    /** Drops the connection without a close handshake. */
    void abort() {
        socket.abort();
    }

    void onPush(Consumer<JsonNode> sink) {
        this.pushed = sink;
    }

    /** Sends {@code {"id":n,"op":op, fields}} and completes with the reply (ok or error). */
    CompletableFuture<JsonNode> call(String op, String fieldsJson) {
        long id = ids.incrementAndGet();
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        pending.put(id, reply);
        if (closed.isDone()) {
            pending.remove(id);
            reply.completeExceptionally(new IllegalStateException("socket closed " + closed.getNow(-1)));
            return reply;
        }
        String frame = "{\"id\":" + id + ",\"op\":\"" + op + "\"" + (fieldsJson.isEmpty() ? "" : "," + fieldsJson) + "}";
        synchronized (socket) {
            socket.sendText(frame, true).join();
        }
        return reply;
    }

    @Override
    public void close() {
        try {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(5, TimeUnit.SECONDS);
        } catch (RuntimeException | ExecutionException | TimeoutException e) {
            socket.abort();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            socket.abort();
        }
    }

    private final class Listener implements WebSocket.Listener {
        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(Long.MAX_VALUE);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                JsonNode frame = Json.parse(partial.toString());
                partial.setLength(0);
                JsonNode id = frame.get("id");
                if (id != null && !id.isNull()) {
                    CompletableFuture<JsonNode> f = pending.remove(id.asLong());
                    if (f != null) {
                        f.complete(frame);
                    }
                } else {
                    pushed.accept(frame);
                }
            }
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closed.complete(statusCode);
            pending.values().forEach(f -> f.completeExceptionally(new IllegalStateException("socket closed " + statusCode)));
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            closed.complete(-1);
            pending.values().forEach(f -> f.completeExceptionally(error));
        }
    }
}

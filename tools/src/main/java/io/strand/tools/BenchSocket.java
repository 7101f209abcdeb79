package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** A WebSocket client for benchmarks and the CLI: replies matched to requests by id, pushed frames to a sink. */
final class BenchSocket implements AutoCloseable {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private final WebSocket socket;
    private final ConcurrentHashMap<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final StringBuilder partial = new StringBuilder();
    private volatile Consumer<JsonNode> pushed = f -> { };
    final CompletableFuture<Integer> closed = new CompletableFuture<>();

    BenchSocket(String wsUrl, String token) {
        WebSocket.Builder b = CLIENT.newWebSocketBuilder();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        socket = b.buildAsync(URI.create(wsUrl), new Listener()).join();
    }

    void onPush(Consumer<JsonNode> sink) {
        this.pushed = sink;
    }

    /** Sends {@code {"id":n,"op":op, fields}} and completes with the reply (ok or error). */
    CompletableFuture<JsonNode> call(String op, String fieldsJson) {
        long id = ids.incrementAndGet();
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        pending.put(id, reply);
        String frame = "{\"id\":" + id + ",\"op\":\"" + op + "\"" + (fieldsJson.isEmpty() ? "" : "," + fieldsJson) + "}";
        synchronized (socket) {
            socket.sendText(frame, true).join();
        }
        return reply;
    }

    @Override
    public void close() {
        try {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").join();
        } catch (RuntimeException e) {
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

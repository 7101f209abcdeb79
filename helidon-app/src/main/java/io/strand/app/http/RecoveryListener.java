package io.strand.app.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.strand.app.ApiErrors;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Holds the server's port while the write-ahead log replays, so orchestrators see "not ready"
 * rather than "not there": {@code /observe/health} and {@code /observe/health/ready} answer
 * {@code 503} with a {@code recovery} check DOWN, {@code /observe/health/live} {@code 200} (a long
 * replay must not get the process restarted), and every other request {@code 503 unavailable} with
 * {@code Retry-After: 1}, having changed nothing. The server takes the port over once recovered.
 * Thread-safe: the JDK server's own threads answer; {@link #close} is idempotent.
 */
public final class RecoveryListener implements AutoCloseable {
    private final HttpServer server;
    private boolean closed;

    private RecoveryListener(HttpServer server) {
        this.server = server;
    }

    /** Listens on {@code host:port} ({@code port} 0 picks one: {@link #port} tells which). */
    public static RecoveryListener start(String host, int port) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 64);
            server.createContext("/", RecoveryListener::answer);
            server.start();
            return new RecoveryListener(server);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void answer(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            byte[] body;
            int status;
            if (path.equals("/observe/health/live")) {
                status = 200;
                body = health("UP", "[]");
            } else if (path.equals("/observe/health") || path.equals("/observe/health/ready")) {
                status = 503;
                body = health("DOWN", "[{\"name\":\"recovery\",\"status\":\"DOWN\",\"details\":{\"phase\":\"replaying the write-ahead log\"}}]");
            } else {
                status = 503;
                exchange.getResponseHeaders().set("Retry-After", "1");
                body = ApiErrors.httpBody(new StrandException(ErrorCode.UNAVAILABLE,
                        "the server is recovering (replaying its write-ahead log): nothing was done; retry shortly"));
            }
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, exchange.getRequestMethod().equals("HEAD") ? -1 : body.length);
            if (!exchange.getRequestMethod().equals("HEAD")) {
                exchange.getResponseBody().write(body);
            }
        }
    }

    private static byte[] health(String status, String checks) {
        return Json.bytes(Json.MAPPER.createObjectNode().put("status", status)
                .set("checks", Json.parse(checks.getBytes(StandardCharsets.UTF_8))));
    }

    /** Stops listening (immediately: requests in flight get a reset) so the server can bind the port. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            server.stop(0);
        }
    }
}

package io.strand.app.ws;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One client socket's relay (the client's reader thread sends upstream, one frame after the other;
 * the upstream client's listener thread sends back, one whole message at a time): the WebSocket of
 * a workspace whose shard has no replica on this node (a cluster with more nodes than replicas),
 * joined frame by frame to the same socket path on a node that has one. That node checks the token
 * again and serves the socket; a close on either side closes the other with the same code.
 * Backpressure: the next upstream message is asked for only once the last one went to the client.
 */
final class SocketRelay implements WebSocket.Listener {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final SocketWriter out;
    /** The upstream message being received; only the listener thread touches it. */
    private final StringBuilder partial = new StringBuilder();
    private volatile WebSocket upstream;

    private SocketRelay(SocketWriter out) {
        this.out = out;
    }

    /**
     * Connects to {@code base} (a replica's HTTP address) at {@code pathAndQuery}, with the client's
     * {@code authorization} header when it sent one; {@code 503} when that node does not answer.
     */
    static SocketRelay open(String base, String pathAndQuery, String authorization, SocketWriter out) {
        SocketRelay relay = new SocketRelay(out);
        WebSocket.Builder b = CLIENT.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(2));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        try {
            relay.upstream = b.buildAsync(URI.create(base.replaceFirst("^http", "ws") + pathAndQuery), relay).get(5, TimeUnit.SECONDS);
            return relay;
        } catch (ExecutionException | TimeoutException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot relay this socket to " + base + ": " + e.getMessage(),
                    Map.of("retryable", true));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StrandException(ErrorCode.UNAVAILABLE, "interrupted", Map.of("retryable", true));
        }
    }

    /** A client frame (or fragment), sent on once the one before it went. */
    void toUpstream(String text, boolean last) {
        try {
            upstream.sendText(text, last).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            out.close(1011, "the relay to a replica failed");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The client's socket ended: ends the upstream one. */
    void close(int code) {
        WebSocket u = upstream;
        if (u != null && !u.isOutputClosed()) {
            u.sendClose(code == 1005 || code == 1006 ? WebSocket.NORMAL_CLOSURE : code, "").exceptionally(t -> null);
        }
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            String message = partial.toString();
            partial.setLength(0);
            out.send(message);
        }
        ws.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
        out.close(statusCode, reason);
        return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
        out.close(1011, "the relay to a replica failed");
    }
}

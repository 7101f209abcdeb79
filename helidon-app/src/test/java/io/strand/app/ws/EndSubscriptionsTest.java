package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Method;
import io.helidon.http.WritableHeaders;
import io.helidon.websocket.WsSession;
import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.auth.Authenticator;
import io.strand.app.stores.LocalWrites;
import io.strand.app.stores.SingleNode;
import io.strand.app.stores.Stores;
import io.strand.core.Durability;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The path a cluster node takes before a shard's stores close (a snapshot installed replaces them):
 * {@link OpenSockets#endSubscriptions} ends the subscriptions of the shard's workspaces, each with a
 * retryable {@code closed} frame that carries its resume cursor, and returns once their loops let go.
 */
class EndSubscriptionsTest {
    private static final StrandException CLOSING = new StrandException(ErrorCode.UNAVAILABLE, "shard 1 is being rebuilt",
            Map.of("retryable", true, "shard", 1));

    @Test
    void endSubscriptionsShouldCloseEachWithARetryableErrorAndItsNextBeforeReturning(@TempDir Path dir) throws Exception {
        try (Stores stores = Stores.open("test", ServerConfig.from(Map.of("STRAND_DOC_CAPACITY", "1000")), dir, Durability.OS, 1,
                new StrandMetrics(), null)) {
            LocalWrites writes = new LocalWrites(ws -> stores);
            for (int i = 0; i < 3; i++) {
                writes.append("w", "chat", AppendRequest.of(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8))).join();
            }
            SocketEndpoint.SocketContext ctx = new SocketEndpoint.SocketContext(new SingleNode(stores), null, Authenticator.OPEN,
                    new StrandMetrics(), 100, 100, 60_000, new ConcurrentHashMap<>());
            FakeSession onW = open(ctx, "w");
            FakeSession onOther = open(ctx, "other");
            onW.endpoint.onMessage(onW, "{\"id\":1,\"op\":\"subscribe\",\"log\":\"chat\",\"sub\":\"s\"}", true);
            onOther.endpoint.onMessage(onOther, "{\"id\":1,\"op\":\"subscribe\",\"log\":\"chat\",\"sub\":\"t\"}", true);
            assertEquals("caughtUp", onW.until("caughtUp").path("type").asText());
            assertEquals(4, onW.last.path("next").asLong());
            onOther.until("caughtUp");

            int ended = ctx.sockets().endSubscriptions(ws -> ws.equals("w"), CLOSING, Duration.ofSeconds(10));

            assertEquals(1, ended, "only the subscriptions of the closing shard's workspaces");
            // queued before endSubscriptions returned; the socket's writer thread delivers it (a loaded box may lag)
            JsonNode closed = onW.frames.poll(10, TimeUnit.SECONDS);
            assertTrue(closed != null, "no closed frame after endSubscriptions returned");
            assertEquals("closed", closed.path("type").asText(), closed.toString());
            assertEquals("error", closed.path("reason").asText());
            assertEquals("unavailable", closed.path("error").path("code").asText());
            assertTrue(closed.path("error").path("retryable").asBoolean(), closed.toString());
            assertEquals(4, closed.path("next").asLong(), "resume from the first seq not delivered");
            // the other workspace's subscription goes on: a new entry reaches it
            writes.append("other", "chat", AppendRequest.of("{\"n\":9}".getBytes(StandardCharsets.UTF_8))).join();
            assertEquals("entries", onOther.until("entries").path("type").asText());
        }
    }

    private static FakeSession open(SocketEndpoint.SocketContext ctx, String ws) throws Exception {
        SocketEndpoint endpoint = new SocketEndpoint(ctx);
        endpoint.onHttpUpgrade(HttpPrologue.create("HTTP/1.1", "HTTP", "1.1", Method.GET, "/v1/ws/" + ws + "/socket", false),
                WritableHeaders.create());
        FakeSession session = new FakeSession(endpoint);
        endpoint.onOpen(session);
        return session;
    }

    /** Records what the server sends; the socket never stalls. */
    private static final class FakeSession extends TextOnlySession {
        final SocketEndpoint endpoint;
        final BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();
        JsonNode last;

        FakeSession(SocketEndpoint endpoint) {
            this.endpoint = endpoint;
        }

        /** Takes frames until one of {@code type} (or the reply of a request) arrives. */
        JsonNode until(String type) throws InterruptedException {
            while (true) {
                JsonNode f = frames.poll(10, TimeUnit.SECONDS);
                if (f == null) {
                    throw new AssertionError("no " + type + " frame within 10 s");
                }
                last = f;
                if (type.equals(f.path("type").asText())) {
                    return f;
                }
            }
        }

        @Override
        public WsSession send(String text, boolean last) {
            frames.add(Json.parse(text));
            return this;
        }
    }
}

package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.FrameSocket;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.core.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sockets read by one event loop ({@code --ws-event-loops 1}, so every socket shares it): a client that
 * stops reading holds up only itself, frames sent right behind the upgrade are answered, and the gauge
 * counts the loop's sockets. (The protocol rules — close codes, pongs, oversize frames — are
 * {@code SocketProtocolIT}'s, which runs on loops too, as every in-process server does by default.)
 */
@Timeout(120)
class EventLoopSocketsIT {
    private static final Pattern GAUGE = Pattern.compile("(?m)^strand_ws_event_loop_sockets(?:\\{[^}]*\\})? ([0-9.]+)$");
    @TempDir
    static Path dir;
    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(dir, Map.of("STRAND_WS_EVENT_LOOPS", "1"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aClientThatStopsReadingShouldHoldUpOnlyItselfAndGetEveryReplyOnceItReads() throws IOException {
        String entry = "\"data\":{\"pad\":\"" + "x".repeat(1000) + "\"}";
        StringBuilder batch = new StringBuilder("\"log\":\"big\",\"entries\":[");
        for (int i = 0; i < 100; i++) {
            batch.append(i == 0 ? "" : ",").append('{').append(entry).append('}');
        }
        try (WsClient other = WsClient.connect(server.wsUrl("loop"))) {
            JsonNode appended = other.reply(other.request("append", batch.append(']').toString()), 10_000);
            assertTrue(appended.path("ok").asBoolean(), appended.toString());
            int pages = 300; // ≈ 32 MB of replies: far past the socket buffers and the loop's 1 MiB before it stops reading
            try (FrameSocket stalled = FrameSocket.connect(server.wsUrl("loop"))) {
                for (int id = 1; id <= pages; id++) {
                    stalled.sendText("{\"op\":\"read\",\"id\":" + id + ",\"log\":\"big\",\"from\":1,\"limit\":100}");
                }
                for (int i = 0; i < 20; i++) { // the loop still serves the other socket, promptly
                    JsonNode pong = other.reply(other.request("ping", ""), 5_000);
                    assertTrue(pong.path("ok").asBoolean(), pong.toString());
                    JsonNode more = other.reply(other.request("append", "\"log\":\"small\",\"data\":{\"i\":" + i + "}"), 5_000);
                    assertTrue(more.path("ok").asBoolean(), more.toString());
                }
                for (int id = 1; id <= pages; id++) { // and the stalled one gets every reply, in order, once it reads
                    JsonNode page = Json.parse(new String(stalled.read().payload(), StandardCharsets.UTF_8));
                    assertEquals(id, page.path("id").asInt(), "replies in request order");
                    assertEquals(100, page.path("entries").size(), page.path("id").toString());
                }
            }
        }
    }

    @Test
    void aCloseSentBehindUnreadRepliesShouldBeAnsweredAfterAllOfThem() throws IOException {
        try (WsClient writer = WsClient.connect(server.wsUrl("loop"))) {
            StringBuilder batch = new StringBuilder("\"log\":\"backlog\",\"entries\":[");
            for (int i = 0; i < 100; i++) {
                batch.append(i == 0 ? "" : ",").append("{\"data\":{\"pad\":\"").append("y".repeat(1000)).append("\"}}");
            }
            assertTrue(writer.reply(writer.request("append", batch.append(']').toString()), 10_000).path("ok").asBoolean());
        }
        // ≈ 21 MB: the loop stops reading this socket at 1 MiB queued, so it reads the close frame only
        // once the client has read most replies, and the close answer goes out behind the rest
        int pages = 200;
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("loop"))) {
            for (int id = 1; id <= pages; id++) {
                s.sendText("{\"op\":\"read\",\"id\":" + id + ",\"log\":\"backlog\",\"from\":1,\"limit\":100}");
            }
            s.sendClose(1000);
            for (int id = 1; id <= pages; id++) {
                FrameSocket.Frame f = s.read();
                assertEquals(FrameSocket.TEXT, f.opcode(), "page " + id + " came before the close");
                assertEquals(id, Json.parse(new String(f.payload(), StandardCharsets.UTF_8)).path("id").asInt());
            }
            FrameSocket.Frame close = s.read();
            assertEquals(FrameSocket.CLOSE, close.opcode(), "the close answer follows every reply");
            assertEquals(1000, close.closeCode());
        }
    }

    @Test
    void aFrameSentRightBehindTheUpgradeShouldBeAnswered() throws IOException {
        byte[] ping = FrameSocket.frame(FrameSocket.TEXT, "{\"op\":\"ping\",\"id\":7}".getBytes(StandardCharsets.UTF_8));
        try (FrameSocket early = FrameSocket.connect(server.wsUrl("loop"), ping)) {
            JsonNode pong = Json.parse(new String(early.read().payload(), StandardCharsets.UTF_8));
            assertEquals(7, pong.path("id").asInt(), pong.toString());
            assertTrue(pong.path("pong").asBoolean(), pong.toString());
            early.sendClose(1000);
            assertEquals(1000, early.readClose().closeCode());
        }
    }

    @Test
    void theGaugeShouldCountTheSocketsOnTheLoops() {
        await("no socket left from another test", () -> gauge() == 0);
        try (WsClient a = WsClient.connect(server.wsUrl("loop")); WsClient b = WsClient.connect(server.wsUrl("loop"))) {
            assertTrue(a.reply(a.request("ping", ""), 5_000).path("ok").asBoolean());
            assertTrue(b.reply(b.request("ping", ""), 5_000).path("ok").asBoolean());
            assertEquals(2, gauge());
        }
        await("the closed sockets to leave the loop", () -> gauge() == 0);
    }

    private static int gauge() {
        Matcher m = GAUGE.matcher(server.http.get("/observe/metrics").body());
        assertTrue(m.find(), "strand_ws_event_loop_sockets is exported");
        return (int) Double.parseDouble(m.group(1));
    }

    private static void await(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "waited 30 s for " + what);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polling the server: nothing to wait on
        }
    }
}

package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.FrameSocket;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.core.Json;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code subscribe} whose log is not open opens it off the event loop ({@link StrictWsConnection#runHolding}):
 * one loop ({@code --ws-event-loops 1}), a log left closed by a restart, and its cold manifest a FIFO
 * that the test holds, so opening the log waits as a read from a slow object store would. A second
 * subscribe and a page read of that log, sent while it opens, wait for the open off the loop too (its
 * slot's lock is held for the whole open). Its own servers, apart from {@code EventLoopSocketsIT}'s,
 * whose loop gauge they would replace.
 */
@Timeout(120)
class SubscribeOffLoopIT {

    @Test
    void aSubscribeThatOpensItsLogShouldNotStallTheLoopAndTheSocketsNextFrameShouldWaitForIt(@TempDir Path own)
            throws Exception {
        try (TestServer first = TestServer.start(own, Map.of("STRAND_WS_EVENT_LOOPS", "1"));
             WsClient c = WsClient.connect(first.wsUrl("held"))) {
            assertTrue(c.reply(c.request("append", "\"log\":\"closed\",\"data\":{\"n\":1}"), 10_000).path("ok").asBoolean());
        }
        // The log is now on disk and not open. Opening it reads its cold manifest, here a FIFO: the read
        // waits for this test, as a read from a slow object store would.
        Path manifest = own.resolve("cold/held/closed/manifest.json");
        Files.createDirectories(manifest.getParent());
        assertEquals(0, new ProcessBuilder("mkfifo", manifest.toString()).inheritIO().start().waitFor());
        ExecutorService opener = Executors.newSingleThreadExecutor();
        Future<OutputStream> writeEnd = null;
        try (TestServer second = TestServer.start(own, Map.of("STRAND_WS_EVENT_LOOPS", "1"));
             FrameSocket subscriber = FrameSocket.connect(second.wsUrl("held"));
             FrameSocket secondSubscriber = FrameSocket.connect(second.wsUrl("held"));
             WsClient other = WsClient.connect(second.wsUrl("held"))) {
            long read;
            try {
                // opening the FIFO for writing returns once the server has opened it for reading
                writeEnd = opener.submit(() -> Files.newOutputStream(manifest));
                subscriber.sendText("{\"op\":\"subscribe\",\"id\":1,\"log\":\"closed\",\"from\":1}");
                subscriber.sendText("{\"op\":\"ping\",\"id\":2}");
                writeEnd.get(30, TimeUnit.SECONDS);
                // The subscribe now waits inside the manifest's read, holding the log's slot. A second
                // subscribe and a page read of the same log wait for that open too, off the loop: the
                // loop serves the other socket meanwhile.
                secondSubscriber.sendText("{\"op\":\"subscribe\",\"id\":1,\"log\":\"closed\",\"from\":1}");
                read = other.request("read", "\"log\":\"closed\",\"from\":1,\"limit\":10");
                for (int i = 0; i < 5; i++) {
                    JsonNode pong = other.reply(other.request("ping", ""), 5_000);
                    assertTrue(pong.path("ok").asBoolean(), pong.toString());
                }
            } finally {
                release(manifest, writeEnd); // also when failing: the server can stop only once the read has ended
            }
            JsonNode first = Json.parse(subscriber.read().text());
            assertEquals(1, first.path("id").asInt(), "the subscribe is answered before the ping sent behind it: " + first);
            assertTrue(first.path("ok").asBoolean(), first.toString());
            assertEquals(1, first.path("head").asInt(), first.toString());
            JsonNode alsoSubscribed = Json.parse(secondSubscriber.read().text());
            assertTrue(alsoSubscribed.path("ok").asBoolean(), alsoSubscribed.toString());
            JsonNode page = other.reply(read, 10_000);
            assertEquals(1, page.path("entries").size(), page.toString());
            boolean pong = false;
            boolean entry = false;
            while (!pong || !entry) { // the ping's answer and the subscription's entry, in either order
                JsonNode f = Json.parse(subscriber.read().text());
                pong |= f.path("id").asInt() == 2 && f.path("ok").asBoolean();
                entry |= f.toString().contains("\"n\":1");
            }
        } finally {
            opener.shutdownNow();
        }
    }

    /**
     * Ends the server's read of the FIFO with nothing read: an empty manifest, so the log opens without
     * its cold part, as with a store that is down. The name goes first, so no later read waits on it.
     */
    private static void release(Path manifest, Future<OutputStream> writeEnd) throws Exception {
        Files.deleteIfExists(manifest);
        if (writeEnd != null && writeEnd.isDone() && !writeEnd.isCancelled()) {
            writeEnd.get().close();
        }
    }
}

package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Subscription edge cases over the socket: a {@code sub} id in use, the error a {@code closed} frame
 * carries, heartbeats while out of credit, nothing of a subscription after its {@code unsubscribe}
 * reply, numeric {@code sub} ids, and the replay-lag gauge. The shared server beats every 300 ms.
 */
@Timeout(120)
class SubscriptionIT {
    private static final long HEARTBEAT_MS = 300;
    private static final String WS = "subs";

    @TempDir
    static Path dir;
    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(dir, Map.of("STRAND_HEARTBEAT", HEARTBEAT_MS + "ms"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static void append(String log, int n) {
        Http.Reply r = server.http.post(ColdLogs.logPath(WS, log) + "/entries", ColdLogs.batch(1, n));
        assertEquals(200, r.status(), r.body());
    }

    @Test
    void aSubIdInUseShouldBeRefusedWithoutOpeningAnything() {
        String log = "dup";
        append(log, 3);
        try (WsClient c = WsClient.connect(server.wsUrl(WS))) {
            JsonNode first = c.reply(c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":\"a\""), 10_000);
            assertTrue(first.get("ok").asBoolean(), first.toString());
            assertEquals(1, server.server.logs().watchers(WS, log));

            JsonNode again = c.reply(c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":\"a\""), 10_000);
            assertFalse(again.get("ok").asBoolean(), again.toString());
            assertEquals("sub_in_use", again.get("error").get("code").asText(), again.toString());
            assertEquals(1, server.server.logs().watchers(WS, log), "the refused subscribe opened no watch");

            JsonNode bye = c.reply(c.request("unsubscribe", "\"sub\":\"a\""), 10_000);
            assertTrue(bye.get("ok").asBoolean(), bye.toString());
            // with no watch left the slot can be forgotten once its log closes idle
            await("the last watch of the log to close", Duration.ofSeconds(10),
                    () -> server.server.logs().watchers(WS, log) == 0);
            // the id is free again
            JsonNode reused = c.reply(c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":\"a\""), 10_000);
            assertTrue(reused.get("ok").asBoolean(), reused.toString());
        }
        await("the socket's watch to close with it", Duration.ofSeconds(10),
                () -> server.server.logs().watchers(WS, log) == 0);
    }

    @Test
    void aWindowedSubscriptionOutOfCreditShouldStillGetHeartbeats() {
        String log = "quiet";
        append(log, 5);
        try (WsClient c = WsClient.connect(server.wsUrl(WS))) {
            long id = c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":\"w\",\"window\":1");
            assertTrue(c.reply(id, 10_000).get("ok").asBoolean());
            JsonNode entries = c.next(10_000);
            assertEquals("entries", entries.get("type").asText(), entries.toString());
            assertEquals(1, entries.get("entries").size());
            long start = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                JsonNode f = c.next(HEARTBEAT_MS * 10);
                assertEquals("w", f.get("sub").asText(), f.toString());
                assertEquals("heartbeat", f.get("type").asText(), "only heartbeats while out of credit: " + f);
                assertEquals(5, f.get("head").asLong(), f.toString());
            }
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(elapsedMs >= 2 * HEARTBEAT_MS, "heartbeats come once per interval, not faster: " + elapsedMs + " ms");
            // credit still resumes delivery after the heartbeats
            c.request("credit", "\"sub\":\"w\",\"n\":10");
            JsonNode more;
            do {
                more = c.next(10_000);
            } while (!"entries".equals(more.path("type").asText()));
            assertEquals(2, more.get("entries").get(0).get("seq").asLong(), more.toString());
        }
    }

    @Test
    void noFrameOfASubscriptionShouldFollowItsUnsubscribeReply() throws Exception {
        String log = "race";
        AtomicBoolean appending = new AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicReference<Throwable> appenderFailed = new java.util.concurrent.atomic.AtomicReference<>();
        Thread appender = Thread.ofVirtual().start(() -> {
            try (WsClient w = WsClient.connect(server.wsUrl(WS))) {
                while (appending.get()) {
                    for (int i = 0; i < 20; i++) {
                        w.request("append", "\"log\":\"" + log + "\",\"data\":" + i);
                    }
                    for (int i = 0; i < 20; i++) {
                        w.next(30_000);
                    }
                }
            } catch (Throwable t) {
                appenderFailed.set(t); // the rounds below wait for entries: they fail with this instead of waiting out the timeout
            }
        });
        List<String> late = new ArrayList<>();
        int rounds = 300;
        int deliveredRounds = 0;
        try (WsClient c = WsClient.connect(server.wsUrl(WS))) {
            java.util.Set<String> ended = new java.util.HashSet<>();
            for (int round = 0; round < rounds; round++) {
                String sub = "r" + round;
                long subId = c.request("subscribe", "\"log\":\"" + log + "\",\"from\":\"latest\",\"sub\":\"" + sub + "\"");
                long unsubId = -1;
                boolean sawEntries = false;
                while (true) {
                    if (appenderFailed.get() != null) {
                        throw new AssertionError("the appender stopped", appenderFailed.get());
                    }
                    JsonNode f = c.next(10_000);
                    if (f.has("sub") && !f.has("id") && ended.contains(f.get("sub").asText())) {
                        late.add(f.toString());
                    }
                    if (f.has("id") && f.get("id").asLong() == subId) {
                        assertTrue(f.get("ok").asBoolean(), f.toString());
                    } else if (f.has("id") && f.get("id").asLong() == unsubId) {
                        assertTrue(f.get("ok").asBoolean(), f.toString());
                        ended.add(sub);
                        break;
                    } else if (unsubId < 0 && sub.equals(f.path("sub").asText()) && "entries".equals(f.path("type").asText())) {
                        sawEntries = true;
                        unsubId = c.request("unsubscribe", "\"sub\":\"" + sub + "\""); // while entries keep coming
                    }
                }
                deliveredRounds += sawEntries ? 1 : 0;
            }
            // a last round trip: every frame sent before this reply has arrived
            long ping = c.request("ping", "");
            while (true) {
                JsonNode f = c.next(10_000);
                if (f.has("id") && f.get("id").asLong() == ping) {
                    break;
                }
                if (f.has("sub")) {
                    late.add(f.toString());
                }
            }
        } finally {
            appending.set(false);
            appender.join();
        }
        assertEquals(rounds, deliveredRounds);
        assertTrue(late.isEmpty(), late.size() + " frames after their subscription's unsubscribe reply, e.g. "
                + late.subList(0, Math.min(3, late.size())));
    }

    @Test
    void aNumericSubShouldComeBackAsTheSameJsonValue() {
        String log = "numeric";
        append(log, 2);
        try (WsClient c = WsClient.connect(server.wsUrl(WS))) {
            JsonNode reply = c.reply(c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":7"), 10_000);
            assertTrue(reply.get("ok").asBoolean(), reply.toString());
            assertTrue(reply.get("sub").isIntegralNumber(), reply.toString());
            assertEquals(7, reply.get("sub").asLong());
            JsonNode entries = c.next(10_000);
            assertTrue(entries.get("sub").isIntegralNumber(), entries.toString());
            assertEquals(7, entries.get("sub").asLong());
            // the string "7" is another JSON value, so another subscription
            JsonNode text = c.reply(c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":\"7\""), 10_000);
            assertTrue(text.get("ok").asBoolean(), text.toString());
            assertTrue(text.get("sub").isTextual(), text.toString());
            JsonNode credit = c.reply(c.request("credit", "\"sub\":7,\"n\":1"), 10_000);
            assertTrue(credit.get("ok").asBoolean(), credit.toString());
            JsonNode bye = c.reply(c.request("unsubscribe", "\"sub\":7"), 10_000);
            assertTrue(bye.get("ok").asBoolean(), bye.toString());
            JsonNode gone = c.reply(c.request("unsubscribe", "\"sub\":7"), 10_000);
            assertEquals("not_found", gone.get("error").get("code").asText(), gone.toString());
            JsonNode stillThere = c.reply(c.request("unsubscribe", "\"sub\":\"7\""), 10_000);
            assertTrue(stillThere.get("ok").asBoolean(), stillThere.toString());
            JsonNode fractional = c.reply(c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":1.5"), 10_000);
            assertEquals("bad_request", fractional.get("error").get("code").asText(), fractional.toString());
        }
    }

    @Test
    void replayLagShouldBeTheLargestAmongLiveSubscriptions() {
        append("lagging", 1_000);
        try (WsClient behind = WsClient.connect(server.wsUrl(WS)); WsClient live = WsClient.connect(server.wsUrl(WS))) {
            assertTrue(behind.reply(behind.request("subscribe", "\"log\":\"lagging\",\"sub\":\"b\",\"window\":10"), 10_000)
                    .get("ok").asBoolean());
            JsonNode first = behind.next(10_000);
            assertEquals(10, first.get("entries").size(), first.toString()); // 990 behind, out of credit
            assertTrue(live.reply(live.request("subscribe", "\"log\":\"tailing\",\"from\":\"latest\",\"sub\":\"t\""), 10_000)
                    .get("ok").asBoolean());
            append("tailing", 1);
            JsonNode tail;
            do {
                tail = live.next(10_000);
            } while (!"entries".equals(tail.path("type").asText())); // reports 0 behind, last
            // the lagging one is set when its frame goes out, a moment after the client may have it: poll
            await("the gauge to show the largest lag among live subscriptions (990), not the last reported (0)",
                    Duration.ofSeconds(10), () -> replayLag() == 990);
            behind.reply(behind.request("unsubscribe", "\"sub\":\"b\""), 10_000);
            await("the lag of the ended subscription to leave the gauge", Duration.ofSeconds(10), () -> replayLag() == 0);
        }
    }

    /**
     * A silent WebSocket is closed by the idle timeout with 1001 and reason "idle timeout" (not "server
     * stopping": the server goes on), while a live subscription on a quiet log stays open: its heartbeats,
     * at most half the idle timeout apart even with the default 15 s interval, are traffic.
     */
    @Test
    void anIdleSocketShouldCloseAsIdleWhileALiveSubscriptionStaysOpen(@TempDir Path idleDir) throws Exception {
        try (TestServer idle = TestServer.start(idleDir, Map.of("STRAND_IDLE_TIMEOUT", "2s"));
             WsClient silent = WsClient.connect(idle.wsUrl("idle"));
             WsClient subscriber = WsClient.connect(idle.wsUrl("idle"))) {
            JsonNode sub = subscriber.reply(subscriber.request("subscribe", "\"log\":\"quiet\",\"from\":\"latest\""), 10_000);
            assertTrue(sub.path("ok").asBoolean(), sub.toString());
            assertEquals(1001, silent.closed.get(15, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals("idle timeout", silent.closeReason);
            int heartbeats = 0;
            while (heartbeats < 4) { // 4 heartbeats ≥ 4 s: twice the idle timeout with nothing sent by the client
                JsonNode f = subscriber.next(10_000);
                assertTrue(f != null, "a live subscription keeps getting heartbeats, not an idle close: " + subscriber.closeReason);
                if ("heartbeat".equals(f.path("type").asText())) {
                    heartbeats++;
                }
            }
            assertFalse(subscriber.closed.isDone(), "closed with " + subscriber.closed.getNow(-1) + " " + subscriber.closeReason);
            assertEquals(200, idle.http.get("/observe/health").status(), "the server goes on");
        }
    }

    private static long replayLag() {
        return (long) server.http.metric("strand_replay_lag");
    }

    @Test
    void aClosedFrameForAReadErrorShouldCarryTheErrorCodeAndMessage(@TempDir Path coldDir) throws Exception {
        String ws = "rot";
        String log = "l";
        try (TestServer cold = TestServer.start(coldDir, ColdLogs.settings(2_000))) {
            for (int b = 0; b < 40; b++) { // 20,000 entries over ~3 s (pacing, not a wait), so rolled hot files get dropped
                ColdLogs.append(cold.http, ws, log, b * 500L + 1, 500);
                Thread.sleep(50);
            }
            await("four segments below the hot files", Duration.ofSeconds(30),
                    () -> segments(coldDir, ws, log).stream().filter(s -> s[1] < hotStoredFirst(cold.http, ws, log)).count() >= 4);
            long hotStoredFirst = hotStoredFirst(cold.http, ws, log);
            List<long[]> coldOnly = segments(coldDir, ws, log).stream().filter(s -> s[1] < hotStoredFirst).toList();
            long[] damaged = coldOnly.get(2); // not the first: the roller keeps the first block of the first one cached
            Path file = segmentFile(coldDir, ws, log, damaged);
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                f.setLength(f.length() / 2);
            }
            try (WsClient c = WsClient.connect(cold.wsUrl(ws))) {
                long id = c.request("subscribe", "\"log\":\"" + log + "\",\"sub\":\"x\",\"from\":" + damaged[0]);
                assertTrue(c.reply(id, 10_000).get("ok").asBoolean());
                JsonNode closed;
                do {
                    closed = c.next(30_000);
                } while (!"closed".equals(closed.path("type").asText()));
                assertEquals("x", closed.get("sub").asText(), closed.toString());
                assertEquals("error", closed.get("reason").asText(), closed.toString());
                assertEquals("corrupt", closed.get("error").get("code").asText(), closed.toString());
                assertTrue(closed.get("error").get("message").asText().contains(file.getFileName().toString()), closed.toString());
                assertTrue(closed.get("next").asLong() <= damaged[0] + 500, closed.toString());
                assertTrue(closed.get("next").asLong() >= damaged[0], closed.toString());
            }
        }
    }

    private static long hotStoredFirst(Http http, String ws, String log) {
        return ColdLogs.coldStatus(http, ws, log).get("hotStoredFirst").asLong();
    }

    /** The log's segments in the file store as {first, last}, by first seq. */
    private static List<long[]> segments(Path dataDir, String ws, String log) {
        Path segDir = dataDir.resolve("cold").resolve(ws).resolve(log).resolve("seg");
        if (!Files.isDirectory(segDir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(segDir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".seg")).map(n -> {
                String[] range = n.substring(0, n.length() - 4).split("-");
                return new long[] {Long.parseLong(range[0]), Long.parseLong(range[1])};
            }).sorted(java.util.Comparator.comparingLong(s -> s[0])).toList();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Path segmentFile(Path dataDir, String ws, String log, long[] range) throws IOException {
        Path segDir = dataDir.resolve("cold").resolve(ws).resolve(log).resolve("seg");
        try (Stream<Path> files = Files.list(segDir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".seg")).filter(p -> {
                String[] r = p.getFileName().toString().replace(".seg", "").split("-");
                return Long.parseLong(r[0]) == range[0];
            }).findFirst().orElseThrow();
        }
    }
}

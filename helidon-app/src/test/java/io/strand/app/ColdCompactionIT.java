package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.coldStatus;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction while everything else runs: appends keep coming, the roller keeps adding segments,
 * and a WebSocket subscriber replays from seq 1 (paced by its credit window, so it is still in the
 * cold part when segments are merged and the old ones deleted with no grace period). Every entry
 * reaches the subscriber exactly once, in order; compaction lowers the segment count; verify is ok.
 */
@Timeout(120)
class ColdCompactionIT {
    private static final String WS = "compact";
    private static final String LOG = "l";
    private static final int PRELOAD = 30_000;

    @TempDir
    Path dir;

    @Test
    void compactionDuringAppendsRollsAndAReplayShouldKeepEveryEntryExactlyOnceInOrder() throws Exception {
        try (TestServer server = TestServer.start(dir, ColdLogs.settings(1_000))) {
            Http http = server.http;
            for (int b = 0; b < PRELOAD / 500; b++) { // ~3 s, so rolled hot files are dropped
                ColdLogs.append(http, WS, LOG, b * 500L + 1, 500);
                Thread.sleep(40);
            }
            await("many small segments, most of the log cold only", Duration.ofSeconds(30), () -> {
                JsonNode s = coldStatus(http, WS, LOG);
                return s.get("segments").asInt() >= 10 && s.get("hotStoredFirst").asLong() > PRELOAD / 2;
            });

            List<String> failures = new CopyOnWriteArrayList<>();
            AtomicBoolean appending = new AtomicBoolean(true);
            AtomicLong appended = new AtomicLong(PRELOAD);
            Thread appender = Thread.ofVirtual().start(() -> {
                while (appending.get()) {
                    long from = appended.get() + 1;
                    try {
                        Http.Reply r = http.post(ColdLogs.logPath(WS, LOG) + "/entries", ColdLogs.batch(from, 20));
                        if (r.status() != 200 || r.json().get("firstSeq").asLong() != from) {
                            failures.add("append at " + from + ": " + r.status() + " " + r.body());
                            return;
                        }
                        appended.set(from + 19);
                        Thread.sleep(10);
                    } catch (RuntimeException | InterruptedException e) {
                        failures.add("append at " + from + ": " + e);
                        return;
                    }
                }
            });

            AtomicLong expect = new AtomicLong(1); // the next seq the subscriber must see
            AtomicBoolean subscribed = new AtomicBoolean(true);
            WsClient ws = WsClient.connect(server.wsUrl(WS));
            ws.request("subscribe", "\"log\":\"" + LOG + "\",\"from\":1,\"sub\":\"r\",\"window\":200");
            Thread subscriber = Thread.ofVirtual().start(() -> {
                try {
                    while (subscribed.get()) {
                        JsonNode f = ws.frames.poll(100, TimeUnit.MILLISECONDS);
                        if (f == null || f.has("id")) {
                            if (f != null && !f.path("ok").asBoolean()) {
                                failures.add("subscriber request failed: " + f);
                            }
                            continue;
                        }
                        String type = f.path("type").asText();
                        if ("entries".equals(type)) {
                            for (JsonNode e : f.get("entries")) {
                                long want = expect.get();
                                if (e.get("seq").asLong() != want || e.get("data").get("n").asLong() != want) {
                                    failures.add("subscriber expected seq " + want + ", got " + e);
                                    return;
                                }
                                expect.incrementAndGet();
                            }
                            Thread.sleep(15); // a paced reader: ~13,000 entries/s through a window of 200
                            ws.request("credit", "\"sub\":\"r\",\"n\":" + f.get("entries").size());
                        } else if ("closed".equals(type) || "gap".equals(type)) {
                            failures.add("subscription ended: " + f);
                            return;
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });

            await("the subscriber replaying the cold part", Duration.ofSeconds(30), () -> expect.get() > 2_000 || !failures.isEmpty());
            JsonNode first = compact(http);
            assertTrue(expect.get() < PRELOAD / 2, "the first compaction ran while the replay was still in the cold part (at "
                    + expect.get() + ")");
            await("the replay past the preloaded entries", Duration.ofSeconds(30), () -> expect.get() > PRELOAD || !failures.isEmpty());
            await("new segments rolled after the first compaction", Duration.ofSeconds(30),
                    () -> coldStatus(http, WS, LOG).get("segments").asInt() > first.get("segmentsAfter").asInt() + 2);
            JsonNode second = compact(http); // while appends and rolls continue and the subscriber tails live

            appending.set(false);
            appender.join();
            long head = appended.get();
            await("the subscriber to receive every entry", Duration.ofSeconds(60), () -> expect.get() > head || !failures.isEmpty());
            subscribed.set(false);
            subscriber.join();
            ws.close();
            assertTrue(failures.isEmpty(), failures.toString());
            assertEquals(head + 1, expect.get(), "every entry delivered once");
            System.out.println("ColdCompactionIT: " + head + " entries; compaction 1 " + first + "; compaction 2 " + second);

            assertEquals(head, ColdLogs.readAllForward(http, WS, LOG, 1000, "after compaction"));
            JsonNode report = ColdLogs.verify(http, WS, LOG);
            assertTrue(report.get("ok").asBoolean(), report.toString());
            assertEquals(0, coldStatus(http, WS, LOG).get("pendingDeletes").asInt(), "retired segments collected");
        }
    }

    /** Merges everything (one target big enough for all) with no grace period, and checks the count dropped. */
    private static JsonNode compact(Http http) {
        Http.Reply r = http.post(ColdLogs.logPath(WS, LOG) + "/cold/compact", "{\"targetBytes\":1073741824,\"graceSeconds\":0}");
        assertEquals(200, r.status(), r.body());
        JsonNode report = r.json();
        assertTrue(report.get("merged").asInt() >= 1, report.toString());
        assertTrue(report.get("segmentsAfter").asInt() < report.get("segmentsBefore").asInt(), report.toString());
        return report;
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.Http;
import io.strand.app.testing.WsClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A subscriber that stops reading (its socket's receive window fills and stays full) and one that
 * reads a frame every 50 ms, while 50,000 entries of 512 bytes are appended. The server runs in a
 * child JVM with a 128 MiB heap, less than what it would take to buffer the stream for the stalled
 * socket (SPEC §1: a subscription is a cursor, never a buffer). Other clients are unaffected (every
 * append acknowledged, a fast subscriber gets everything promptly), the stalled socket stays open,
 * and once it reads again every subscriber gets every seq exactly once, in order.
 */
@Timeout(300)
@FaultTest
class SubscriberStallIT {
    private static final String LOG = "firehose";
    private static final int ENTRIES = 50_000;
    private static final int BATCH = 500;

    @TempDir
    Path dir;

    @Test
    @Scenario("never-reading + slow subscriber, 50k entries")
    void aStalledSubscriberShouldCostNoMemoryAndMissNothing(ReliabilityRow row) throws Exception {
        try (ServerProcess child = ServerProcess.start(dir, List.of("--durability", "os", "--auth", "false"), List.of("-Xmx128m"))) {
            String ws = child.url.replace("http://", "ws://") + "/v1/ws/acme/socket";
            Http http = new Http(child.url, null);
            WsClient stalled = WsClient.slow(ws); // takes the subscribe reply, then reads nothing
            assertTrue(stalled.reply(stalled.request("subscribe", "\"log\":\"" + LOG + "\",\"from\":1"), 10_000).get("ok").asBoolean());
            WsClient slow = WsClient.slow(ws);
            assertTrue(slow.reply(slow.request("subscribe", "\"log\":\"" + LOG + "\",\"from\":1"), 10_000).get("ok").asBoolean());
            WsClient fast = WsClient.connect(ws);
            assertTrue(fast.reply(fast.request("subscribe", "\"log\":\"" + LOG + "\",\"from\":1"), 10_000).get("ok").asBoolean());
            SeqCheck fastSeen = SeqCheck.start(fast, ENTRIES);
            long rssBefore = rssAnonKiB(child);

            String payload = "x".repeat(512);
            long slowestAppend = 0;
            long requests = 0;
            long rssMax = rssBefore;
            for (int from = 1; from <= ENTRIES; from += BATCH) {
                StringBuilder body = new StringBuilder("{\"entries\":[");
                for (int i = 0; i < BATCH; i++) {
                    body.append(i == 0 ? "" : ",").append("{\"data\":{\"n\":").append(from + i).append(",\"p\":\"").append(payload).append("\"}}");
                }
                long t0 = System.nanoTime();
                Http.Reply r = http.post("/v1/ws/acme/logs/" + LOG + "/entries", body.append("]}").toString());
                requests++;
                slowestAppend = Math.max(slowestAppend, (System.nanoTime() - t0) / 1_000_000);
                assertEquals(200, r.status(), r.body());
                assertEquals(from, r.json().get("firstSeq").asLong());
                slow.demand(1); // the slow reader: one frame per batch appended
                rssMax = Math.max(rssMax, rssAnonKiB(child));
            }
            fastSeen.awaitAll(60);
            long rssAfter = rssAnonKiB(child);
            assertFalse(stalled.closed.isDone(), "the stalled subscriber stays connected");
            assertFalse(slow.closed.isDone(), "the slow subscriber stays connected");

            SeqCheck slowSeen = SeqCheck.start(slow, ENTRIES);
            slow.demand(Long.MAX_VALUE);
            SeqCheck stalledSeen = SeqCheck.start(stalled, ENTRIES);
            stalled.demand(Long.MAX_VALUE);
            slowSeen.awaitAll(120);
            stalledSeen.awaitAll(120);
            long lost = 0;
            long duplicated = 0;
            long gaps = 0;
            for (SeqCheck c : List.of(fastSeen, slowSeen, stalledSeen)) {
                lost += ENTRIES - c.delivered.get();
                duplicated += c.duplicated.get();
                gaps += c.gaps.get();
            }
            String summary = String.format("server anon RSS %d→%d MiB (max %d) with -Xmx128m; slowest append %d ms",
                    rssBefore >> 10, rssAfter >> 10, rssMax >> 10, slowestAppend);
            System.out.println("SubscriberStallIT: " + summary);
            row.runs(1).operations(requests).acknowledged(ENTRIES).history(lost, duplicated, gaps).note(summary);
            assertEquals(0, lost + duplicated + gaps, "every subscriber gets every seq once, in order");
            assertTrue(rssMax - rssBefore < 256 << 10, "server memory stayed bounded: " + summary);
            stalled.close();
            slow.close();
            fast.close();
        }
    }

    /** The anonymous (heap and native, not file-mapped) resident memory of the child, from /proc. */
    static long rssAnonKiB(ServerProcess child) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(child.process.pid()), "status"))) {
            if (line.startsWith("RssAnon:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        throw new IllegalStateException("no RssAnon in /proc status");
    }

    /**
     * Drains one client's frames on a virtual thread and checks its subscription's seqs: consecutive from
     * 1, none twice; a {@code gap} frame or a jump counts as a gap. Counters are atomics read by the test thread.
     */
    static final class SeqCheck {
        final AtomicLong delivered = new AtomicLong();
        final AtomicLong duplicated = new AtomicLong();
        final AtomicLong gaps = new AtomicLong();
        private final Thread thread;

        private SeqCheck(WsClient client, long total) {
            thread = Thread.ofVirtual().start(() -> {
                long expect = 1;
                while (expect <= total) {
                    JsonNode f;
                    try {
                        f = client.frames.poll(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (f == null) {
                        return;
                    }
                    String type = f.path("type").asText();
                    if ("gap".equals(type)) {
                        gaps.incrementAndGet();
                    } else if ("entries".equals(type)) {
                        for (JsonNode e : f.get("entries")) {
                            long seq = e.get("seq").asLong();
                            if (seq < expect) {
                                duplicated.incrementAndGet();
                                continue;
                            }
                            if (seq > expect || e.get("data").get("n").asLong() != seq) {
                                gaps.incrementAndGet();
                            }
                            delivered.incrementAndGet();
                            expect = seq + 1;
                        }
                    }
                }
            });
        }

        static SeqCheck start(WsClient client, long total) {
            return new SeqCheck(client, total);
        }

        void awaitAll(int seconds) throws InterruptedException {
            thread.join(java.time.Duration.ofSeconds(seconds));
        }
    }
}

package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.coldStatus;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * kill at each step of the hot → cold roll (STYLE.md): a child server armed with a fail point halts
 * the JVM (like SIGKILL) right after the segment upload, after its verification, or after the
 * manifest commit. Restarted without it, the log must hold every acknowledged batch at its seq,
 * dense, with no entry twice and exact content; the roll completes; and once orphans (an upload
 * no manifest names) are cleared, {@code cold/verify} is clean.
 */
@Timeout(600)
@FaultTest
class ColdCrashIT {
    private static final int LOOPS = ReliabilityReport.loops(1, 3);
    private static final String WS = "crash";
    private static final String LOG = "rolled";
    private static final int HOT_MAX = 2_000;
    private static final int BATCH = 100;
    private static final List<String> ARGS = List.of("--durability", "os", "--hot-max-entries", String.valueOf(HOT_MAX),
            "--hot-roll-cycle", "secondly", "--auth", "false");

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"roll.afterUpload", "roll.afterVerify", "roll.afterManifest"})
    @Scenario("kill at a roll step")
    void aCrashAtEachRollStepShouldLoseAndDuplicateNothing(String failpoint, ReliabilityRow row) throws Exception {
        long sent = 0;
        long acknowledged = 0;
        for (int loop = 0; loop < LOOPS; loop++) {
            long[] counts = crashAndCheck(dir.resolve("run-" + loop), failpoint);
            sent += counts[0];
            acknowledged += counts[1];
            row.runs(loop + 1).operations(sent).acknowledged(acknowledged).history(0, 0, 0); // checkEverything passed
        }
    }

    /** One kill at {@code failpoint} and the checks after it, in a fresh data dir; returns {batches sent, acknowledged}. */
    private long[] crashAndCheck(Path dir, String failpoint) throws Exception {
        Map<Long, Long> acked = new HashMap<>(); // batch number -> firstSeq
        long batches = 0;
        try (ServerProcess child = ServerProcess.start(dir, ARGS, List.of("-Dstrand.failpoint=" + failpoint))) {
            Http http = new Http(child.url, null);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (child.process.isAlive()) {
                assertTrue(System.nanoTime() < deadline, "the child never reached " + failpoint);
                long b = batches++;
                try {
                    Http.Reply r = http.post(ColdLogs.logPath(WS, LOG) + "/entries", batch(b));
                    assertEquals(200, r.status(), r.body());
                    acked.put(b, r.json().get("firstSeq").asLong());
                } catch (IllegalStateException e) {
                    break; // the child halted under this request: it is unacknowledged
                }
            }
            assertTrue(child.process.waitFor(30, TimeUnit.SECONDS), "child exits by itself");
            assertEquals(137, child.process.exitValue(), "the child halted at the fail point");
        }
        System.out.println("ColdCrashIT " + failpoint + ": " + acked.size() + " batches acknowledged of " + batches + " sent");
        assertTrue(acked.size() * BATCH > HOT_MAX, "appends passed the hot threshold");

        try (ServerProcess child = ServerProcess.start(dir, ARGS, List.of())) {
            Http http = new Http(child.url, null);
            long head = checkEverything(http, acked, batches, failpoint + " after restart");
            // Reading opened the log, which queues a roll check; the roll lock then makes POST roll wait for
            // any roll in flight before rolling the rest, so no upload is in flight when orphans are cleared.
            await("a committed cold segment", Duration.ofSeconds(30), () -> coldStatus(http, WS, LOG).get("segments").asInt() > 0);
            Http.Reply roll = http.post(ColdLogs.logPath(WS, LOG) + "/cold/roll", "");
            assertEquals(200, roll.status(), roll.body());
            JsonNode status = coldStatus(http, WS, LOG);
            assertEquals(head, status.get("lastSeq").asLong(), "everything rolled: " + status);
            JsonNode before = ColdLogs.verify(http, WS, LOG);
            assertTrue(before.get("problems").isEmpty(), "no segment problem, orphans at most: " + before);
            Http.Reply deleted = http.delete(ColdLogs.logPath(WS, LOG) + "/cold/orphans?minAgeSeconds=0");
            assertEquals(200, deleted.status(), deleted.body());
            JsonNode after = ColdLogs.verify(http, WS, LOG);
            assertTrue(after.get("ok").asBoolean(), after.toString());
            System.out.println("ColdCrashIT " + failpoint + ": orphans before clean-up " + before.get("orphans").size()
                    + ", deleted " + deleted.json().get("deleted") + "; " + status);
            checkEverything(http, acked, batches, failpoint + " after the roll completed");
            // and the log keeps taking appends at the next seq
            Http.Reply more = http.post(ColdLogs.logPath(WS, LOG) + "/entries", batch(batches));
            assertEquals(head + 1, more.json().get("firstSeq").asLong(), more.body());
        }
        return new long[] {batches, acked.size()};
    }

    /** Batch {@code b}: {@code {"b":b,"i":0..99}}. */
    private static String batch(long b) {
        StringBuilder sb = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < BATCH; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"data\":{\"b\":").append(b).append(",\"i\":").append(i).append("}}");
        }
        return sb.append("]}").toString();
    }

    /** Dense from 1, whole batches in order, each batch at most once, every acknowledged one at its acked seq. */
    private static long checkEverything(Http http, Map<Long, Long> acked, long sent, String when) {
        Map<Long, Long> seen = new HashMap<>();
        long expect = 1;
        long next = 1;
        long batchStart = -1;
        long currentBatch = -1;
        while (true) {
            Http.Reply r = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=" + next + "&limit=1000");
            assertEquals(200, r.status(), when + ": " + r.body());
            JsonNode page = r.json();
            if (page.get("entries").isEmpty()) {
                break;
            }
            for (JsonNode e : page.get("entries")) {
                long seq = e.get("seq").asLong();
                assertEquals(expect++, seq, when + ": seqs dense");
                long b = e.get("data").get("b").asLong();
                int i = e.get("data").get("i").asInt();
                if (i == 0) {
                    assertNull(seen.put(b, seq), when + ": batch " + b + " appears twice");
                    assertTrue(b < sent, when + ": batch " + b + " was never sent");
                    currentBatch = b;
                    batchStart = seq;
                } else {
                    assertEquals(currentBatch, b, when + ": batch " + b + " is whole at seq " + seq);
                    assertEquals(batchStart + i, seq, when + ": batch " + b + " in order");
                }
            }
            next = page.get("next").asLong();
        }
        assertEquals(0, (expect - 1) % BATCH, when + ": only whole batches");
        for (Map.Entry<Long, Long> a : acked.entrySet()) {
            assertEquals(a.getValue(), seen.get(a.getKey()), when + ": acknowledged batch " + a.getKey() + " lost or moved");
        }
        return expect - 1;
    }
}

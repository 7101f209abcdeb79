package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.coldStatus;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * kill -9 around a trim: right after its ack ({@code ack}: the test kills the child), after its
 * commit point but before the reply ({@code trim.afterCommit}), and at each step of giving space
 * back — after the cold manifest retired segments ({@code trim.afterColdManifest}), after hot cycle
 * files were deleted ({@code trim.afterHotDrop}). (Deleting retired segments after the grace period
 * is garbage collection, whose crash steps compaction's tests cover.) After a restart: {@code first} is where the trim put it, nothing
 * below it is served, every entry from it to the head is there with its content, the space is
 * given back, and appends continue at head+1.
 */
@Timeout(180)
class RetentionCrashIT {
    private static final String WS = "crash";
    private static final String LOG = "trimmed";
    private static final List<String> ARGS = List.of("--hot-max-entries", "4000", "--hot-roll-cycle", "secondly",
            "--auth", "false", "--retention-check-interval", "1s");

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"ack", "trim.afterCommit", "trim.afterColdManifest", "trim.afterHotDrop"})
    void aCrashAroundATrimShouldKeepFirstWhereItWasPutAndLoseNothingAboveIt(String failpoint) throws Exception {
        long head = 0;
        long before;
        boolean acked;
        List<String> props = failpoint.equals("ack") ? List.of() : List.of("-Dstrand.failpoint=" + failpoint);
        try (ServerProcess child = ServerProcess.start(dir, ARGS, props)) {
            Http http = new Http(child.url, null);
            for (int b = 0; b < 60; b++) { // ~6 s at 1,000 entries/s over one-second hot files
                ColdLogs.append(http, WS, LOG, head + 1, 100);
                head += 100;
                Thread.sleep(100);
            }
            await("cold segments", Duration.ofSeconds(30), () -> coldStatus(http, WS, LOG).get("segments").asInt() > 0);
            before = head - 200; // hot cycle files lie wholly between the cold part and first
            Http.Reply trim;
            try {
                trim = http.post(ColdLogs.logPath(WS, LOG) + "/trim", "{\"before\":" + before + "}");
                assertEquals(200, trim.status(), trim.body());
                assertEquals(before, trim.json().get("first").asLong());
                acked = true;
            } catch (IllegalStateException e) {
                acked = false; // the child halted under the request
            }
            if (failpoint.equals("ack")) {
                child.kill();
            } else {
                assertTrue(child.process.waitFor(60, TimeUnit.SECONDS), "the child reached " + failpoint);
                assertEquals(137, child.process.exitValue(), "the child halted at the fail point");
            }
        }
        // Every fail point lies past the trim's commit point. The retention agent is woken as the trim
        // commits, so its cold step (trim.afterColdManifest, trim.afterHotDrop) can halt the child before
        // the reply leaves, as trim.afterCommit always does: unacknowledged, the trim must hold all the same.
        assertTrue(acked || !failpoint.equals("ack"), "the trim was acknowledged before the kill");
        try (ServerProcess child = ServerProcess.start(dir, ARGS, List.of())) {
            Http http = new Http(child.url, null);
            JsonNode info = ColdLogs.info(http, WS, LOG);
            // past its commit point the trim holds even unacknowledged; acknowledged, it always holds
            assertEquals(before, info.get("first").asLong(), failpoint + ": " + info);
            assertEquals(head, info.get("head").asLong());
            check(http, before, head, failpoint + " after restart");
            long hotBefore = info.get("bytesHot").asLong();
            await("space below first given back", Duration.ofSeconds(30), () -> {
                JsonNode cold = coldStatus(http, WS, LOG);
                // cold segments from seq 1 retired; hot files start within a second (one cycle file) of first
                return cold.get("firstSeq").asLong() != 1 && cold.get("hotStoredFirst").asLong() > before - 1_500;
            });
            check(http, before, head, failpoint + " after the space was given back");
            System.out.println("RetentionCrashIT " + failpoint + ": head " + head + ", first " + before + ", hot bytes "
                    + hotBefore + " -> " + ColdLogs.info(http, WS, LOG).get("bytesHot") + ", cold " + coldStatus(http, WS, LOG));
            ColdLogs.append(http, WS, LOG, head + 1, 1);
        }
    }

    /** From seq 1: a gap up to {@code first-1}, then every entry to the head, dense, each with its own content. */
    private static void check(Http http, long first, long head, String when) {
        JsonNode page = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=1&limit=1000").json();
        assertEquals(1, page.get("gap").get("from").asLong(), when + ": " + page.get("gap"));
        assertEquals(first - 1, page.get("gap").get("to").asLong(), when);
        long expect = first;
        while (true) {
            for (JsonNode e : page.get("entries")) {
                ColdLogs.checkEntry(expect++, e, when);
            }
            if (page.get("entries").isEmpty() || expect > head) {
                break;
            }
            page = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=" + expect + "&limit=1000").json();
            assertTrue(page.get("gap") == null || page.get("gap").isNull(), when + ": no gap above first");
        }
        assertEquals(head + 1, expect, when + ": every entry from first to the head");
    }
}

package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.coldStatus;
import static io.strand.app.testing.ColdLogs.info;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.PacedAppender;
import io.strand.app.testing.TestServer;
import io.strand.coldtier.S3ProxyFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object store goes down (s3proxy stopped: connections refused) while appends keep coming:
 * SPEC §7 says appends never block or fail on it, the hot part grows past its threshold, a read of
 * cold entries that are not cached answers {@code 503 cold_unavailable}, and once the store is back
 * the backlog rolls by itself and verifies.
 *
 * <p>The outage lasts {@link #OUTAGE_SECONDS}; appends run at about 2,000
 * entries/s through all of it.
 */
@Timeout(180)
@FaultTest
class ColdStoreDownIT {
    private static final String WS = "down";
    private static final String LOG = "l";
    private static final int HOT_MAX = 2_000;
    /** 30 s in the reliability profile, as the issue asks; 10 s in the default build. */
    private static final int OUTAGE_SECONDS = ReliabilityReport.loops(10, 30);

    @TempDir
    Path dir;
    S3ProxyFixture s3;

    @BeforeEach
    void startS3() {
        s3 = ColdLogs.startS3();
    }

    @AfterEach
    void stopS3() {
        s3.close();
    }

    @Test
    @Scenario("object store down (s3proxy stopped)")
    void appendsShouldNeverFailAndTheBacklogShouldRollWhenTheStoreReturns(ReliabilityRow row) throws Exception {
        Map<String, String> env = ColdLogs.withS3(ColdLogs.settings(HOT_MAX), s3, "cold", "down-it");
        try (TestServer server = TestServer.start(dir, env)) {
            Http http = server.http;
            PacedAppender appender = PacedAppender.start(http, WS, LOG, 50);
            List<String> failures = appender.failures();

            // Before the outage: rolls run and old hot files go, so seqs past the first segment live only in the store.
            // (Nothing reads them, so no block of theirs is cached; the roller's own time lookup touches only segment 1.)
            await("cold-only entries beyond the first segments", Duration.ofSeconds(30),
                    () -> coldStatus(http, WS, LOG).get("hotStoredFirst").asLong() > 8_000);
            JsonNode before = coldStatus(http, WS, LOG);
            long probe = 6_000; // cold only, and never read
            System.out.println("ColdStoreDownIT before the outage: " + before);

            s3.stop();
            long outageStart = System.nanoTime();
            Thread.sleep(1_000);
            Http.Reply coldRead = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=" + probe + "&limit=10");
            assertEquals(503, coldRead.status(), coldRead.body());
            assertEquals("cold_unavailable", coldRead.errorCode(), coldRead.body());
            System.out.println("ColdStoreDownIT cold read while down: " + coldRead.body());
            Http.Reply hotRead = http.get(ColdLogs.logPath(WS, LOG) + "/entries?before=end&limit=10");
            assertEquals(200, hotRead.status(), "hot reads keep working: " + hotRead.body());
            await("the outage to last " + OUTAGE_SECONDS + " s", Duration.ofSeconds(OUTAGE_SECONDS + 5),
                    () -> System.nanoTime() - outageStart >= OUTAGE_SECONDS * 1_000_000_000L);
            JsonNode during = info(http, WS, LOG);
            long hotDuring = during.get("head").asLong() - during.get("hotFirst").asLong() + 1;
            assertTrue(hotDuring > HOT_MAX, "the hot part grew past its threshold while the store was down: " + during);
            assertTrue(failures.isEmpty(), "appends failed during the outage: " + failures);

            s3.restart();
            long restored = System.nanoTime();
            await("the backlog to roll", Duration.ofSeconds(60), () -> {
                JsonNode s = coldStatus(http, WS, LOG);
                return s.get("segments").asInt() > before.get("segments").asInt()
                        && s.get("head").asLong() - s.get("hotFirst").asLong() + 1 <= HOT_MAX;
            });
            JsonNode after = coldStatus(http, WS, LOG);
            System.out.printf("ColdStoreDownIT: hot part %d entries at the end of the outage; backlog rolled %.1f s after the store returned; %s%n",
                    hotDuring, (System.nanoTime() - restored) / 1e9, after);
            assertTrue(after.get("node").get("rollFailures").asLong() > 0, "the roller saw the outage: " + after);
            Http.Reply metrics = http.get("/observe/metrics");
            assertTrue(metrics.body().contains("strand_cold_roll_failures"), "roll failures are a metric too");

            appender.stop();
            assertTrue(failures.isEmpty(), "no append failed: " + failures);
            row.runs(1).operations(appender.requests()).acknowledged(appender.appended() / 50);
            assertEquals(appender.appended(), ColdLogs.readAllForward(http, WS, LOG, 1000, "after the outage"));
            row.history(0, 0, 0).note(String.format("%d s outage, hot part grew to %d entries, rolled %.1f s after",
                    OUTAGE_SECONDS, hotDuring, (System.nanoTime() - restored) / 1e9));
            JsonNode report = ColdLogs.verify(http, WS, LOG);
            assertTrue(report.get("ok").asBoolean(), report.toString());
        }
    }
}

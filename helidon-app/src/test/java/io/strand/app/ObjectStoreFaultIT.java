package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.coldStatus;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.FaultProxy;
import io.strand.app.testing.Http;
import io.strand.app.testing.PacedAppender;
import io.strand.coldtier.S3ProxyFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The object store misbehaves while appends keep coming (SPEC §7): a {@link FaultProxy} in front of
 * a real S3-compatible server (s3proxy on loopback) resets every connection (down), delays every chunk
 * (slow), or answers every request {@code 500 InternalError}. The server is a child process started
 * with {@code --cold s3://… --s3-endpoint <proxy>}. Appends must never fail or stall, a read of cold
 * entries nobody cached answers {@code 503 cold_unavailable} while the store is down or erroring (and
 * the exact entries or 503 while it is slow), the backlog rolls by itself once the store is healthy,
 * and a history check reads every acknowledged entry back once, in order, with its content.
 */
@Timeout(300)
@FaultTest
class ObjectStoreFaultIT {
    private static final String WS = "s3fault";
    private static final String LOG = "l";
    private static final int HOT_MAX = 2_000;
    private static final int BATCH = 50;
    private static final int FAULT_SECONDS = ReliabilityReport.loops(8, 30);
    /** An append that takes longer than this while the store misbehaves counts as blocked. */
    private static final long MAX_APPEND_MILLIS = 5_000;

    static S3ProxyFixture s3;

    @TempDir
    Path dir;

    @BeforeAll
    static void startS3() {
        s3 = S3ProxyFixture.startTransient("cold");
    }

    @AfterAll
    static void stopS3() {
        s3.close();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = FaultProxy.Mode.class, names = {"DOWN", "SLOW", "ERROR_500"})
    @Scenario("object store fault via proxy")
    void appendsShouldNeverFailOrStallAndTheBacklogShouldRollAfterTheFault(FaultProxy.Mode fault, ReliabilityRow row) throws Exception {
        row.scenario(switch (fault) {
            case DOWN -> "object store down (connections reset)";
            case SLOW -> "object store slow (+500 ms per chunk)";
            default -> "object store answering 500";
        });
        try (FaultProxy proxy = new FaultProxy(s3.port());
                ServerProcess child = ServerProcess.start(dir, List.of("--durability", "os", "--auth", "false",
                        "--hot-max-entries", String.valueOf(HOT_MAX), "--hot-roll-cycle", "secondly",
                        "--cold", "s3://cold/" + fault.name().toLowerCase(), "--s3-endpoint", proxy.endpoint(),
                        "--s3-region", "us-east-1", "--s3-path-style"),
                        List.of("-Daws.accessKeyId=" + S3ProxyFixture.ACCESS_KEY, "-Daws.secretAccessKey=" + S3ProxyFixture.SECRET_KEY))) {
            Http http = new Http(child.url, null);
            AtomicBoolean faultOn = new AtomicBoolean();
            AtomicLong slowestDuringFault = new AtomicLong();
            PacedAppender appender = PacedAppender.start(http, WS, LOG, BATCH, ms -> {
                if (faultOn.get()) {
                    slowestDuringFault.accumulateAndGet(ms, Math::max);
                }
            });
            List<String> failures = appender.failures();

            await("cold-only entries beyond the first segments", Duration.ofSeconds(60),
                    () -> coldStatus(http, WS, LOG).get("hotStoredFirst").asLong() > 8_000);
            JsonNode before = coldStatus(http, WS, LOG);
            System.out.println("ObjectStoreFaultIT " + fault + " before: " + before);

            proxy.mode(fault);
            faultOn.set(true);
            long faultStart = System.nanoTime();
            long coldReads = 0;
            // seqs 4,001.. and 6,001.. are cold only and never read, so no block of theirs is cached
            for (long probe : new long[] {4_001, 6_001}) {
                Http.Reply r = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=" + probe + "&limit=10");
                coldReads++;
                System.out.println("ObjectStoreFaultIT " + fault + " cold read from " + probe + ": " + r.status() + " " + r.body());
                if (fault == FaultProxy.Mode.SLOW && r.status() == 200) {
                    long expect = probe;
                    for (JsonNode e : r.json().get("entries")) {
                        ColdLogs.checkEntry(expect++, e, "a slow cold read");
                    }
                    assertEquals(probe + 10, expect, "a slow cold read is whole: " + r.body());
                } else {
                    assertEquals(503, r.status(), r.body());
                    assertEquals("cold_unavailable", r.errorCode(), r.body());
                }
            }
            Http.Reply hotRead = http.get(ColdLogs.logPath(WS, LOG) + "/entries?before=end&limit=10");
            assertEquals(200, hotRead.status(), "hot reads keep working: " + hotRead.body());
            await("the fault to last " + FAULT_SECONDS + " s", Duration.ofSeconds(FAULT_SECONDS + 5),
                    () -> System.nanoTime() - faultStart >= FAULT_SECONDS * 1_000_000_000L || !failures.isEmpty());
            JsonNode during = ColdLogs.info(http, WS, LOG); // cold status reads the manifest from the store: 503 now
            long hotDuring = during.get("head").asLong() - during.get("hotFirst").asLong() + 1;
            if (fault != FaultProxy.Mode.SLOW) {
                assertTrue(hotDuring > HOT_MAX, "the hot part grew past its threshold while the store failed: " + during);
            }
            assertTrue(failures.isEmpty(), "appends failed during the fault: " + failures);

            proxy.mode(FaultProxy.Mode.PASS);
            faultOn.set(false);
            long healed = System.nanoTime();
            await("the backlog to roll", Duration.ofSeconds(90), () -> {
                JsonNode s = coldStatus(http, WS, LOG);
                return s.get("segments").asInt() > before.get("segments").asInt()
                        && s.get("head").asLong() - s.get("hotFirst").asLong() + 1 <= HOT_MAX;
            });
            double rolledAfter = (System.nanoTime() - healed) / 1e9;
            appender.stop();
            assertTrue(failures.isEmpty(), "no append failed: " + failures);
            row.runs(1).operations(appender.requests() + coldReads).acknowledged(appender.appended() / BATCH);
            assertEquals(appender.appended(), ColdLogs.readAllForward(http, WS, LOG, 1000, fault + " after the fault"));
            JsonNode report = ColdLogs.verify(http, WS, LOG);
            assertTrue(report.get("ok").asBoolean(), report.toString());
            String summary = String.format("%d s fault, %d store connections %s, slowest append %d ms, hot part %d entries,"
                    + " backlog rolled %.1f s after", FAULT_SECONDS, proxy.faulted.get(), fault == FaultProxy.Mode.SLOW ? "delayed" : "failed",
                    slowestDuringFault.get(), hotDuring, rolledAfter);
            System.out.println("ObjectStoreFaultIT " + fault + ": " + summary + "; " + coldStatus(http, WS, LOG));
            row.history(0, 0, 0).note(summary);
            assertTrue(slowestDuringFault.get() < MAX_APPEND_MILLIS, "appends never blocked on the store: " + summary);
        }
    }
}

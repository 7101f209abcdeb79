package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.checkEntry;
import static io.strand.app.testing.ColdLogs.coldStatus;
import static io.strand.app.testing.ColdLogs.info;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.coldtier.S3ProxyFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The cold tier through the real server, on a local directory and on S3 (s3proxy on loopback):
 * 100,000 entries with a 5,000-entry hot threshold roll to cold by themselves, and every read
 * (forward and backward pages, a WebSocket replay from seq 1) returns exactly 1..100,000 once each
 * across the hot/cold boundary, before and after a restart on the same data dir and store.
 */
@Timeout(120)
class ColdTierIT {
    private static final String WS = "acme";
    private static final String LOG = "events";
    private static final int TOTAL = 100_000;
    private static final int HOT_MAX = 5_000;
    static S3ProxyFixture s3;

    @TempDir
    Path dir;

    @BeforeAll
    static void startS3() {
        s3 = ColdLogs.startS3();
    }

    @AfterAll
    static void stopS3() {
        s3.close();
    }

    private Map<String, String> settings(String store) {
        Map<String, String> env = ColdLogs.settings(HOT_MAX);
        return "s3".equals(store) ? ColdLogs.withS3(env, s3, "cold", "tier-it-" + System.nanoTime()) : env;
    }

    @ParameterizedTest
    @ValueSource(strings = {"file", "s3"})
    void everyEntryShouldReadOnceAcrossTheHotColdBoundaryBeforeAndAfterRestart(String store) throws Exception {
        Map<String, String> env = settings(store);
        long coldBoundary;
        try (TestServer server = TestServer.start(dir, env)) {
            Http http = server.http;
            // Appends spread over ~5 s, so the one-second hot files of rolled entries can be dropped.
            for (int b = 0; b < TOTAL / 1000; b++) {
                ColdLogs.append(http, WS, LOG, b * 1000L + 1, 1000);
                Thread.sleep(40);
            }
            await("the hot part back under " + HOT_MAX + " entries with old hot files dropped", Duration.ofSeconds(60), () -> {
                JsonNode status = coldStatus(http, WS, LOG);
                return status.get("segments").asInt() > 0
                        && status.get("head").asLong() - status.get("hotFirst").asLong() + 1 <= HOT_MAX
                        && status.get("hotStoredFirst").asLong() > TOTAL / 2;
            });
            JsonNode status = coldStatus(http, WS, LOG);
            coldBoundary = status.get("hotStoredFirst").asLong(); // seqs below it exist only in the cold tier
            System.out.println("ColdTierIT " + store + ": " + status);
            JsonNode info = info(http, WS, LOG);
            assertTrue(info.get("coldSegments").asInt() > 0, info.toString());
            assertTrue(info.get("hotFirst").asLong() > 1, info.toString());
            assertEquals(1, info.get("first").asLong(), info.toString());
            assertEquals(TOTAL, info.get("head").asLong(), info.toString());

            readEverything(server, coldBoundary, store + " before restart");
            JsonNode report = ColdLogs.verify(http, WS, LOG);
            assertTrue(report.get("ok").asBoolean(), report.toString());
            assertEquals(status.get("lastSeq").asLong(), report.get("entries").asLong(), "verify read every cold entry");
        }
        try (TestServer server = TestServer.start(dir, env)) {
            readEverything(server, coldBoundary, store + " after restart");
            JsonNode report = ColdLogs.verify(server.http, WS, LOG);
            assertTrue(report.get("ok").asBoolean(), report.toString());
        }
    }

    private static void readEverything(TestServer server, long coldBoundary, String when) {
        Http http = server.http;
        assertEquals(TOTAL, ColdLogs.readAllForward(http, WS, LOG, 1000, when));
        assertEquals(TOTAL, ColdLogs.readAllBackward(http, WS, LOG, 1000, TOTAL, when));
        // one page that starts in the cold tier and ends in the hot files
        JsonNode page = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=" + (coldBoundary - 300) + "&limit=600").json();
        long expect = coldBoundary - 300;
        for (JsonNode e : page.get("entries")) {
            checkEntry(expect++, e, when + " (straddling page)");
        }
        assertEquals(coldBoundary + 300, expect, when + ": straddling page is full");
        // a backward page straddling it too
        JsonNode back = http.get(ColdLogs.logPath(WS, LOG) + "/entries?before=" + (coldBoundary + 300) + "&limit=600").json();
        expect = coldBoundary - 300;
        for (JsonNode e : back.get("entries")) {
            checkEntry(expect++, e, when + " (straddling backward page)");
        }
        assertEquals(coldBoundary + 300, expect, when + ": straddling backward page is full");
        replayFromOne(server, when);
    }

    /** A WebSocket subscription from seq 1 delivers 1..TOTAL once each, in order, then reports caught up. */
    private static void replayFromOne(TestServer server, String when) {
        try (WsClient ws = WsClient.connect(server.wsUrl(WS))) {
            long id = ws.request("subscribe", "\"log\":\"" + LOG + "\",\"from\":1,\"sub\":\"all\"");
            JsonNode reply = ws.reply(id, 10_000);
            assertTrue(reply.get("ok").asBoolean(), reply.toString());
            long expect = 1;
            while (true) {
                JsonNode f = ws.next(20_000);
                String type = f.path("type").asText();
                if ("entries".equals(type)) {
                    for (JsonNode e : f.get("entries")) {
                        checkEntry(expect++, e, when + " (replay)");
                    }
                    assertEquals(expect, f.get("next").asLong(), when + ": replay cursor");
                } else if ("caughtUp".equals(type)) {
                    break;
                } else if ("closed".equals(type) || "gap".equals(type)) {
                    throw new AssertionError(when + ": replay ended with " + f);
                }
            }
            assertEquals(TOTAL + 1, expect, when + ": replay delivered every entry");
        }
    }
}

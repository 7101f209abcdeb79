package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** SPEC §12 over HTTP and the socket: trim, retention policies, gaps for readers behind first, audit. */
@Timeout(120)
class RetentionIT {
    private static final String WS = "ret";

    @TempDir
    Path dir;

    private static String path(String log) {
        return ColdLogs.logPath(WS, log);
    }

    @Test
    void trimAndRetentionShouldAnswerPerSpecShowInInfoBeAuditedAndSurviveARestart() throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of())) {
            Http http = server.http;
            ColdLogs.append(http, WS, "t", 1, 100);
            Http.Reply trim = http.post(path("t") + "/trim", "{\"before\":40}");
            assertEquals(200, trim.status(), trim.body());
            assertEquals(40, trim.json().get("first").asLong());
            assertEquals(100, trim.json().get("head").asLong());
            Http.Reply lower = http.post(path("t") + "/trim", "{\"before\":10}");
            assertEquals(200, lower.status(), lower.body());
            assertEquals(40, lower.json().get("first").asLong(), "first only moves forward");
            Http.Reply past = http.post(path("t") + "/trim", "{\"before\":102}");
            assertEquals(400, past.status(), past.body());
            assertEquals("bad_request", past.errorCode());
            assertEquals(100, past.json().path("error").path("head").asLong(), past.body());
            assertEquals(400, http.post(path("t") + "/trim", "{\"before\":\"x\"}").status());
            assertEquals(400, http.post(path("t") + "/trim", "{}").status());
            assertEquals(400, http.post(path("t") + "/trim", "{\"before\":50,\"x\":1}").status());
            assertEquals(404, http.post(path("none") + "/trim", "{\"before\":1}").status());

            JsonNode page = http.get(path("t") + "/entries?from=1&limit=5").json();
            assertEquals(1, page.get("gap").get("from").asLong(), page.toString());
            assertEquals(39, page.get("gap").get("to").asLong());
            assertEquals(40, page.get("entries").get(0).get("seq").asLong());
            assertEquals(40, page.get("first").asLong());

            Http.Reply put = http.put(path("t") + "/retention", "{\"maxEntries\":30,\"maxAgeSeconds\":null}");
            assertEquals(200, put.status(), put.body());
            assertEquals("{\"maxAgeSeconds\":null,\"maxEntries\":30,\"maxBytes\":null}", put.json().get("retention").toString());
            assertEquals(400, http.put(path("t") + "/retention", "{\"maxEntries\":0}").status());
            assertEquals(400, http.put(path("t") + "/retention", "{\"maxEntrie\":5}").status());
            assertEquals(400, http.put(path("t") + "/retention", "[]").status());
            await("the policy applied", Duration.ofSeconds(30), () -> ColdLogs.info(http, WS, "t").get("first").asLong() == 71);
            JsonNode info = ColdLogs.info(http, WS, "t");
            assertEquals(30, info.get("retention").get("maxEntries").asLong(), info.toString());
            assertTrue(info.get("bytesHot").asLong() > 0, info.toString());
            assertTrue(info.has("bytesCold"), info.toString());

            List<String> actions = new ArrayList<>();
            for (JsonNode e : http.get("/v1/ws/_system/logs/audit/entries?from=1&limit=100").json().get("entries")) {
                actions.add(e.get("data").get("action").asText() + ":" + e.get("data").get("phase").asText());
            }
            assertTrue(actions.containsAll(List.of("log.trim:intent", "log.trim:done", "log.retention:intent", "log.retention:done")),
                    actions.toString());
            // the policy's own trim is audited too (SPEC §12), as the retention worker's
            await("the policy trim audited", Duration.ofSeconds(30), () -> {
                for (JsonNode e : http.get("/v1/ws/_system/logs/audit/entries?from=1&limit=100").json().get("entries")) {
                    JsonNode d = e.get("data");
                    if ("log.trim".equals(d.path("action").asText()) && "retention-worker".equals(d.path("actor").path("jti").asText())
                            && d.path("before").asLong() == 71 && d.path("policy").path("maxEntries").asLong() == 30
                            && ("log:" + WS + "/t").equals(d.path("target").asText())) {
                        return true;
                    }
                }
                return false;
            });
        }
        try (TestServer server = TestServer.start(dir, Map.of())) {
            JsonNode info = ColdLogs.info(server.http, WS, "t");
            assertEquals(71, info.get("first").asLong(), info.toString());
            assertEquals(30, info.get("retention").get("maxEntries").asLong());
            ColdLogs.append(server.http, WS, "t", 101, 1); // seqs are never reused
        }
    }

    @Test
    void serverDefaultsShouldApplyToLogsWithoutAPolicyAndShowInInfo() throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_RETENTION_MAX_ENTRIES", "10",
                "STRAND_RETENTION_CHECK_INTERVAL", "500ms"))) {
            ColdLogs.append(server.http, WS, "d", 1, 50);
            await("the default applied", Duration.ofSeconds(30), () -> ColdLogs.info(server.http, WS, "d").get("first").asLong() == 41);
            JsonNode info = ColdLogs.info(server.http, WS, "d");
            assertEquals(10, info.get("retention").get("maxEntries").asLong(), info.toString());
            assertTrue(info.get("retentionDefault").asBoolean());
            assertEquals(200, server.http.post(path("d") + "/trim", "{\"before\":45}").status()); // an audit entry
            JsonNode audit = server.http.get("/v1/ws/_system/logs/audit").json();
            assertTrue(audit.get("retention").get("maxEntries").isNull(), "the defaults do not apply to _system: " + audit);
        }
    }

    /** A subscriber whose cursor falls behind a trim gets one gap frame and goes on from first; never an error. */
    @Test
    void subscriberBehindATrimShouldGetOneGapFrameAndContinueFromFirst() throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of())) {
            Http http = server.http;
            ColdLogs.append(http, WS, "s", 1, 100);
            try (WsClient ws = WsClient.connect(server.wsUrl(WS))) {
                ws.request("subscribe", "\"log\":\"s\",\"from\":1,\"sub\":\"r\",\"window\":10");
                List<JsonNode> frames = new ArrayList<>();
                long next = 1;
                while (next <= 10) { // the first window: seqs 1..10
                    JsonNode f = ws.frames.poll(10, TimeUnit.SECONDS);
                    assertNotNull(f, "a frame");
                    if ("entries".equals(f.path("type").asText())) {
                        for (JsonNode e : f.get("entries")) {
                            assertEquals(next++, e.get("seq").asLong());
                        }
                    }
                }
                assertEquals(200, http.post(path("s") + "/trim", "{\"before\":50}").status());
                ws.request("credit", "\"sub\":\"r\",\"n\":1000");
                int gaps = 0;
                while (next <= 100) {
                    JsonNode f = ws.frames.poll(10, TimeUnit.SECONDS);
                    assertNotNull(f, "a frame after seq " + (next - 1));
                    frames.add(f);
                    switch (f.path("type").asText()) {
                        case "gap" -> {
                            gaps++;
                            assertEquals(11, f.get("from").asLong(), f.toString());
                            assertEquals(49, f.get("to").asLong(), f.toString());
                            next = 50;
                        }
                        case "entries" -> {
                            for (JsonNode e : f.get("entries")) {
                                assertEquals(next++, e.get("seq").asLong(), "after " + frames);
                            }
                        }
                        case "closed" -> throw new AssertionError("the subscription ended: " + f);
                        default -> { }
                    }
                }
                assertEquals(1, gaps, frames.toString());
            }
        }
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Clients;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.core.Json;
import io.strand.docstore.DocPath;
import io.strand.docstore.DocStore;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(180)
class DocsIT {
    @TempDir
    static Path dir;
    static TestServer server;
    static Http http;

    @BeforeAll
    static void start() {
        server = TestServer.start(dir, Map.of("STRAND_DURABILITY", "fsync"));
        http = server.http;
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Runs {@code body} on 16 sockets at once, each on its own thread. */
    private static void onSixteenSockets(java.util.function.Consumer<WsClient> body) throws InterruptedException {
        Clients.concurrently(16, c -> {
            try (WsClient ws = WsClient.connect(server.wsUrl("acme"))) {
                body.accept(ws);
            }
        });
    }

    @Test
    void sixteenClientsIncrementingOneKeyShouldLoseNothing() throws Exception {
        AtomicInteger conflicts = new AtomicInteger();
        onSixteenSockets(ws -> {
            long[] ids = new long[1000];
            for (int i = 0; i < 1000; i++) { // pipelined
                ids[i] = ws.request("doc.incr", "\"doc\":\"counter\",\"path\":\"n\",\"delta\":1");
            }
            for (int i = 0; i < 1000; i++) {
                JsonNode r = ws.next(30_000);
                if (!r.get("ok").asBoolean()) {
                    conflicts.incrementAndGet();
                }
            }
        });
        assertEquals(0, conflicts.get());
        JsonNode doc = http.get("/v1/ws/acme/docs/counter").json();
        assertEquals(16_000, doc.get("value").get("n").asLong());
    }

    @Test
    void floorDebitRaceShouldSucceedExactlyAsOftenAsTheBalanceAllows() throws Exception {
        assertEquals(200, http.put("/v1/ws/acme/docs/wallet", "{\"value\":{\"balance\":1000}}").status());
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        onSixteenSockets(ws -> {
            for (int i = 0; i < 125; i++) {
                ws.request("doc.incr", "\"doc\":\"wallet\",\"path\":\"balance\",\"delta\":-1,\"floor\":0");
            }
            for (int i = 0; i < 125; i++) {
                JsonNode r = ws.next(30_000);
                if (r.get("ok").asBoolean()) {
                    assertTrue(r.get("value").asLong() >= 0);
                    ok.incrementAndGet();
                } else {
                    assertEquals("floor_violation", r.path("error").path("code").asText());
                    assertEquals(0, r.path("error").path("value").asLong());
                    refused.incrementAndGet();
                }
            }
        });
        assertEquals(1000, ok.get());
        assertEquals(1000, refused.get());
        assertEquals(0, http.get("/v1/ws/acme/docs/wallet").json().get("value").get("balance").asLong());
    }

    @Test
    void casRetryLoopsShouldEndExact() throws Exception {
        http.put("/v1/ws/acme/docs/casdoc", "{\"value\":{\"n\":0}}");
        onSixteenSockets(ws -> {
            for (int i = 0; i < 50; i++) {
                while (true) {
                    JsonNode cur = ws.reply(ws.request("doc.get", "\"doc\":\"casdoc\""), 10_000);
                    long n = cur.get("value").get("n").asLong();
                    JsonNode r = ws.reply(ws.request("doc.cas", "\"doc\":\"casdoc\",\"path\":\"n\",\"expect\":" + n + ",\"value\":" + (n + 1)), 10_000);
                    if (r.get("ok").asBoolean()) {
                        break;
                    }
                    assertEquals("cas_conflict", r.path("error").path("code").asText());
                }
            }
        });
        assertEquals(800, http.get("/v1/ws/acme/docs/casdoc").json().get("value").get("n").asLong());
    }

    @Test
    void applyShouldBeAllOrNothingAndErrorsShouldBeExact() {
        Http.Reply put = http.put("/v1/ws/acme/docs/acct", "{\"value\":{\"balance\":10,\"owner\":{\"name\":\"ann\"}},\"expectVersion\":0}");
        assertEquals(200, put.status(), put.body());
        assertEquals(1, put.json().get("version").asLong());
        LogsHttpIT.expect(409, "version_conflict", http.put("/v1/ws/acme/docs/acct", "{\"value\":{},\"expectVersion\":0}"));
        Http.Reply failed = http.post("/v1/ws/acme/docs/acct/apply", "{\"ops\":[{\"op\":\"incr\",\"path\":\"balance\",\"delta\":-5},"
                + "{\"op\":\"set\",\"path\":\"owner.name\",\"value\":\"bob\"},{\"op\":\"incr\",\"path\":\"balance\",\"delta\":-10,\"floor\":0}]}");
        assertEquals(409, failed.status(), failed.body());
        assertEquals("floor_violation", failed.errorCode());
        assertEquals(2, failed.json().path("error").path("index").asInt());
        JsonNode unchanged = http.get("/v1/ws/acme/docs/acct").json();
        assertEquals(10, unchanged.get("value").get("balance").asLong());
        assertEquals("ann", unchanged.get("value").get("owner").get("name").asText());
        Http.Reply applied = http.post("/v1/ws/acme/docs/acct/apply", "{\"ops\":[{\"op\":\"incr\",\"path\":\"balance\",\"delta\":-5},"
                + "{\"op\":\"remove\",\"path\":\"owner\"},{\"op\":\"cas\",\"path\":\"x\",\"expect\":null,\"value\":1}],\"expectVersion\":1}");
        assertEquals(200, applied.status(), applied.body());
        assertEquals(5, applied.json().get("value").get("balance").asLong());
    }

    @Test
    void badDocInputShouldGetClearErrors() {
        http.put("/v1/ws/acme/docs/shape", "{\"value\":{\"s\":\"text\",\"n\":9223372036854775800,\"o\":{\"a\":1}}}");
        LogsHttpIT.expect(400, "not_a_number", http.post("/v1/ws/acme/docs/shape/incr", "{\"path\":\"s\",\"delta\":1}"));
        LogsHttpIT.expect(400, "bad_path", http.post("/v1/ws/acme/docs/shape/incr", "{\"path\":\"s.deeper\",\"delta\":1}"));
        LogsHttpIT.expect(409, "overflow", http.post("/v1/ws/acme/docs/shape/incr", "{\"path\":\"n\",\"delta\":100}"));
        LogsHttpIT.expect(409, "ceiling_violation", http.post("/v1/ws/acme/docs/shape/incr", "{\"path\":\"o.a\",\"delta\":5,\"ceiling\":3}"));
        LogsHttpIT.expect(400, "bad_request", http.post("/v1/ws/acme/docs/shape/incr", "{\"path\":\"o.a\",\"delta\":\"5\"}"));
        LogsHttpIT.expect(400, "bad_request", http.post("/v1/ws/acme/docs/shape/incr", "{\"path\":\"o.a\",\"delta\":1.5}"));
        LogsHttpIT.expect(400, "bad_request", http.put("/v1/ws/acme/docs/shape", "{\"value\":[1]}"));
        LogsHttpIT.expect(400, "bad_request", http.put("/v1/ws/acme/docs/shape", "{\"value\":"));
        Http.Reply cas = http.post("/v1/ws/acme/docs/shape/cas", "{\"path\":\"o.a\",\"expect\":2,\"value\":3}");
        LogsHttpIT.expect(409, "cas_conflict", cas);
        assertEquals(1, cas.json().path("error").path("current").asLong());
        LogsHttpIT.expect(413, "too_large", http.put("/v1/ws/acme/docs/big", "{\"value\":{\"s\":\"" + "x".repeat(70 * 1024) + "\"}}"));
        LogsHttpIT.expect(404, "not_found", http.get("/v1/ws/acme/docs/nope"));
        LogsHttpIT.expect(400, "invalid_name", http.get("/v1/ws/acme/docs/..%2Fx"));
        JsonNode incrMissing = http.post("/v1/ws/acme/docs/fresh/incr", "{\"path\":\"a.b\",\"delta\":-3,\"floor\":-10}").json();
        assertEquals(-3, incrMissing.get("value").asLong());
        // a delete's condition empty or misspelt is refused, not dropped (the doc stays)
        LogsHttpIT.expect(400, "bad_request", http.delete("/v1/ws/acme/docs/fresh?expectVersion="));
        LogsHttpIT.expect(400, "bad_request", http.delete("/v1/ws/acme/docs/fresh?expectversion=1"));
        LogsHttpIT.expect(409, "version_conflict", http.delete("/v1/ws/acme/docs/fresh?expectVersion=2"));
        assertEquals(200, http.delete("/v1/ws/acme/docs/fresh?expectVersion=1").status());
        LogsHttpIT.expect(404, "not_found", http.get("/v1/ws/acme/docs/fresh"));
        JsonNode list = http.get("/v1/ws/acme/docs?limit=1000").json();
        assertTrue(list.get("docs").toString().contains("shape"), list.toString());
    }

    /** JSON objects nested {@code depth} deep: {@code {"a":{"a":…{}}}}. */
    static String nested(int depth) {
        return "{\"a\":".repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
    }

    /** A path of the most keys a path may have (32). */
    static final String LONGEST_PATH = String.join(".", java.util.Collections.nCopies(DocPath.MAX_DEPTH, "k"));

    @Test
    void writesShouldRefuseADocTooDeepToReadBackAndStoredDocsShouldReadBackAfterRestart(@TempDir Path own) {
        String deep = "/v1/ws/acme/docs/deep";
        TestServer s = TestServer.start(own, Map.of("STRAND_DURABILITY", "fsync"));
        try {
            Http h = s.http;
            assertEquals(200, h.put(deep, "{\"value\":{\"x\":1}}").status());
            // the case: a 32-key path and a 254-deep value, each accepted on its own
            Http.Reply cas = h.post(deep + "/cas", "{\"path\":\"" + LONGEST_PATH + "\",\"value\":" + nested(254) + "}");
            LogsHttpIT.expect(400, "bad_request", cas);
            assertTrue(cas.json().path("error").path("message").asText().contains("levels deep"), cas.body());
            LogsHttpIT.expect(400, "bad_request", h.post(deep + "/apply", "{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1},"
                    + "{\"op\":\"set\",\"path\":\"a.b\",\"value\":" + nested(DocStore.MAX_DEPTH - 1) + "}]}"));
            LogsHttpIT.expect(400, "bad_request", h.put(deep, "{\"value\":" + nested(DocStore.MAX_DEPTH + 1) + "}"));
            Http.Reply unchanged = h.get(deep);
            assertEquals(200, unchanged.status(), unchanged.body());
            assertEquals(1, unchanged.json().get("version").asLong());
            assertEquals(Json.parse("{\"x\":1}"), unchanged.json().get("value"));

            // exactly at the limit is accepted, and every reply carrying it parses under the input limit
            Http.Reply atLimit = h.post(deep + "/cas", "{\"path\":\"" + LONGEST_PATH + "\",\"value\":"
                    + nested(DocStore.MAX_DEPTH - DocPath.MAX_DEPTH) + "}");
            assertEquals(200, atLimit.status(), atLimit.body());
            assertEquals(200, h.post(deep + "/incr", "{\"path\":\"n\",\"delta\":1}").status());
            LogsHttpIT.expect(409, "version_conflict", h.put(deep, "{\"value\":{},\"expectVersion\":1}"));
        } finally {
            s.close();
        }
        TestServer again = TestServer.start(own, Map.of("STRAND_DURABILITY", "fsync"));
        try {
            Http.Reply read = again.http.get(deep);
            assertEquals(200, read.status(), read.body());
            assertEquals(3, read.json().get("version").asLong());
            assertEquals(1, read.json().get("value").get("x").asLong());
            Http.Reply incr = again.http.post(deep + "/incr", "{\"path\":\"n\",\"delta\":1}");
            assertEquals(200, incr.status(), incr.body());
            assertEquals(2, incr.json().get("value").asLong());
        } finally {
            again.close();
        }
    }
}

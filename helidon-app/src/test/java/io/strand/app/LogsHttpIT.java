package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class LogsHttpIT {
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

    private static List<Long> seqs(JsonNode page) {
        List<Long> out = new ArrayList<>();
        page.get("entries").forEach(e -> out.add(e.get("seq").asLong()));
        return out;
    }

    @Test
    void payloadsShouldBeStoredAndServedAsTheClientSpelledThem() {
        String one = "{ \"n\" : 1.50, \"big\": 12345678901234567890123, \"e\": \"\\u00e9\\/\" }";
        String two = "[ -0, 1E+2 ]";
        assertEquals(200, http.post("/v1/ws/acme/logs/verbatim/entries", "{\"data\" :  " + one + " }").status());
        assertEquals(200, http.post("/v1/ws/acme/logs/verbatim/entries",
                "{\"entries\":[ {\"data\":" + two + " , \"key\":\"k\"} ]}").status());
        Http.Reply page = http.get("/v1/ws/acme/logs/verbatim/entries?from=1");
        assertTrue(page.body().contains("\"data\":" + one), page.body());
        assertTrue(page.body().contains("\"data\":" + two), page.body());
        assertEquals(io.strand.core.Json.parse(one), page.json().get("entries").get(0).get("data"));
        assertEquals(io.strand.core.Json.parse(two), page.json().get("entries").get(1).get("data"));
        Http.Reply bad = http.post("/v1/ws/acme/logs/verbatim/entries", "{\"data\": {\"a\": [1, }}");
        assertEquals(400, bad.status(), bad.body());
        assertEquals(2, http.get("/v1/ws/acme/logs/verbatim/entries?from=1").json().get("head").asLong(), "the refused append wrote nothing");
    }

    @Test
    void pagesShouldReconstructExactlyWhatWasWritten() {
        List<String> written = new ArrayList<>();
        for (int i = 1; i <= 250; i++) {
            if (i % 10 == 0) {
                StringBuilder batch = new StringBuilder("{\"entries\":[");
                for (int j = 0; j < 5; j++) {
                    String d = "{\"i\":" + i + ",\"j\":" + j + ",\"s\":\"\\u00e9\\\"q\"}";
                    written.add(d);
                    batch.append(j == 0 ? "" : ",").append("{\"data\":").append(d).append(",\"key\":\"k").append(j).append("\"}");
                }
                Http.Reply r = http.post("/v1/ws/acme/logs/pages/entries", batch.append("]}").toString());
                assertEquals(200, r.status(), r.body());
                assertEquals(written.size() - 4, r.json().get("firstSeq").asLong());
                assertEquals("fsync", r.json().get("durable").asText());
            } else {
                String d = "[" + i + ",null,true,{\"x\":1.5}]";
                written.add(d);
                Http.Reply r = http.post("/v1/ws/acme/logs/pages/entries", "{\"data\":" + d + "}");
                assertEquals(200, r.status(), r.body());
                assertEquals(written.size(), r.json().get("lastSeq").asLong());
            }
        }
        // forward, 7 per page
        List<String> forward = new ArrayList<>();
        long next = 0;
        while (true) {
            JsonNode page = http.get("/v1/ws/acme/logs/pages/entries?from=" + next + "&limit=7").json();
            if (page.get("entries").isEmpty()) {
                break;
            }
            page.get("entries").forEach(e -> forward.add(e.get("data").toString()));
            next = page.get("next").asLong();
            assertEquals(written.size(), page.get("head").asLong());
            assertEquals(1, page.get("first").asLong());
        }
        assertEquals(normalize(written), forward);
        // backward from the end
        List<String> backward = new ArrayList<>();
        String before = "end";
        while (true) {
            JsonNode page = http.get("/v1/ws/acme/logs/pages/entries?before=" + before + "&limit=9").json();
            if (page.get("entries").isEmpty()) {
                break;
            }
            List<String> chunk = new ArrayList<>();
            page.get("entries").forEach(e -> chunk.add(e.get("data").toString()));
            backward.addAll(0, chunk);
            before = page.get("prev").asText();
            if (page.get("prev").asLong() <= 1) {
                break;
            }
        }
        assertEquals(normalize(written), backward);
        // by time: from the ts of entry 100 on, first page starts at or before 100 and never skips it
        JsonNode e100 = http.get("/v1/ws/acme/logs/pages/entries?from=100&limit=1").json().get("entries").get(0);
        JsonNode byTime = http.get("/v1/ws/acme/logs/pages/entries?fromTime=" + e100.get("ts").asLong() + "&limit=1000").json();
        long firstByTime = byTime.get("entries").get(0).get("seq").asLong();
        assertTrue(firstByTime <= 100);
        assertEquals(e100.get("ts").asLong(), byTime.get("entries").get(0).get("ts").asLong());
        String iso = java.time.Instant.ofEpochMilli(e100.get("ts").asLong()).toString();
        assertEquals(firstByTime, http.get("/v1/ws/acme/logs/pages/entries?fromTime=" + iso).json().get("entries").get(0).get("seq").asLong());
        JsonNode keyed = http.get("/v1/ws/acme/logs/pages/entries?from=" + (written.size() - 4) + "&limit=1").json().get("entries").get(0);
        assertEquals("k0", keyed.get("key").asText());
        JsonNode info = http.get("/v1/ws/acme/logs/pages").json();
        assertEquals(written.size(), info.get("head").asLong());
        assertEquals(written.size(), info.get("entries").asLong());
        assertEquals("pages", info.get("name").asText());
    }

    static void expect(int status, String code, Http.Reply reply) {
        assertEquals(status, reply.status(), reply.body());
        assertEquals(code, reply.errorCode(), reply.body());
    }

    private static List<String> normalize(List<String> json) {
        return json.stream().map(s -> io.strand.core.Json.parse(s).toString()).toList();
    }

    @Test
    void neverCreatedLogShouldReadEmptyButInfoShouldBe404() {
        Http.Reply page = http.get("/v1/ws/acme/logs/ghost/entries");
        assertEquals(200, page.status());
        assertEquals(0, page.json().get("head").asLong());
        assertEquals(0, page.json().get("entries").size());
        Http.Reply info = http.get("/v1/ws/acme/logs/ghost");
        assertEquals(404, info.status());
        assertEquals("not_found", info.errorCode());
    }

    /**
     * Batches up to SPEC §2's limits (1,000 entries, 4 MiB) are appended, over HTTP and inside a txn.
     * One append is one Chronicle excerpt, and a block of 4 MiB capped an excerpt at 1 MiB: a 1.1 MB
     * batch was a 500, and in a txn a 503 outcome_unknown after its commit record (found by an audit).
     */
    @Test
    void batchesUpToTheLimitsShouldBeAppendedOverHttpAndInATxn() {
        Http.Reply big = http.post("/v1/ws/acme/logs/big-batch/entries",
                "{\"entries\":" + ColdLogs.stringEntries(20, 200_000) + "}");
        assertEquals(200, big.status(), big.body().length() > 300 ? big.body().substring(0, 300) : big.body());
        assertEquals(20, big.json().get("lastSeq").asLong());
        JsonNode last = http.get("/v1/ws/acme/logs/big-batch/entries?from=20").json().get("entries").get(0);
        assertEquals(200_000, last.get("data").asText().length());
        Http.Reply inTxn = http.post("/v1/ws/acme/txn",
                "{\"append\":[{\"log\":\"big-txn\",\"entries\":" + ColdLogs.stringEntries(11, 100_000) + "}]}");
        assertEquals(200, inTxn.status(), inTxn.body().length() > 300 ? inTxn.body().substring(0, 300) : inTxn.body());
        assertEquals(11, http.get("/v1/ws/acme/logs/big-txn").json().get("head").asLong());
    }

    /**
     * An append that could not be read back is refused: a key or producerId with an unpaired surrogate
     * (stored, it broke every page reaching it), and an unknown field (a misspelt expectedLastSeq
     * silently dropped the check). Nothing of a refused batch is written.
     */
    @Test
    void appendsThatCouldNotBeReadBackOrDropAConditionShouldBeRefused() {
        assertEquals(200, http.post("/v1/ws/acme/logs/strict/entries", "{\"data\":0,\"key\":\"\\ud83d\\ude00 paired\"}").status());
        for (String bad : new String[] {
                "{\"entries\":[{\"data\":1},{\"data\":2,\"key\":\"\\udfff\"},{\"data\":3}]}",
                "{\"data\":1,\"key\":\"a\\ud800\"}",
                "{\"data\":1,\"producerId\":\"p\\udc00\",\"producerSeq\":1}",
                "{\"data\":1,\"expectedlastseq\":0}",
                "{\"data\":1,\"foo\":2}",
                "{\"entries\":[{\"data\":1,\"kye\":\"k\"}]}"}) {
            expect(400, "bad_request", http.post("/v1/ws/acme/logs/strict/entries", bad));
        }
        JsonNode page = http.get("/v1/ws/acme/logs/strict/entries?from=1").json();
        assertEquals(1, page.get("entries").size(), page.toString());
        assertEquals("\ud83d\ude00 paired", page.get("entries").get(0).get("key").asText());
        // over the socket: the frame's id, op and log are its envelope, anything else unknown is refused too
        try (WsClient c = WsClient.connect(server.wsUrl("acme"))) {
            JsonNode typo = c.reply(c.request("append", "\"log\":\"strict\",\"data\":1,\"expectedLastSeq \":0"), 10_000);
            assertEquals("bad_request", typo.path("error").path("code").asText(), typo.toString());
            JsonNode fraction = c.reply(c.request("append", "\"log\":\"strict\",\"data\":1,\"expectedLastSeq\":1.0"), 10_000);
            assertEquals("bad_request", fraction.path("error").path("code").asText(), "as over HTTP: " + fraction);
            JsonNode fractionRead = c.reply(c.request("read", "\"log\":\"strict\",\"from\":1.0"), 10_000);
            assertEquals("bad_request", fractionRead.path("error").path("code").asText(), "as over HTTP: " + fractionRead);
            JsonNode ok = c.reply(c.request("append", "\"log\":\"strict\",\"data\":1,\"expectedLastSeq\":1"), 10_000);
            assertTrue(ok.path("ok").asBoolean(), ok.toString());
        }
    }

    /** SPEC §4: a log never appended to has no info; an append refused before anything was written creates none. */
    @Test
    void aRefusedFirstAppendShouldLeaveNoLogBehind() {
        expect(409, "seq_mismatch", http.post("/v1/ws/acme/logs/phantom/entries", "{\"data\":1,\"expectedLastSeq\":5}"));
        assertEquals(0, http.post("/v1/ws/acme/logs/phantom/entries", "{\"data\":1,\"expectedLastSeq\":5}")
                .json().path("error").path("head").asLong());
        expect(404, "not_found", http.get("/v1/ws/acme/logs/phantom"));
        assertFalse(http.get("/v1/ws/acme/logs?limit=1000").body().contains("\"phantom\""), "not listed");
        assertEquals(1, http.post("/v1/ws/acme/logs/phantom/entries", "{\"data\":1,\"expectedLastSeq\":0}")
                .json().get("firstSeq").asLong(), "expectedLastSeq 0 still creates it");
    }

    @Test
    void badInputShouldGetClearErrorsAndLoseNothing() {
        assertEquals(200, http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":1}").status());
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "[1,2]"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{}"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{\"entries\":{}}"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{\"entries\":[{\"nodata\":1}]}"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":1,\"expectedLastSeq\":\"x\"}"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":1,\"key\":5}"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":1,\"producerId\":\"p\"}"));
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":1} trailing"));
        expect(409, "seq_mismatch", http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":1,\"expectedLastSeq\":5}"));
        assertEquals(1, http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":1,\"expectedLastSeq\":5}").json().path("error").path("head").asLong());
        expect(400, "bad_request", http.get("/v1/ws/acme/logs/bad/entries?from=abc"));
        expect(400, "bad_request", http.get("/v1/ws/acme/logs/bad/entries?limit=0"));
        expect(400, "bad_request", http.get("/v1/ws/acme/logs/bad/entries?limit=1001"));
        expect(400, "bad_request", http.get("/v1/ws/acme/logs/bad/entries?from=1&before=3"));
        expect(400, "bad_request", http.get("/v1/ws/acme/logs/bad/entries?fromTime=yesterday"));
        for (String far : new String[] {"%2B1000000000-01-01T00:00:00Z", "-1000000000-01-01T00:00:00Z", "%2B292278994-08-17T07:12:55.808Z"}) {
            expect(400, "bad_request", http.get("/v1/ws/acme/logs/bad/entries?fromTime=" + far)); // was a 500 (long overflow)
        }
        // names: traversal and invalid characters never reach the filesystem
        for (String name : List.of("..%2F..%2Fetc", "%2E%2E", "a%2Fb", ".hidden", "-dash", "x%00y", "a%5Cb")) {
            Http.Reply r = http.post("/v1/ws/acme/logs/" + name + "/entries", "{\"data\":1}");
            expect(400, "invalid_name", r);
        }
        expect(400, "invalid_name", http.post("/v1/ws/ACME/logs/x/entries", "{\"data\":1}"));
        expect(400, "invalid_name", http.post("/v1/ws/acme/logs/" + "a".repeat(129) + "/entries", "{\"data\":1}"));
        // limits
        String big = "\"" + "x".repeat(256 * 1024) + "\"";
        expect(413, "too_large", http.post("/v1/ws/acme/logs/bad/entries", "{\"data\":" + big + "}"));
        StringBuilder many = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < 1001; i++) {
            many.append(i == 0 ? "" : ",").append("{\"data\":").append(i).append('}');
        }
        expect(413, "too_large", http.post("/v1/ws/acme/logs/bad/entries", many.append("]}").toString()));
        byte[] body = new byte[5 * 1024 * 1024];
        java.util.Arrays.fill(body, (byte) ' ');
        body[0] = '{';
        body[body.length - 1] = '}';
        expect(413, "too_large", http.post("/v1/ws/acme/logs/bad/entries", body));
        // nothing was half-applied
        JsonNode page = http.get("/v1/ws/acme/logs/bad/entries").json();
        assertEquals(1, page.get("head").asLong());
        assertFalse(page.get("entries").isEmpty());
        expect(404, "not_found", http.get("/v1/nothing/here"));
    }

    @Test
    void producerRetryShouldNotAppendTwice() {
        String req = "{\"data\":{\"charge\":5},\"producerId\":\"billing-1\",\"producerSeq\":42}";
        JsonNode a = http.post("/v1/ws/acme/logs/idem/entries", req).json();
        JsonNode b = http.post("/v1/ws/acme/logs/idem/entries", req).json();
        assertEquals(a.get("firstSeq"), b.get("firstSeq"));
        assertTrue(b.get("duplicate").asBoolean());
        assertEquals(1, http.get("/v1/ws/acme/logs/idem").json().get("head").asLong());
    }

    @Test
    void listAndDeleteShouldWork() {
        for (String n : List.of("l-a", "l-b", "l-c")) {
            http.post("/v1/ws/lister/logs/" + n + "/entries", "{\"data\":1}");
        }
        JsonNode list = http.get("/v1/ws/lister/logs?limit=2").json();
        assertEquals(List.of("l-a", "l-b"), List.of(list.get("logs").get(0).asText(), list.get("logs").get(1).asText()));
        assertEquals("l-c", http.get("/v1/ws/lister/logs?after=l-b").json().get("logs").get(0).asText());
        assertEquals(200, http.delete("/v1/ws/lister/logs/l-b").status());
        assertEquals(404, http.get("/v1/ws/lister/logs/l-b").status());
        assertEquals(404, http.delete("/v1/ws/lister/logs/l-b").status());
        assertEquals(0, http.get("/v1/ws/lister/logs/l-b/entries").json().get("head").asLong());
        assertEquals(1, http.post("/v1/ws/lister/logs/l-b/entries", "{\"data\":2}").json().get("firstSeq").asLong());
    }

    @Test
    void observeEndpointsShouldServeHealthAndMetrics() {
        Http.Reply health = http.get("/observe/health");
        assertEquals(200, health.status());
        JsonNode writers = null;
        JsonNode agents = null;
        for (JsonNode check : health.json().get("checks")) {
            writers = "writers".equals(check.path("name").asText()) ? check : writers;
            agents = "agents".equals(check.path("name").asText()) ? check : agents;
        }
        assertTrue(writers != null, health.body());
        assertEquals("UP", writers.get("status").asText(), health.body());
        assertTrue(agents != null, health.body());
        assertEquals("UP", agents.get("status").asText(), health.body());
        JsonNode sweeper = agents.path("data").path("strand-token-sweeper");
        assertTrue(sweeper.path("alive").asBoolean() && sweeper.has("passes") && sweeper.has("failures"), health.body());
        http.post("/v1/ws/acme/logs/metered/entries", "{\"data\":1}");
        Http.Reply metrics = http.get("/observe/metrics");
        assertEquals(200, metrics.status());
        assertTrue(metrics.body().contains("strand_appends"), metrics.body().substring(0, Math.min(500, metrics.body().length())));
        assertTrue(metrics.body().contains("strand_agent_failures_total"), metrics.body().substring(0, Math.min(500, metrics.body().length())));
    }

    /** {@code strand_append_errors_total} counts appends refused before they reach a log too (api.md: "refused or failed"). */
    @Test
    void refusedAppendsShouldBeCountedAsAppendErrors() {
        double before = appendErrors();
        expect(400, "bad_request", http.post("/v1/ws/acme/logs/counted/entries", "{}"));
        expect(413, "too_large", http.post("/v1/ws/acme/logs/counted/entries",
                "{\"data\":\"" + "x".repeat(256 * 1024) + "\"}"));
        expect(409, "seq_mismatch", http.post("/v1/ws/acme/logs/counted/entries", "{\"data\":1,\"expectedLastSeq\":3}"));
        assertEquals(before + 3, appendErrors(), 0.0);
    }

    private double appendErrors() {
        return http.metric("strand_append_errors_total");
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Clients;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code txn} (SPEC §5): docs and log appends of one workspace commit together or not at all, over HTTP and the socket. */
@Timeout(180)
class TxnIT {
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

    private static String debit(String wallet, String charges, String who) {
        return "{\"docs\":{\"" + wallet + "\":{\"ops\":[{\"op\":\"incr\",\"path\":\"balance\",\"delta\":-1,\"floor\":0}]}},"
                + "\"append\":[{\"log\":\"" + charges + "\",\"entries\":[{\"data\":{\"charge\":1,\"by\":\"" + who + "\"}}]}]}";
    }

    /** The seed's use case: a charge entry exactly when the floor-0 debit succeeds, 16 sockets racing on one balance. */
    @Test
    void sixteenSocketsDebitingOneBalanceShouldAppendOneChargePerSuccessfulDebit() throws Exception {
        assertEquals(200, http.put("/v1/ws/acme/docs/wallet-ws", "{\"value\":{\"balance\":500}}").status());
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        Clients.concurrently(16, c -> {
            try (WsClient ws = WsClient.connect(server.wsUrl("acme"))) {
                for (int i = 0; i < 60; i++) { // pipelined
                    ws.send("{\"id\":" + ws.nextId() + ",\"op\":\"txn\"," + debit("wallet-ws", "charges-ws", "c" + c).substring(1));
                }
                for (int i = 0; i < 60; i++) {
                    JsonNode r = ws.next(30_000);
                    if (r.get("ok").asBoolean()) {
                        assertTrue(r.get("docs").get("wallet-ws").get("value").get("balance").asLong() >= 0, r.toString());
                        assertEquals(r.get("append").get(0).get("firstSeq"), r.get("append").get(0).get("lastSeq"));
                        assertEquals("fsync", r.get("durable").asText());
                        ok.incrementAndGet();
                    } else {
                        JsonNode e = r.get("error");
                        assertEquals("floor_violation", e.get("code").asText(), r.toString());
                        assertEquals("wallet-ws", e.get("doc").asText());
                        assertEquals(0, e.get("index").asInt());
                        assertEquals(0, e.get("value").asLong());
                        refused.incrementAndGet();
                    }
                }
            }
        });
        assertEquals(500, ok.get());
        assertEquals(460, refused.get());
        assertEquals(0, http.get("/v1/ws/acme/docs/wallet-ws").json().get("value").get("balance").asLong());
        assertEquals(500, http.get("/v1/ws/acme/logs/charges-ws").json().get("head").asLong());
    }

    @Test
    void sixteenHttpClientsDebitingOneBalanceShouldAppendOneChargePerSuccessfulDebit() throws Exception {
        assertEquals(200, http.put("/v1/ws/acme/docs/wallet-http", "{\"value\":{\"balance\":200}}").status());
        AtomicInteger ok = new AtomicInteger();
        Clients.concurrently(16, c -> {
            for (int i = 0; i < 15; i++) {
                Http.Reply r = http.post("/v1/ws/acme/txn", debit("wallet-http", "charges-http", "c" + c));
                if (r.status() == 200) {
                    ok.incrementAndGet();
                } else {
                    assertEquals(409, r.status(), r.body());
                    assertEquals("floor_violation", r.errorCode());
                    assertEquals("wallet-http", r.json().get("error").get("doc").asText());
                }
            }
        });
        assertEquals(200, ok.get());
        assertEquals(0, http.get("/v1/ws/acme/docs/wallet-http").json().get("value").get("balance").asLong());
        JsonNode page = http.get("/v1/ws/acme/logs/charges-http/entries?from=1&limit=1000").json();
        assertEquals(200, page.get("entries").size());
        assertEquals(200, page.get("head").asLong());
    }

    /** The seed's other use case: a chat message and the unread counter it bumps, with the reply's every field. */
    @Test
    void chatMessageAndUnreadCounterShouldCommitTogether() {
        String body = "{\"docs\":{\"unread-bob\":{\"ops\":[{\"op\":\"incr\",\"path\":\"room1\",\"delta\":1}]}},"
                + "\"append\":[{\"log\":\"room1\",\"entries\":[{\"data\":{\"from\":\"ann\",\"text\":\"hi\"},\"key\":\"ann\"}]}]}";
        Http.Reply first = http.post("/v1/ws/acme/txn", body);
        assertEquals(200, first.status(), first.body());
        JsonNode r = first.json();
        assertEquals(1, r.get("docs").get("unread-bob").get("version").asLong());
        assertEquals(1, r.get("docs").get("unread-bob").get("value").get("room1").asLong());
        assertEquals("room1", r.get("append").get(0).get("log").asText());
        assertEquals(1, r.get("append").get(0).get("firstSeq").asLong());
        assertEquals(1, r.get("append").get(0).get("lastSeq").asLong());
        assertTrue(r.get("ts").asLong() > 0);
        assertEquals("fsync", r.get("durable").asText());

        try (WsClient ws = WsClient.connect(server.wsUrl("acme"))) {
            JsonNode second = ws.reply(ws.request("txn", body.substring(1, body.length() - 1)), 10_000);
            assertTrue(second.get("ok").asBoolean(), second.toString());
            assertEquals(2, second.get("docs").get("unread-bob").get("value").get("room1").asLong());
            assertEquals(2, second.get("append").get(0).get("firstSeq").asLong());
        }
        JsonNode entries = http.get("/v1/ws/acme/logs/room1/entries?from=1").json().get("entries");
        assertEquals(2, entries.size());
        assertEquals("hi", entries.get(1).get("data").get("text").asText());
        assertEquals("ann", entries.get(1).get("key").asText());
        assertEquals(2, http.get("/v1/ws/acme/docs/unread-bob").json().get("value").get("room1").asLong());
    }

    /** Several docs and logs in one txn, and a refusal by any one part leaves every part as it was. */
    @Test
    void aRefusedPartShouldLeaveEveryPartUnchanged() {
        String ok = "{\"docs\":{\"a1\":{\"ops\":[{\"op\":\"set\",\"path\":\"x\",\"value\":1}]},"
                + "\"a2\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":5}]}},"
                + "\"append\":[{\"log\":\"la\",\"entries\":[{\"data\":1},{\"data\":2}]},{\"log\":\"lb\",\"data\":\"b\"}]}";
        assertEquals(200, http.post("/v1/ws/acme/txn", ok).status());

        // a log's expectedLastSeq: 409 seq_mismatch naming the log, with head; a new log staged before it is not created
        Http.Reply r = http.post("/v1/ws/acme/txn", "{\"docs\":{\"a1\":{\"ops\":[{\"op\":\"set\",\"path\":\"x\",\"value\":2}]}},"
                + "\"append\":[{\"log\":\"la\",\"data\":3},{\"log\":\"l-new\",\"data\":3},{\"log\":\"lb\",\"data\":\"c\",\"expectedLastSeq\":7}]}");
        assertEquals(409, r.status(), r.body());
        assertEquals("seq_mismatch", r.errorCode());
        assertEquals("lb", r.json().get("error").get("log").asText());
        assertEquals(1, r.json().get("error").get("head").asLong());
        assertUnchanged();

        // a log that does not exist yet ends at 0
        r = http.post("/v1/ws/acme/txn", "{\"append\":[{\"log\":\"la\",\"data\":3},{\"log\":\"l-new\",\"data\":3,\"expectedLastSeq\":1}]}");
        assertEquals(409, r.status(), r.body());
        assertEquals("l-new", r.json().get("error").get("log").asText());
        assertEquals(0, r.json().get("error").get("head").asLong());
        assertUnchanged();

        // a doc's cas: 409 cas_conflict naming the doc and the op, with current
        r = http.post("/v1/ws/acme/txn", "{\"docs\":{\"a2\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}]},"
                + "\"a1\":{\"ops\":[{\"op\":\"set\",\"path\":\"y\",\"value\":1},{\"op\":\"cas\",\"path\":\"x\",\"expect\":9,\"value\":10}]}},"
                + "\"append\":[{\"log\":\"la\",\"data\":3}]}");
        assertEquals(409, r.status(), r.body());
        assertEquals("cas_conflict", r.errorCode());
        assertEquals("a1", r.json().get("error").get("doc").asText());
        assertEquals(1, r.json().get("error").get("index").asInt());
        assertEquals(1, r.json().get("error").get("current").asLong());
        assertUnchanged();

        // a doc's expectVersion
        r = http.post("/v1/ws/acme/txn", "{\"docs\":{\"a2\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}],\"expectVersion\":4}},"
                + "\"append\":[{\"log\":\"la\",\"data\":3}]}");
        assertEquals(409, r.status(), r.body());
        assertEquals("version_conflict", r.errorCode());
        assertEquals("a2", r.json().get("error").get("doc").asText());
        assertEquals(1, r.json().get("error").get("version").asLong());
        assertUnchanged();

        // over the socket too
        try (WsClient ws = WsClient.connect(server.wsUrl("acme"))) {
            JsonNode f = ws.reply(ws.request("txn", "\"docs\":{\"a1\":{\"ops\":[{\"op\":\"set\",\"path\":\"x\",\"value\":2}]}},"
                    + "\"append\":[{\"log\":\"la\",\"data\":3,\"expectedLastSeq\":1}]"), 10_000);
            assertFalse(f.get("ok").asBoolean());
            assertEquals("seq_mismatch", f.get("error").get("code").asText());
            assertEquals("la", f.get("error").get("log").asText());
            assertEquals(2, f.get("error").get("head").asLong());
        }
        assertUnchanged();
    }

    private static void assertUnchanged() {
        JsonNode a1 = http.get("/v1/ws/acme/docs/a1").json();
        assertEquals(1, a1.get("version").asLong());
        assertEquals("{\"x\":1}", a1.get("value").toString());
        assertEquals(1, http.get("/v1/ws/acme/docs/a2").json().get("version").asLong());
        assertEquals(2, http.get("/v1/ws/acme/logs/la").json().get("head").asLong());
        assertEquals(1, http.get("/v1/ws/acme/logs/lb").json().get("head").asLong());
        assertEquals(2, http.get("/v1/ws/acme/logs/la/entries?from=1").json().get("entries").size());
        assertEquals(404, http.get("/v1/ws/acme/logs/l-new").status(), "a refused txn creates no log");
        assertFalse(http.get("/v1/ws/acme/logs?limit=1000").body().contains("l-new"));
    }

    /** A txn's parts count in the metrics as the same ops alone would (SPEC §11): entries, bytes, doc ops, refusals. */
    @Test
    void aTxnShouldCountItsPartsInTheMetrics() {
        double appends = http.metric("strand_appends_total");
        double bytes = http.metric("strand_append_bytes_total");
        double docOps = http.metric("strand_doc_ops_total");
        double bounds = http.metric("strand_doc_bound_rejections_total");
        double conflicts = http.metric("strand_doc_conflicts_total");
        double appendErrors = http.metric("strand_append_errors_total");
        assertEquals(200, http.post("/v1/ws/acme/txn", "{\"docs\":{\"m1\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}]},"
                + "\"m2\":{\"ops\":[{\"op\":\"set\",\"path\":\"x\",\"value\":1}]}},"
                + "\"append\":[{\"log\":\"lm\",\"entries\":[{\"data\":\"ab\"},{\"data\":12}]}]}").status());
        assertEquals(appends + 2, http.metric("strand_appends_total"), 0.0);
        assertEquals(bytes + 6, http.metric("strand_append_bytes_total"), 0.0, "\"ab\" and 12 as JSON text");
        assertEquals(docOps + 2, http.metric("strand_doc_ops_total"), 0.0);
        expectRefused(409, "{\"docs\":{\"m1\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":-5,\"floor\":0}]}}}");
        assertEquals(bounds + 1, http.metric("strand_doc_bound_rejections_total"), 0.0);
        expectRefused(409, "{\"docs\":{\"m1\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}],\"expectVersion\":7}}}");
        assertEquals(conflicts + 1, http.metric("strand_doc_conflicts_total"), 0.0);
        expectRefused(409, "{\"append\":[{\"log\":\"lm\",\"data\":1,\"expectedLastSeq\":9}]}");
        assertEquals(appendErrors + 1, http.metric("strand_append_errors_total"), 0.0);
        assertEquals(appends + 2, http.metric("strand_appends_total"), 0.0, "refused txns append nothing");
        assertEquals(docOps + 2, http.metric("strand_doc_ops_total"), 0.0, "refused txns commit no doc op");
        http.get("/v1/ws/acme/docs/m1");
        assertEquals(docOps + 2, http.metric("strand_doc_ops_total"), 0.0, "a read is not a committed doc op");
    }

    private static void expectRefused(int status, String txn) {
        Http.Reply r = http.post("/v1/ws/acme/txn", txn);
        assertEquals(status, r.status(), r.body());
    }

    /** A retried txn (same producerId/producerSeq) answers 409 duplicate with the original seqs and changes nothing. */
    @Test
    void aRetriedTxnShouldAnswerDuplicateAndChangeNothing() {
        String body = "{\"docs\":{\"dup-doc\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}]}},"
                + "\"append\":[{\"log\":\"dup-log\",\"entries\":[{\"data\":1},{\"data\":2}],\"producerId\":\"p1\",\"producerSeq\":1}]}";
        assertEquals(200, http.post("/v1/ws/acme/txn", body).status());
        Http.Reply again = http.post("/v1/ws/acme/txn", body);
        assertEquals(409, again.status(), again.body());
        assertEquals("duplicate", again.errorCode());
        assertEquals("dup-log", again.json().get("error").get("log").asText());
        assertEquals(1, again.json().get("error").get("firstSeq").asLong());
        assertEquals(2, again.json().get("error").get("lastSeq").asLong());
        assertEquals(1, http.get("/v1/ws/acme/docs/dup-doc").json().get("value").get("n").asLong());
        assertEquals(2, http.get("/v1/ws/acme/logs/dup-log").json().get("head").asLong());
    }

    @Test
    void limitsAndShapeShouldBeRefusedBeforeAnythingRuns() {
        StringBuilder docs = new StringBuilder("{\"docs\":{");
        for (int i = 0; i < 101; i++) {
            docs.append(i == 0 ? "" : ",").append("\"d").append(i).append("\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}]}");
        }
        LogsHttpIT.expect(400, "bad_request", http.post("/v1/ws/acme/txn", docs.append("}}").toString()));
        StringBuilder entries = new StringBuilder("{\"append\":[{\"log\":\"big1\",\"entries\":[");
        for (int i = 0; i < 600; i++) {
            entries.append(i == 0 ? "" : ",").append("{\"data\":").append(i).append('}');
        }
        entries.append("]},{\"log\":\"big2\",\"entries\":[");
        for (int i = 0; i < 401; i++) {
            entries.append(i == 0 ? "" : ",").append("{\"data\":").append(i).append('}');
        }
        LogsHttpIT.expect(413, "too_large", http.post("/v1/ws/acme/txn", entries.append("]}]}").toString()));
        LogsHttpIT.expect(400, "bad_request", http.post("/v1/ws/acme/txn", "{}"));
        LogsHttpIT.expect(400, "bad_request", http.post("/v1/ws/acme/txn", "{\"docs\":{},\"extra\":1}"));
        LogsHttpIT.expect(400, "bad_request", http.post("/v1/ws/acme/txn",
                "{\"append\":[{\"log\":\"twice\",\"data\":1},{\"log\":\"twice\",\"data\":2}]}"));
        LogsHttpIT.expect(400, "invalid_name", http.post("/v1/ws/acme/txn", "{\"append\":[{\"log\":\"../x\",\"data\":1}]}"));
        LogsHttpIT.expect(400, "bad_path", http.post("/v1/ws/acme/txn", "{\"docs\":{\"p\":{\"ops\":[{\"op\":\"set\",\"path\":\"\",\"value\":1}]}}}"));
        for (String log : List.of("big1", "big2", "twice")) {
            assertEquals(404, http.get("/v1/ws/acme/logs/" + log).status(), log + " must not exist");
        }
        assertEquals(404, http.get("/v1/ws/acme/docs/d1").status());
    }

    /** A subscriber never sees a txn's entry before its doc change is readable. */
    @Test
    void aSubscriberShouldSeeEntriesOnlyWithTheirDocChange() throws Exception {
        try (WsClient sub = WsClient.connect(server.wsUrl("acme"))) {
            JsonNode subscribed = sub.reply(sub.request("subscribe", "\"log\":\"feed\",\"from\":1"), 10_000);
            assertTrue(subscribed.get("ok").asBoolean(), subscribed.toString());
            Thread writer = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 200; i++) {
                    http.post("/v1/ws/acme/txn", "{\"docs\":{\"feed-count\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}]}},"
                            + "\"append\":[{\"log\":\"feed\",\"data\":" + i + "}]}");
                }
            });
            Set<Long> seen = new HashSet<>();
            while (seen.size() < 200) {
                JsonNode f = sub.next(30_000);
                if (!"entries".equals(f.path("type").asText())) {
                    continue;
                }
                long last = 0;
                for (JsonNode e : f.get("entries")) {
                    seen.add(e.get("seq").asLong());
                    last = e.get("seq").asLong();
                }
                long n = http.get("/v1/ws/acme/docs/feed-count").json().get("value").get("n").asLong();
                assertTrue(n >= last, "entry " + last + " delivered while the doc counts " + n);
            }
            writer.join();
        }
    }
}

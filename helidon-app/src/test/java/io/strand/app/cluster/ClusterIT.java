package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real server processes in cluster mode (SPEC §13) on loopback: writes on any node are
 * acknowledged at a quorum and read back identically from every node; trims and retention
 * policies (SPEC §12) taken by any node hold on every replica.
 */
@Timeout(600)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterIT {
    ClusterNodes nodes;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        nodes = new ClusterNodes(dir, 3, 4, List.of("--retention-check-interval", "1s"));
        nodes.startAll();
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void appendsOnEveryNodeShouldReadBackIdenticallyOnEveryNode() {
        List<String> ids = List.of("n1", "n2", "n3");
        for (int i = 0; i < 30; i++) {
            String id = ids.get(i % 3);
            int n = i;
            // a 503 may come after the command reached a leader ("outcome":"unknown"): the producer fields make the retry exact
            Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http(id).post("/v1/ws/w" + (n % 5) + "/logs/chat/entries",
                    "{\"data\":{\"n\":" + n + "},\"producerId\":\"it\",\"producerSeq\":" + n + "}"));
            assertEquals(200, r.status(), r.body());
            assertEquals("quorum", r.json().path("durable").asText(), r.body());
        }
        for (int w = 0; w < 5; w++) {
            int ws = w;
            String first = null;
            for (String id : ids) {
                // 503 (retryable) while this node's replica catches up (a node that started last can wait for
                // its leader's appender for seconds, Ratis 3.3.0): a stale page is never served instead
                Http.Reply page = ClusterNodes.untilNot503(() -> nodes.http(id).get("/v1/ws/w" + ws + "/logs/chat/entries?from=1&limit=100"));
                assertEquals(200, page.status(), page.body());
                JsonNode entries = page.json().path("entries");
                assertEquals(6, entries.size(), id + " w" + w + ": " + page.body());
                for (int k = 0; k < entries.size(); k++) {
                    assertEquals(k + 1, entries.get(k).path("seq").asLong());
                }
                String body = entries.toString();
                if (first == null) {
                    first = body;
                } else {
                    assertEquals(first, body, "node " + id + " differs for w" + w);
                }
            }
        }
    }

    /**
     * A txn's entries carry the leader's ts like plain appends (SPEC §13: a replica applies what the
     * leader decided), so every node serves the same page, ts included, and each entry the ts its ack said.
     */
    @Test
    void txnEntriesShouldCarryTheAckedTsOnEveryNode() {
        List<String> ids = List.of("n1", "n2", "n3");
        java.util.Map<Long, Long> ackedTs = new java.util.HashMap<>();
        for (int i = 0; i < 12; i++) {
            String id = ids.get(i % 3);
            int n = i;
            boolean txn = i % 2 == 0;
            String part = "{\"data\":{\"n\":" + n + "},\"producerId\":\"mix\",\"producerSeq\":" + n + "}";
            Http.Reply r = ClusterNodes.untilNot503(() -> txn
                    ? nodes.http(id).post("/v1/ws/mixed/txn", "{\"append\":[" + part.replace("{\"data\"", "{\"log\":\"m\",\"data\"") + "]}")
                    : nodes.http(id).post("/v1/ws/mixed/logs/m/entries", part));
            if (txn && r.status() == 409 && r.errorCode().equals("duplicate")) {
                continue; // a retry after a 503 whose first try was applied: its reply has no ts to compare
            }
            assertEquals(200, r.status(), r.body());
            long seq = txn ? r.json().path("append").get(0).path("firstSeq").asLong() : r.json().path("firstSeq").asLong();
            ackedTs.put(seq, r.json().path("ts").asLong());
        }
        String first = null;
        for (String id : ids) {
            Http.Reply page = ClusterNodes.untilNot503(() -> nodes.http(id).get("/v1/ws/mixed/logs/m/entries?from=1&limit=100"));
            assertEquals(200, page.status(), page.body());
            JsonNode entries = page.json().path("entries");
            assertEquals(12, entries.size(), id + ": " + page.body());
            for (JsonNode e : entries) {
                Long acked = ackedTs.get(e.path("seq").asLong());
                if (acked != null) {
                    assertEquals(acked, e.path("ts").asLong(), id + " seq " + e.path("seq") + ": " + page.body());
                }
            }
            if (first == null) {
                first = entries.toString();
            } else {
                assertEquals(first, entries.toString(), "node " + id + " differs");
            }
        }
    }

    /** An incr answered 503 may have been applied ("outcome":"unknown"): the count is exact within acked..acked+inDoubt. */
    @Test
    void incrementsFromEveryNodeShouldBeExact() throws Exception {
        java.util.concurrent.atomic.AtomicLong acked = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong inDoubt = new java.util.concurrent.atomic.AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (String id : List.of("n1", "n2", "n3")) {
            threads.add(Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 20; i++) {
                    Http.Reply r = nodes.http(id).post("/v1/ws/ledger/docs/counter/incr", "{\"path\":\"n\",\"delta\":1}");
                    if (r.status() == 200) {
                        acked.incrementAndGet();
                    } else {
                        assertEquals(503, r.status(), r.body());
                        inDoubt.incrementAndGet();
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        for (String id : List.of("n1", "n2", "n3")) {
            Http.Reply r = nodes.http(id).get("/v1/ws/ledger/docs/counter");
            assertEquals(200, r.status(), r.body());
            long n = r.json().path("value").path("n").asLong();
            assertTrue(n >= acked.get() && n <= acked.get() + inDoubt.get(),
                    id + ": " + n + " not within acked " + acked + " .. +" + inDoubt + " in doubt");
        }
        assertTrue(acked.get() > 0, "no incr was acknowledged");
    }

    /** A batch at SPEC §2's limits (4 MiB of data) is one shard command: a cluster takes it as a single node does. */
    @Test
    void aBatchAtTheLimitsShouldBeAppendedAndReadBackOnEveryNode() {
        String body = "{\"entries\":" + io.strand.app.testing.ColdLogs.stringEntries(20, 200_000) + "}";
        Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http("n3").post("/v1/ws/bulk/logs/big/entries", body));
        assertEquals(200, r.status(), r.body().length() > 300 ? r.body().substring(0, 300) : r.body());
        assertEquals(20, r.json().get("lastSeq").asLong());
        for (String id : List.of("n1", "n2", "n3")) {
            Http.Reply page = ClusterNodes.untilNot503(() -> nodes.http(id).get("/v1/ws/bulk/logs/big/entries?from=20"));
            assertEquals(200_000, page.json().get("entries").get(0).get("data").asText().length(), id);
        }
    }

    @Test
    void clusterStatusShouldNameEveryShardsLeader() {
        Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http("n2").get("/v1/cluster"));
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertEquals("n2", body.path("node").asText());
        assertEquals(3, body.path("nodes").size(), r.body());
        assertEquals(4, body.path("shards").size(), r.body());
        Http.Reply shard = nodes.http("n1").get("/v1/cluster/shard?ws=w1");
        assertEquals(200, shard.status(), shard.body());
        assertTrue(shard.json().path("replicas").size() == 3, shard.body());
        Http.Reply metrics = nodes.http("n3").get("/observe/metrics");
        assertEquals(200, metrics.status());
        for (String name : List.of("strand_cluster_leader", "strand_cluster_term", "strand_cluster_commit_index",
                "strand_cluster_apply_lag", "strand_cluster_follower_lag", "strand_cluster_leader_changes",
                "strand_cluster_proposed_entries", "strand_cluster_proposed_commands")) {
            assertTrue(metrics.body().lines().anyMatch(l -> l.startsWith(name + "{") && l.contains("shard=\"0\"")),
                    name + " missing from the metrics: " + metrics.body().lines().filter(l -> l.contains("cluster")).toList());
        }
        // readiness is DOWN while any local shard has no leader: an election under load (CI) is a moment of it
        Http.Reply health = ClusterNodes.untilNot503(() -> nodes.http("n1").get("/observe/health"));
        assertEquals(200, health.status(), health.body());
        assertTrue(health.json().path("checks").toString().contains("\"cluster\""), health.body());
    }

    /** {@code n} entries {@code {"n":from..}} with producer fields, so a retried 503 ("outcome":"unknown") lands once. */
    private void appendOnce(String id, String ws, String log, long from, int n) {
        String body = ColdLogs.batch(from, n);
        body = body.substring(0, body.length() - 1) + ",\"producerId\":\"it-" + log + "\",\"producerSeq\":" + from + "}";
        String b = body;
        Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http(id).post(ColdLogs.logPath(ws, log) + "/entries", b));
        assertEquals(200, r.status(), r.body());
        assertEquals(from, r.json().path("firstSeq").asLong(), r.body());
    }

    /** Every node's first page of {@code ws/log} (after its read barrier): a gap below {@code first}, then seqs from it. */
    private void assertFirstOnEveryNode(String ws, String log, long first, long head) {
        for (String id : List.of("n1", "n2", "n3")) {
            Http.Reply page = ClusterNodes.untilNot503(() -> nodes.http(id).get(ColdLogs.logPath(ws, log) + "/entries?from=1&limit=5"));
            assertEquals(200, page.status(), page.body());
            JsonNode p = page.json();
            assertEquals(first, p.path("first").asLong(), id + ": " + page.body());
            assertEquals(1, p.path("gap").path("from").asLong(), id + ": " + page.body());
            assertEquals(first - 1, p.path("gap").path("to").asLong(), id + ": " + page.body());
            assertEquals(first, p.path("entries").get(0).path("seq").asLong(), id + ": " + page.body());
            assertEquals(first, p.path("entries").get(0).path("data").path("n").asLong(), id + ": " + page.body());
            assertEquals(head, ColdLogs.info(nodes.http(id), ws, log).path("head").asLong(), id);
        }
    }

    @Test
    void aTrimOnAnyNodeShouldHideTheSameEntriesOnEveryNodeAndBeAudited() {
        appendOnce("n1", "trims", "t", 1, 50);
        Http.Reply trim = ClusterNodes.untilNot503(() -> nodes.http("n2").post(ColdLogs.logPath("trims", "t") + "/trim", "{\"before\":20}"));
        assertEquals(200, trim.status(), trim.body());
        assertEquals(20, trim.json().path("first").asLong(), trim.body());
        assertEquals(50, trim.json().path("head").asLong(), trim.body());
        assertFirstOnEveryNode("trims", "t", 20, 50);

        // refused on every replica alike, nothing changed
        Http.Reply past = nodes.http("n3").post(ColdLogs.logPath("trims", "t") + "/trim", "{\"before\":52}");
        assertEquals(400, past.status(), past.body());
        assertEquals(50, past.json().path("error").path("head").asLong(), past.body());
        assertEquals(404, nodes.http("n1").post(ColdLogs.logPath("trims", "none") + "/trim", "{\"before\":1}").status());
        Http.Reply lower = nodes.http("n3").post(ColdLogs.logPath("trims", "t") + "/trim", "{\"before\":5}");
        assertEquals(200, lower.status(), lower.body());
        assertEquals(20, lower.json().path("first").asLong(), "first only moves forward: " + lower.body());
        assertFirstOnEveryNode("trims", "t", 20, 50);

        appendOnce("n3", "trims", "t", 51, 1); // seqs go on after a trim
        List<String> actions = new ArrayList<>();
        for (JsonNode e : nodes.http("n1").get("/v1/ws/_system/logs/audit/entries?from=1&limit=1000").json().path("entries")) {
            actions.add(e.path("data").path("action").asText() + ":" + e.path("data").path("phase").asText());
        }
        assertTrue(actions.containsAll(List.of("log.trim:intent", "log.trim:done", "log.trim:failed")), actions.toString());
    }

    /** The policy is set through one node; the shard's leader trims to it, and every replica shows the same first. */
    @Test
    void aRetentionPolicySetOnAnyNodeShouldTrimEveryReplica() {
        appendOnce("n2", "kept", "r", 1, 30);
        Http.Reply put = ClusterNodes.untilNot503(() -> nodes.http("n3").put(ColdLogs.logPath("kept", "r") + "/retention", "{\"maxEntries\":10}"));
        assertEquals(200, put.status(), put.body());
        assertEquals("{\"maxAgeSeconds\":null,\"maxEntries\":10,\"maxBytes\":null}", put.json().path("retention").toString());
        assertEquals(400, nodes.http("n1").put(ColdLogs.logPath("kept", "r") + "/retention", "{\"maxEntries\":0}").status());
        for (String id : List.of("n1", "n2", "n3")) {
            ColdLogs.await(id + " trimmed to the policy", Duration.ofSeconds(30),
                    () -> ColdLogs.info(nodes.http(id), "kept", "r").path("first").asLong() == 21);
            assertEquals(10, ColdLogs.info(nodes.http(id), "kept", "r").path("retention").path("maxEntries").asLong(), id);
        }
        assertFirstOnEveryNode("kept", "r", 21, 30);
        appendOnce("n1", "kept", "r", 31, 5); // the leader's next pass (1 s) trims again
        for (String id : List.of("n1", "n2", "n3")) {
            ColdLogs.await(id + " trimmed after more appends", Duration.ofSeconds(30),
                    () -> ColdLogs.info(nodes.http(id), "kept", "r").path("first").asLong() == 26);
        }
        assertFirstOnEveryNode("kept", "r", 26, 35);
    }
}

package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ClusterNodes;
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
 * acknowledged at a quorum and read back identically from every node.
 */
@Timeout(600)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterIT {
    ClusterNodes nodes;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        nodes = new ClusterNodes(dir, 3, 4, List.of());
        nodes.startAll();
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    private Http http(String id) {
        return new Http(nodes.url(id), null);
    }

    /** Retries while the cluster elects its first leaders (503 unavailable, retryable). */
    private static Http.Reply untilNot503(java.util.function.Supplier<Http.Reply> call) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Http.Reply r = call.get();
        while (r.status() == 503 && System.nanoTime() < deadline) {
            r = call.get();
        }
        return r;
    }

    @Test
    void appendsOnEveryNodeShouldReadBackIdenticallyOnEveryNode() {
        List<String> ids = List.of("n1", "n2", "n3");
        for (int i = 0; i < 30; i++) {
            String id = ids.get(i % 3);
            int n = i;
            Http.Reply r = untilNot503(() -> http(id).post("/v1/ws/w" + (n % 5) + "/logs/chat/entries", "{\"data\":{\"n\":" + n + "}}"));
            assertEquals(200, r.status(), r.body());
            assertEquals("quorum", r.json().path("durable").asText(), r.body());
        }
        for (int w = 0; w < 5; w++) {
            String first = null;
            for (String id : ids) {
                Http.Reply page = http(id).get("/v1/ws/w" + w + "/logs/chat/entries?from=1&limit=100");
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

    @Test
    void incrementsFromEveryNodeShouldBeExact() throws Exception {
        List<Thread> threads = new ArrayList<>();
        for (String id : List.of("n1", "n2", "n3")) {
            threads.add(Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 20; i++) {
                    Http.Reply r = untilNot503(() -> http(id).post("/v1/ws/ledger/docs/counter/incr", "{\"path\":\"n\",\"delta\":1}"));
                    assertEquals(200, r.status(), r.body());
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        for (String id : List.of("n1", "n2", "n3")) {
            Http.Reply r = http(id).get("/v1/ws/ledger/docs/counter");
            assertEquals(200, r.status(), r.body());
            assertEquals(60, r.json().path("value").path("n").asLong(), id + ": " + r.body());
        }
    }

    @Test
    void clusterStatusShouldNameEveryShardsLeader() {
        Http.Reply r = untilNot503(() -> http("n2").get("/v1/cluster"));
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertEquals("n2", body.path("node").asText());
        assertEquals(3, body.path("nodes").size(), r.body());
        assertEquals(4, body.path("shards").size(), r.body());
        Http.Reply shard = http("n1").get("/v1/cluster/shard?ws=w1");
        assertEquals(200, shard.status(), shard.body());
        assertTrue(shard.json().path("replicas").size() == 3, shard.body());
    }
}

package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ClusterProbe;
import io.strand.app.testing.Http;
import io.strand.core.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Replacing a dead node (SPEC §13 Membership): n3 is killed for good, a new n4 is started as
 * joining, {@code POST /v1/cluster/replace} (what {@code strand cluster replace --old n3 --new
 * n4=HOST:PORT} sends) moves every replica of n3 to n4; then n1 is killed too, and the two live
 * nodes n2 and n4 still hold every acknowledged append, serve identical pages and take writes.
 */
@ClusterFaultRun.ReliabilityOnly
@Timeout(900)
class ClusterReplaceIT extends ClusterFaultRun {
    @Test
    @Scenario("cluster: replace a dead node (n3 -> n4), then kill n1")
    void replacedNodeShouldHoldEveryShardAndTheClusterSurviveAnotherKill(ReliabilityRow row) throws Exception {
        probe.awaitLeaders(Duration.ofSeconds(120));
        List<String> wss = new ArrayList<>();
        for (int k = 0; k < SHARDS; k++) {
            wss.add(probe.wsOnShard("rep", k));
        }
        Duration max = Duration.ofSeconds(60);
        List<ClusterProbe.Acked> acked = new ArrayList<>(probe.appendMany(List.of("n1", "n2", "n3"), wss, "log", 10, "all", 100, max));

        nodes.kill("n3");
        acked.addAll(probe.appendMany(List.of("n1", "n2"), wss, "log", 10, "n3down", 100, max));

        String n4 = nodes.addSpare("n4");
        long t0 = System.nanoTime();
        nodes.start("n4", nodes.members(), List.of("--cluster-join", "true"));
        long listening = (System.nanoTime() - t0) / 1_000_000;
        t0 = System.nanoTime();
        // what `strand cluster replace --old n3 --new n4=HOST:PORT` sends; a 503 is retryable (a repeat skips moved shards)
        String body = Json.MAPPER.createObjectNode().put("old", "n3").put("new", n4).toString();
        Http.Reply replaced = null;
        int tries = 0;
        while (tries < 3 && (replaced == null || replaced.status() == 503)) {
            tries++;
            replaced = probe.http("n1").withTimeout(Duration.ofMinutes(6)).post("/v1/cluster/replace", body);
        }
        long replaceMs = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(200, replaced.status(), replaced.body());
        if (tries == 1) { // a repeat answers only the shards it still had to move; the status check below covers all
            assertEquals(SHARDS, replaced.json().path("shards").size(), replaced.body());
        }

        Duration caughtUp = probe.awaitApplied("n4", commitIndexes("n1"), Duration.ofSeconds(120));
        JsonNode status = awaitEveryShardOn("n4", Duration.ofSeconds(60));
        StringBuilder report = new StringBuilder("\nreplace n3 -> " + n4 + ": n4 listening after " + listening
                + " ms; replace answered in " + replaceMs + " ms (" + tries + " tries); n4 applied through n1's commit index "
                + caughtUp.toMillis() + " ms later\n| shard | leader | replicas on n4 | n4 role | n4 applied |\n");
        for (JsonNode s : status.path("shards")) {
            report.append(String.format("| %5d | %6s | %-14s | %-8s | %10d |%n", s.path("shard").asInt(), s.path("leader").asText(),
                    s.path("replicas").toString(), s.path("role").asText(), s.path("appliedIndex").asLong()));
        }
        acked.addAll(probe.appendMany(List.of("n1", "n2", "n4"), wss, "log", 10, "replaced", 100, max));
        // an old member (started with the list n1,n2,n3) lists the new replica too, up, with its HTTP address
        JsonNode n4Seen = null;
        for (JsonNode n : probe.status("n2").path("nodes")) {
            if (n.path("id").asText().equals("n4")) {
                n4Seen = n;
            }
        }
        assertTrue(n4Seen != null && n4Seen.path("up").asBoolean(), "n2's /v1/cluster nodes: " + probe.status("n2").path("nodes"));

        nodes.kill("n1");
        t0 = System.nanoTime();
        acked.addAll(probe.appendMany(List.of("n2", "n4"), wss, "log", 10, "n1down", 100, max));
        report.append("n1 killed: 10 appends per shard through n2 and n4 acknowledged in ")
                .append((System.nanoTime() - t0) / 1_000_000).append(" ms\n");
        System.out.println(report);
        probe.checkHistory("after replace n3 -> n4 and the kill of n1", List.of("n2", "n4"), acked, row);
    }

    /** Polls node {@code id}'s status until it holds a live replica of every shard and n3 is in none. */
    private JsonNode awaitEveryShardOn(String id, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        JsonNode status;
        String last;
        do {
            status = probe.status(id);
            last = null;
            for (JsonNode s : status.path("shards")) {
                List<String> replicas = new ArrayList<>();
                s.path("replicas").forEach(r -> replicas.add(r.asText()));
                String role = s.path("role").asText();
                if (!replicas.contains(id) || replicas.contains("n3") || !(role.equals("FOLLOWER") || role.equals("LEADER"))) {
                    last = "shard " + s.path("shard") + ": replicas " + replicas + ", role on " + id + " " + role;
                }
            }
            if (last == null) {
                return status;
            }
            LockSupport.parkNanos(200_000_000L);
        } while (System.nanoTime() < deadline);
        throw new AssertionError(id + " does not hold every shard within " + max + ": " + last);
    }
}

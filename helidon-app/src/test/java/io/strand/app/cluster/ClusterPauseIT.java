package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ClusterProbe;
import io.strand.app.testing.Http;
import io.strand.app.testing.WsClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Nodes stopped dead with SIGSTOP (a GC pause, a frozen VM) rather than killed (issue 12):
 * <ul>
 *   <li>a paused leader: the others elect a new one and take writes; requests sent to the paused
 *       node meanwhile are either refused or acknowledged once, at the seq every node holds (no
 *       split brain); after SIGCONT it converges.</li>
 *   <li>a paused follower with a subscriber connected to it, while the others take more writes
 *       than the leader's log keeps: on SIGCONT the follower installs a snapshot, which replaces
 *       its stores; the subscription ends with a retryable {@code unavailable} {@code closed} frame
 *       carrying its {@code next}, and a new subscription from {@code next} delivers every seq
 *       exactly once.</li>
 * </ul>
 * Snapshots every {@value #SNAPSHOT_EVERY} entries and 64 KiB Raft log segments (hidden
 * {@code strand.cluster.*} properties) make the leader purge its log within a few hundred writes.
 */
@ClusterFaultRun.ReliabilityOnly
@Timeout(900)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterPauseIT extends ClusterFaultRun {
    private static final int SNAPSHOT_EVERY = 50;
    /** Twice the maximum election timeout (300 ms): a paused leader is surely deposed after this. */
    private static final Duration LEADER_PAUSE = Duration.ofMillis(600);

    @Override
    List<String> jvmArgs() {
        return snapshotEvery(SNAPSHOT_EVERY);
    }

    @BeforeAll
    void awaitLeaders() {
        probe.awaitLeaders(Duration.ofSeconds(120));
    }

    @AfterAll
    void resumeAll() throws Exception {
        if (nodes != null) {
            for (String id : nodes.up()) {
                nodes.resume(id); // a paused JVM ignores nothing but SIGKILL; resume so close ends it cleanly
            }
        }
    }

    @Test
    @Order(1)
    @Scenario("cluster: SIGSTOP the leader, writes on all nodes, SIGCONT (3 nodes)")
    void pausedLeaderShouldAcknowledgeNothingConflictingAndConverge(ReliabilityRow row) throws Exception {
        String ws = probe.wsOnShard("pl", 0);
        String leader = probe.leader("n1", 0).orElseThrow();
        List<String> others = othersThan(leader);
        List<ClusterProbe.Acked> acked = appendBefore(ws);

        nodes.pause(leader);
        long pausedAt = System.nanoTime();
        long failoverMs;
        long pausedMs;
        String newLeader;
        List<Thread> toPaused = new ArrayList<>();
        List<String> outcomes = Collections.synchronizedList(new ArrayList<>());
        try {
            // requests to the paused leader: they wait in its socket buffers until it resumes
            Http paused = probe.http(leader).withTimeout(Duration.ofSeconds(60));
            for (int i = 0; i < 5; i++) {
                int n = i;
                toPaused.add(Thread.ofVirtual().start(() -> {
                    String id = ws + "-paused-" + n;
                    Http.Reply r;
                    try {
                        r = paused.post("/v1/ws/" + ws + "/logs/log/entries", "{\"data\":{\"id\":\"" + id
                                + "\"},\"producerId\":\"p-paused\",\"producerSeq\":" + n + "}");
                    } catch (IllegalStateException e) { // no answer in time: neither acked nor refused
                        outcomes.add(id + " no answer: " + e.getCause());
                        return;
                    }
                    outcomes.add(id + " " + r.status() + " " + (r.status() == 200 ? r.json().path("firstSeq").asText() : r.errorCode())
                            + " after " + (System.nanoTime() - pausedAt) / 1_000_000 + " ms");
                    if (r.status() == 200) {
                        synchronized (acked) {
                            acked.add(new ClusterProbe.Acked(ws, "log", id, r.json().path("firstSeq").asLong()));
                        }
                    }
                }));
            }
            ClusterProbe.Acked first = probe.append(others, ws, "log", ws + "-during-0", "x", "p-during", 0, Duration.ofSeconds(60));
            failoverMs = (System.nanoTime() - pausedAt) / 1_000_000;
            synchronized (acked) {
                acked.add(first);
            }
            for (int i = 1; i < 20; i++) {
                ClusterProbe.Acked a = probe.append(others, ws, "log", ws + "-during-" + i, "x", "p-during", i, Duration.ofSeconds(60));
                synchronized (acked) {
                    acked.add(a);
                }
            }
            pausedMs = (System.nanoTime() - pausedAt) / 1_000_000;
            newLeader = probe.leader(others.getFirst(), 0).orElse("none");
        } finally {
            nodes.resume(leader);
        }
        assertTrue(pausedMs >= LEADER_PAUSE.toMillis(), "paused only " + pausedMs + " ms");
        for (Thread t : toPaused) {
            t.join();
        }
        Duration converged = probe.awaitApplied(leader, commitIndexes(others.getFirst()), Duration.ofSeconds(60));
        System.out.println("\npaused leader " + leader + " of shard 0 for " + pausedMs + " ms; new leader " + newLeader
                + "; first write through the others acknowledged " + failoverMs + " ms after the pause; the resumed node applied"
                + " the new leader's commit index " + converged.toMillis() + " ms after SIGCONT\nrequests sent to the paused node:\n  "
                + String.join("\n  ", outcomes));
        assertTrue(!newLeader.equals(leader), "shard 0 still led by the paused " + leader);
        probe.checkHistory("after the paused leader resumed", List.of("n1", "n2", "n3"), acked, row);
    }

    @Test
    @Order(2)
    @Scenario("cluster: SIGSTOP a follower with a subscriber until it needs a snapshot")
    void subscriberOnAFollowerReplacedBySnapshotShouldEndResumablyAndGetEverySeqOnce(ReliabilityRow row) throws Exception {
        String ws = probe.wsOnShard("ps", 1);
        probe.awaitLeaders(Duration.ofSeconds(60));
        String leader = probe.leader("n1", 1).orElseThrow();
        String follower = leader.equals("n3") ? "n2" : "n3";
        List<String> others = othersThan(follower);
        List<ClusterProbe.Acked> acked = appendBefore(ws);

        TreeMap<Long, String> received = new TreeMap<>();
        List<String> duplicates = new ArrayList<>();
        JsonNode closed;
        long held;
        try (WsClient sub = WsClient.connect(nodes.url(follower).replace("http", "ws") + "/v1/ws/" + ws + "/socket")) {
            long id = sub.request("subscribe", "\"log\":\"log\",\"from\":1,\"sub\":\"s\"");
            assertTrue(sub.reply(id, 30_000).path("ok").asBoolean());
            awaitSeq(sub, received, duplicates, 10);
            // the follower's log ends at most a few entries past the commit index (entries in flight): once the
            // live replicas' logs start past that, only a snapshot install can bring it up to date
            held = probe.commitIndex(leader, 1) + 10;

            nodes.pause(follower);
            int rounds = 0;
            try {
                while (probe.firstLogIndex(others.get(0), 1) <= held + 1 || probe.firstLogIndex(others.get(1), 1) <= held + 1) {
                    acked.addAll(probe.appendMany(others, List.of(ws), "log", 25, "paused" + rounds, 1_500, Duration.ofSeconds(60)));
                    assertTrue(++rounds < 40, "the leader's log of shard 1 was not purged past " + held);
                }
            } finally {
                nodes.resume(follower);
            }
            long resumedAt = System.nanoTime();
            try {
                closed = awaitClosed(sub, received, duplicates, Duration.ofSeconds(120));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; seqs received " + received.size() + " (last "
                        + (received.isEmpty() ? 0 : received.lastKey()) + "); " + follower + " snapshot of shard 1: "
                        + probe.snapshotIndex(follower, 1) + ", first log index " + probe.firstLogIndex(follower, 1), e);
            }
            System.out.println("\nfollower " + follower + " paused (its log ends before index " + held + ")" + " while " + rounds
                    + " rounds of 25 writes went to " + others + "; after SIGCONT the subscription ended in "
                    + (System.nanoTime() - resumedAt) / 1_000_000 + " ms with " + closed);
        }
        JsonNode error = closed.path("error");
        assertEquals("error", closed.path("reason").asText(), closed.toString());
        assertEquals("unavailable", error.path("code").asText(), closed.toString());
        assertTrue(error.path("retryable").asBoolean(), closed.toString());
        long next = closed.path("next").asLong();
        assertEquals(received.isEmpty() ? 1 : received.lastKey() + 1, next, "next must follow the last seq delivered");

        // resume from next on the same node: every seq after it, once
        long target = acked.stream().mapToLong(ClusterProbe.Acked::seq).max().orElseThrow();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (received.lastKey() < target && System.nanoTime() < deadline) {
            try (WsClient sub = WsClient.connect(nodes.url(follower).replace("http", "ws") + "/v1/ws/" + ws + "/socket")) {
                long id = sub.request("subscribe", "\"log\":\"log\",\"from\":" + (received.lastKey() + 1) + ",\"sub\":\"s\"");
                JsonNode reply = sub.reply(id, 30_000);
                if (!reply.path("ok").asBoolean()) {
                    assertEquals("unavailable", reply.path("error").path("code").asText(), reply.toString());
                    continue; // the new stores are still opening
                }
                awaitSeq(sub, received, duplicates, target);
            }
        }
        assertTrue(duplicates.isEmpty(), "delivered twice: " + duplicates);
        for (ClusterProbe.Acked a : acked) {
            assertEquals(a.id(), received.get(a.seq()), "seq " + a.seq());
        }
        assertEquals(target, received.size(), "seqs 1.." + target + " each once");
        probe.checkHistory("after the paused follower installed a snapshot", List.of("n1", "n2", "n3"), acked, row);
    }

    /** Reads the subscription's frames until seq {@code seq} has arrived, recording each entry's id by seq. */
    private static void awaitSeq(WsClient sub, TreeMap<Long, String> received, List<String> duplicates, long seq) {
        while (received.isEmpty() || received.lastKey() < seq) {
            JsonNode f = sub.next(60_000);
            if (f.path("type").asText().equals("closed")) {
                throw new AssertionError("subscription closed before seq " + seq + ": " + f);
            }
            record(f, received, duplicates);
        }
    }

    private static JsonNode awaitClosed(WsClient sub, TreeMap<Long, String> received, List<String> duplicates, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode f = sub.next(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            if (f.path("type").asText().equals("closed")) {
                return f;
            }
            record(f, received, duplicates);
        }
        throw new AssertionError("no closed frame within " + max);
    }

    private static void record(JsonNode f, TreeMap<Long, String> received, List<String> duplicates) {
        if (f.path("type").asText().equals("entries")) {
            for (JsonNode e : f.path("entries")) {
                String before = received.put(e.path("seq").asLong(), e.path("data").path("id").asText());
                if (before != null) {
                    duplicates.add(e.path("seq").asText());
                }
            }
        }
    }
}

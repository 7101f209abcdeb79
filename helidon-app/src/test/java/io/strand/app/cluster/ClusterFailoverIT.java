package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster's main fault test (issue 12, SPEC §13): three real nodes, four shards, clients
 * appending (some idempotently with producer fields, retrying through another node), {@code incr}s
 * with a floor, and subscribers on every node, while the leader of the busy shard is SIGKILLed and
 * restarted {@value #LOOPS_TEXT} times (only with -Preliability). After each loop (the restarted node caught up) and at the
 * end, {@link ClusterHistory} reads every log and doc from every node: every acknowledged append at
 * its seq with its data on all three, seqs dense, no duplicate, counters within what the ledger
 * allows, the floor never crossed, each subscriber got each seq once, in order. Failover is the time
 * from the SIGKILL to the first acknowledgement of a write sent after it.
 *
 * <p>Prints the seed, one history row per loop and a summary for the README.
 */
@org.junit.jupiter.api.Tag("reliability")
@org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "strand.reliability.scale", matches = "[1-9][0-9]*",
        disabledReason = "a long cluster fault run (three server JVMs): mvn -B verify -Preliability")
@Timeout(1800)
@FaultTest
class ClusterFailoverIT {
    private static final String LOOPS_TEXT = "20";
    /** SIGKILL/restart loops: 20 with -Preliability (the only build that runs this class), × scale in a soak. */
    private static final int LOOPS = ReliabilityReport.loops(20, 20);
    private static final List<String> NODES = List.of("n1", "n2", "n3");
    private static final Duration FAILOVER_MAX = Duration.ofSeconds(30);
    private static final Duration CATCH_UP_MAX = Duration.ofSeconds(120);
    /** A failover slower than this prints the clients' write attempts around it (the goal is 3 s). */
    private static final long SLOW_FAILOVER_MS = 2_000;

    @TempDir
    Path dir;

    @Test
    @Scenario("cluster: SIGKILL the busy shard's leader, restart (3 nodes)")
    void acknowledgedWritesShouldSurviveKillingTheLeaderRepeatedly(ReliabilityRow row) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ClusterFailoverIT seed " + seed + ", " + LOOPS + " loops");
        Random random = new Random(seed);
        long started = System.nanoTime();
        try (ClusterNodes nodes = new ClusterNodes(dir, NODES.size(), 4, List.of())) {
            nodes.startAll();
            System.out.println("ClusterFailoverIT: 3 nodes up in " + since(started) + " ms");
            awaitFirstWrite(nodes);
            FailoverLoad load = new FailoverLoad(nodes, random.nextLong());
            List<ResumingSubscriber> subscribers = new ArrayList<>();
            for (String home : NODES) {
                for (String log : List.of(FailoverLoad.PRODUCED, FailoverLoad.PLAIN)) {
                    subscribers.add(new ResumingSubscriber(nodes, home, log, random.nextLong()));
                }
            }
            int shard = new Http(nodes.url("n1"), null).get("/v1/cluster/shard?ws=" + FailoverLoad.WS).json().path("shard").asInt();
            ClusterHistory history = new ClusterHistory(nodes, load, subscribers, shard);
            List<ClusterHistory.Check> checks = new ArrayList<>();
            List<Long> failovers = new ArrayList<>();
            List<String> loopNotes = new ArrayList<>();
            AssertionError broke = null;
            try {
                load.start(NODES);
                io.strand.app.testing.Progress.awaitGrowth(load::ackedAppends, 0, Duration.ofSeconds(60));
                history.awaitCaughtUp(CATCH_UP_MAX); // every replica follows before the first kill, or one kill is a majority
                for (int loop = 1; loop <= LOOPS; loop++) {
                    ClusterHistory.Check c = killAndRestartLeader(nodes, load, history, random, loop, started, failovers, loopNotes);
                    checks.add(c);
                    if (!c.clean() || !load.failures.isEmpty()) {
                        break; // the history is broken: report what broke rather than pile on
                    }
                }
            } catch (AssertionError e) {
                broke = e; // a loop that could not finish (no leader, no failover, no catch-up): still check the history
                System.out.println("ClusterFailoverIT: " + e.getMessage() + "\n" + history.describe());
            } finally {
                load.close();
            }
            List<String> lagging = List.of();
            try { // quiesced: every subscriber reaches the head, then the final check holds counters exact
                for (String id : NODES) {
                    if (!nodes.up().contains(id)) {
                        nodes.start(id); // a loop that broke after its kill: bring the node back to check it too
                    }
                }
                history.awaitCaughtUp(CATCH_UP_MAX);
                lagging = awaitSubscribersAtHead(nodes, subscribers);
                checks.add(history.check("final", true));
            } catch (AssertionError e) {
                System.out.println("ClusterFailoverIT final: " + e.getMessage() + "\n" + history.describe());
                if (broke == null) {
                    broke = e;
                } else {
                    broke.addSuppressed(e);
                }
            }
            for (ResumingSubscriber s : subscribers) {
                s.close();
            }
            String table = table(checks, loopNotes);
            System.out.println(table);
            System.out.println(summary(checks, failovers, load, subscribers, since(started))
                    + "(most leader changes of the busy shard seen by a live replica since its last start: " + history.leaderChanges() + ")\n");
            row.runs(failovers.size()).operations(load.requests.get()).acknowledged(load.ackedAppends())
                    .history(worst(checks, ClusterHistory.Check::lost), worst(checks, ClusterHistory.Check::duplicated),
                            worst(checks, ClusterHistory.Check::gaps))
                    .note("failover p50 " + percentile(failovers, 50) + " ms, max " + percentile(failovers, 100) + " ms");
            if (broke != null) {
                throw broke;
            }
            assertTrue(load.failures.isEmpty(), "client failures: " + load.failures);
            assertTrue(lagging.isEmpty(), "subscribers short of the head once the load stopped: " + lagging);
            for (ClusterHistory.Check c : checks) {
                assertTrue(c.clean(), "history check " + c.when() + " broke: " + c + "\n" + table);
            }
            assertEquals(LOOPS, failovers.size(), "every loop ran");
            assertTrue(load.ackedAppends() > LOOPS * 20L, "the load made progress: " + load.ackedAppends() + " acked appends");
        }
    }

    /**
     * One loop: once the load has 20 more acks, SIGKILL the busy shard's leader, wait for the first ack
     * of a write sent after the kill (failover), restart the node, wait until every replica applied the
     * leader's commit index, and check the history.
     */
    private static ClusterHistory.Check killAndRestartLeader(ClusterNodes nodes, FailoverLoad load, ClusterHistory history,
                                                             Random random, int loop, long started, List<Long> failovers,
                                                             List<String> loopNotes) throws Exception {
        io.strand.app.testing.Progress.awaitGrowth(load::ackedAppends, load.ackedAppends() + 20, Duration.ofSeconds(60));
        Thread.sleep(random.nextInt(500)); // fault injection timing, not synchronisation
        String leader = history.leader(Duration.ofSeconds(30));
        load.killedAt(System.nanoTime());
        nodes.kill(leader);
        long failover = awaitFailover(load);
        failovers.add(failover);
        long restartAt = System.nanoTime();
        nodes.start(leader);
        long restartMs = since(restartAt);
        long caughtUpMs = history.awaitCaughtUp(CATCH_UP_MAX);
        String timeline = failover > SLOW_FAILOVER_MS ? load.timeline() : ""; // now every attempt of the window has ended
        ClusterHistory.Check c = history.check("loop " + loop, false);
        loopNotes.add(leader + " | " + failover + " | " + restartMs + " | " + caughtUpMs);
        System.out.println("ClusterFailoverIT loop " + loop + " at " + since(started) / 1000 + " s: killed " + leader
                + ", failover " + failover + " ms, restart " + restartMs + " ms, caught up " + caughtUpMs + " ms, local-only reads "
                + history.localReads() + ", " + c);
        if (!timeline.isEmpty()) {
            System.out.println("ClusterFailoverIT loop " + loop + ": failover over " + SLOW_FAILOVER_MS
                    + " ms; the write attempts in flight at the kill or sent before the first ack after it:\n" + timeline);
        }
        return c;
    }

    private static long worst(List<ClusterHistory.Check> checks, java.util.function.ToLongFunction<ClusterHistory.Check> count) {
        return checks.stream().mapToLong(count).max().orElse(0);
    }

    /** The first write of a new cluster waits for its first elections. */
    private static void awaitFirstWrite(ClusterNodes nodes) {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        Http http = new Http(nodes.url("n1"), null);
        Http.Reply r = http.post("/v1/ws/" + FailoverLoad.WS + "/docs/tally/incr", "{\"path\":\"warm\",\"delta\":1}");
        while (r.status() != 200 && System.nanoTime() < deadline) {
            r = http.post("/v1/ws/" + FailoverLoad.WS + "/docs/tally/incr", "{\"path\":\"warm\",\"delta\":1}");
        }
        assertEquals(200, r.status(), "first write: " + r.body());
    }

    private static long awaitFailover(FailoverLoad load) {
        long deadline = System.nanoTime() + FAILOVER_MAX.toNanos();
        while (load.failoverNanos() < 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no write acknowledged within " + FAILOVER_MAX + " of the leader's SIGKILL");
            }
            LockSupport.parkNanos(5_000_000L);
        }
        return load.failoverNanos() / 1_000_000;
    }

    /** Waits (60 s in all) for every subscriber to reach its log's head; returns the ones that did not. */
    private static List<String> awaitSubscribersAtHead(ClusterNodes nodes, List<ResumingSubscriber> subscribers) {
        Http http = new Http(nodes.url(nodes.up().get(0)), null);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        List<String> behind = new ArrayList<>();
        for (ResumingSubscriber s : subscribers) {
            long head = http.get("/v1/ws/" + FailoverLoad.WS + "/logs/" + s.log()).json().path("head").asLong();
            while (s.last() < head && System.nanoTime() < deadline) {
                LockSupport.parkNanos(20_000_000L);
            }
            if (s.last() != head) {
                behind.add(s.name() + " at " + s.last() + " of " + head + " (reconnects " + s.reconnects.get()
                        + ", last refusal " + s.refused() + ")");
            }
        }
        return behind;
    }

    private static long since(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    static long percentile(List<Long> values, int p) {
        if (values.isEmpty()) {
            return -1;
        }
        List<Long> sorted = values.stream().sorted().toList();
        int rank = (int) Math.ceil(p / 100.0 * sorted.size());
        return sorted.get(Math.max(0, rank - 1));
    }

    private static String table(List<ClusterHistory.Check> checks, List<String> loopNotes) {
        StringBuilder t = new StringBuilder("\n| check | killed | failover ms | restart ms | caught up ms | acked appends | lost"
                + " | behind | duplicated | gaps | diverged | torn | sub missed | sub repeated | sub wrong | tally expected / actual"
                + " | balance expected / actual | floor crossed |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (int i = 0; i < checks.size(); i++) {
            ClusterHistory.Check c = checks.get(i);
            String notes = i < loopNotes.size() ? loopNotes.get(i) : "- | - | - | -";
            t.append("| ").append(c.when()).append(" | ").append(notes).append(" | ").append(c.ackedAppends()).append(" | ")
                    .append(c.lost()).append(" | ").append(c.behind()).append(" | ").append(c.duplicated()).append(" | ").append(c.gaps()).append(" | ")
                    .append(c.diverged()).append(" | ").append(c.torn()).append(" | ").append(c.subMissed()).append(" | ")
                    .append(c.subRepeated()).append(" | ").append(c.subWrong()).append(" | ").append(c.tally()).append(" | ")
                    .append(c.balance()).append(" | ").append(c.floorCrossed()).append(" |\n");
        }
        return t.toString();
    }

    private static String summary(List<ClusterHistory.Check> checks, List<Long> failovers, FailoverLoad load,
                                  List<ResumingSubscriber> subscribers, long totalMs) {
        ClusterHistory.Check last = checks.isEmpty() ? null : checks.get(checks.size() - 1);
        if (last == null) {
            return "\nCluster failover: no history check ran\n";
        }
        long inDoubtOps = load.docOps.stream().filter(op -> op.outcome == FailoverLoad.Outcome.IN_DOUBT).count();
        long reconnects = subscribers.stream().mapToLong(s -> s.reconnects.get()).sum();
        long refusals = subscribers.stream().mapToLong(s -> s.refusals.get()).sum();
        List<Long> latencies = List.copyOf(load.latencyMillis);
        return "\nCluster failover (3 nodes, 4 shards, SIGKILL of the busy shard's leader, default timeouts), "
                + failovers.size() + " loops in " + totalMs / 1000 + " s:\n"
                + "| loops | requests | acked appends | in-doubt appends | producer retries | lost | duplicated | gaps"
                + " | subscriber misses / repeats (reconnects) | tally expected / actual | balance expected / actual"
                + " | failover p50 | failover max |\n"
                + "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
                + "| " + failovers.size() + " | " + load.requests.get() + " | " + last.ackedAppends() + " | "
                + load.inDoubtAppends.size() + " | " + load.retries.get() + " | "
                + worst(checks, ClusterHistory.Check::lost) + " | " + worst(checks, ClusterHistory.Check::duplicated) + " | "
                + worst(checks, ClusterHistory.Check::gaps) + " | "
                + last.subMissed() + " / " + last.subRepeated() + " (" + reconnects + ") | " + last.tally() + " | "
                + last.balance() + " | " + percentile(failovers, 50) + " ms | " + percentile(failovers, 100) + " ms |\n"
                + "(in-doubt doc ops: " + inDoubtOps + "; duplicate answers to producer retries: " + load.duplicateAnswers.get()
                + "; subscribes refused and retried: " + refusals + "; acked write latency p50 " + percentile(latencies, 50)
                + " ms, p99 " + percentile(latencies, 99) + " ms; failovers ms: " + failovers + ")\n";
    }
}

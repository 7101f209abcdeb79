package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The failover figure of {@code strand bench --cluster}: serial appends (one in flight) to a log of
 * the bench workspace through a node that does not lead the workspace's shard, then {@code kill -9}
 * of the shard's leader, and the time from the SIGKILL to the first append acknowledged after the
 * leader's process is gone (only a new leader can acknowledge it). Replies of {@code 503
 * unavailable} meanwhile are counted and the append retried; any other error fails the round.
 * Used by the bench's one thread; each round's appender is one virtual thread.
 */
final class FailoverProbe {
    /** Appends acknowledged before the kill, so the round starts from steady traffic. */
    private static final int APPENDS_BEFORE_KILL = 50;
    /** The longest a round waits for the first acknowledgement after the kill before it fails. */
    private static final long ACK_TIMEOUT_SECONDS = 60;
    /** The goal for kill → next ack (SPEC §13: writes resume within 3 s). */
    static final double GOAL_MS = 3_000;

    private FailoverProbe() {
    }

    /** One kill: which node died, for which shard, through which node the appends went, and kill → next ack. */
    record Round(String killed, int shard, String via, long termBefore, long termAfter, double killToAckMs, long appendsBefore,
                 long unavailable) {
        ObjectNode json() {
            return Json.MAPPER.createObjectNode().put("killed", killed).put("shard", shard).put("via", via)
                    .put("termBefore", termBefore).put("termAfter", termAfter).put("killToAckMs", Math.round(killToAckMs * 10) / 10.0)
                    .put("appendsBeforeKill", appendsBefore).put("unavailableReplies", unavailable);
        }

        String line() {
            return String.format(Locale.ROOT, "failover: kill -9 %s (leader of shard %d, term %d) -> next ack via %s: %.0f ms"
                    + " (term now %d, %d unavailable replies meanwhile)", killed, shard, termBefore, via, killToAckMs, termAfter, unavailable);
        }
    }

    /**
     * One round against {@code cluster}: kills the current leader of the shard holding {@code ws}
     * while appends to {@code log} run through another node. The killed node stays down.
     */
    static Round round(LocalCluster cluster, String ws, String log) throws Exception {
        BenchCluster.Shard before = cluster.shardOf(ws);
        if (before.leader() == null) {
            throw new IllegalStateException("shard " + before.shard() + " has no leader to kill");
        }
        String via = cluster.up().stream().filter(id -> !id.equals(before.leader())).findFirst()
                .orElseThrow(() -> new IllegalStateException("no node left to append through once " + before.leader() + " is killed"));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong acked = new AtomicLong();
        AtomicLong unavailable = new AtomicLong();
        AtomicLong leaderGoneAt = new AtomicLong(); // 0 until the killed process has exited
        CountDownLatch warmedUp = new CountDownLatch(APPENDS_BEFORE_KILL);
        CompletableFuture<Long> firstAckAfter = new CompletableFuture<>();
        try (StrandSocket s = new StrandSocket(cluster.socketUrl(via, ws), null)) {
            Thread appender = Thread.ofVirtual().name("failover-appender").start(() -> {
                try {
                    while (!stop.get()) {
                        JsonNode reply = s.call("append", "\"log\":\"" + log + "\",\"data\":" + LogBenchmarks.PAYLOAD)
                                .get(ACK_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                        long now = System.nanoTime();
                        if (reply.path("ok").asBoolean()) {
                            acked.incrementAndGet();
                            warmedUp.countDown();
                            if (leaderGoneAt.get() != 0) {
                                firstAckAfter.complete(now);
                            }
                        } else if ("unavailable".equals(reply.path("error").path("code").asText())) {
                            unavailable.incrementAndGet();
                        } else {
                            throw new IllegalStateException("append through " + via + " failed: " + reply);
                        }
                    }
                } catch (Exception e) {
                    firstAckAfter.completeExceptionally(e);
                    while (warmedUp.getCount() > 0) {
                        warmedUp.countDown();
                    }
                }
            });
            try {
                if (!warmedUp.await(ACK_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("fewer than " + APPENDS_BEFORE_KILL + " appends through " + via + " in "
                            + ACK_TIMEOUT_SECONDS + " s");
                }
                if (firstAckAfter.isCompletedExceptionally()) {
                    firstAckAfter.join(); // throws the appender's failure
                }
                long appendsBefore = acked.get();
                long killedAt = System.nanoTime();
                cluster.kill(before.leader());
                leaderGoneAt.set(System.nanoTime());
                long ackAt;
                try {
                    ackAt = firstAckAfter.get(ACK_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new IllegalStateException("no append acknowledged " + ACK_TIMEOUT_SECONDS + " s after killing "
                            + before.leader(), e);
                }
                long termAfter = cluster.shardOf(ws).term();
                return new Round(before.leader(), before.shard(), via, before.term(), termAfter, (ackAt - killedAt) / 1e6,
                        appendsBefore, unavailable.get());
            } finally {
                stop.set(true);
                appender.join(TimeUnit.SECONDS.toMillis(ACK_TIMEOUT_SECONDS + 5));
            }
        }
    }

    /** The rounds as JSON: each round, kill → next ack p50 and max, and the goal. */
    static ObjectNode json(List<Round> rounds) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        ArrayNode arr = o.putArray("rounds");
        List<Double> ms = new ArrayList<>();
        for (Round r : rounds) {
            arr.add(r.json());
            ms.add(r.killToAckMs());
        }
        o.put("killToAckIs", "SIGKILL of the shard's leader -> first append acknowledged after its process exited, "
                + "appending serially through another node");
        if (!ms.isEmpty()) {
            o.put("p50Ms", Math.round(percentile(ms, 50) * 10) / 10.0);
            o.put("maxMs", Math.round(Collections.max(ms) * 10) / 10.0);
            o.put("goalMs", GOAL_MS);
            o.put("goalMet", Collections.max(ms) < GOAL_MS);
        }
        return o;
    }

    /** The nearest-rank percentile {@code p} of {@code values} (not empty). */
    static double percentile(List<Double> values, double p) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int rank = (int) Math.ceil(p / 100 * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }
}

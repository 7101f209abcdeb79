package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.cluster.FailoverLoad.Ack;
import io.strand.app.cluster.FailoverLoad.DocOp;
import io.strand.app.cluster.FailoverLoad.Outcome;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.Http;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

/**
 * The history check of {@link ClusterFailoverIT}: reads every log and doc of the load from every
 * node (after each node's replica of the shard applied what the leader had committed) and holds
 * them to the ledgers of {@link FailoverLoad} and {@link ResumingSubscriber}. It counts instead of
 * failing, so the test can print one row per check and then require every count to be 0. Used by
 * the test thread only.
 */
final class ClusterHistory {
    private static final List<String> LOGS = List.of(FailoverLoad.PRODUCED, FailoverLoad.PLAIN);

    /** A counter's possible values given the ledger ({@code lo..hi}) and what the nodes read. */
    record Counter(long lo, long hi, long actual) {
        boolean exact() {
            return actual >= lo && actual <= hi;
        }

        @Override
        public String toString() {
            return (lo == hi ? Long.toString(lo) : lo + ".." + hi) + " / " + actual;
        }
    }

    /**
     * One check: acknowledged appends held to it; acked entries at another seq or with other data on
     * any node, or on none (lost); acked entries beyond the end of a node's log, that node serving a
     * stale copy (behind); an id present twice (duplicated); a missing seq in 1..head (gaps); an
     * entry that differs between nodes at the same seq, or a doc that differs once the load stopped
     * (diverged); a batch not whole and contiguous (torn); subscriber seqs missed, repeated or with
     * other data than the log (wrong); counters read beyond what the ledger allows; balances below 0.
     */
    record Check(String when, long ackedAppends, long lost, long behind, long duplicated, long gaps, long diverged, long torn,
                 long subMissed, long subRepeated, long subWrong, Counter tally, Counter balance, long floorCrossed) {
        boolean clean() {
            return lost == 0 && behind == 0 && duplicated == 0 && gaps == 0 && diverged == 0 && torn == 0 && subMissed == 0
                    && subRepeated == 0 && subWrong == 0 && tally.exact() && balance.exact() && floorCrossed == 0;
        }
    }

    private final ClusterNodes nodes;
    private final FailoverLoad load;
    private final List<ResumingSubscriber> subscribers;
    private final int shard;

    ClusterHistory(ClusterNodes nodes, FailoverLoad load, List<ResumingSubscriber> subscribers, int shard) {
        this.nodes = nodes;
        this.load = load;
        this.subscribers = subscribers;
        this.shard = shard;
    }

    /** {@code GET /v1/cluster} of node {@code id}: the shard's row, or null when the node does not answer. */
    JsonNode shardRow(String id) {
        String url = nodes.url(id);
        if (url == null) {
            return null;
        }
        try {
            Http.Reply r = new Http(url, null).get("/v1/cluster");
            if (r.status() != 200) {
                return null;
            }
            for (JsonNode s : r.json().path("shards")) {
                if (s.path("shard").asInt() == shard) {
                    return s;
                }
            }
            return null;
        } catch (IllegalStateException e) {
            return null;
        }
    }

    /**
     * The shard's leader ({@code GET /v1/cluster/shard?ws=} on a live node), once the node it names is
     * live and says it leads; waits up to {@code max} for one.
     */
    String leader(Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        do {
            for (String id : nodes.up()) {
                String url = nodes.url(id);
                try {
                    Http.Reply r = url == null ? null : new Http(url, null).get("/v1/cluster/shard?ws=" + FailoverLoad.WS);
                    String leader = r == null || r.status() != 200 ? null : r.json().path("leader").asText(null);
                    JsonNode own = leader == null || !nodes.up().contains(leader) ? null : shardRow(leader);
                    if (own != null && "LEADER".equals(own.path("role").asText())) {
                        return leader;
                    }
                } catch (IllegalStateException e) {
                    // that node died under the request: ask another
                }
            }
            LockSupport.parkNanos(50_000_000L);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("no leader of shard " + shard + " within " + max);
    }

    /**
     * Reads the live nodes served from their local copy because no read index came in time
     * ({@code strand.cluster.local.reads}, counted since each node's start): such a read may miss
     * acknowledged writes, so a history break with this above 0 points there.
     */
    long localReads() {
        long sum = 0;
        for (String id : nodes.up()) {
            String url = nodes.url(id);
            try {
                String text = url == null ? "" : new Http(url, null).get("/observe/metrics").body();
                for (String line : text.split("\n")) {
                    if (line.startsWith("strand_cluster_local_reads")) {
                        sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    }
                }
            } catch (IllegalStateException | NumberFormatException e) {
                // a node that does not answer counts nothing
            }
        }
        return sum;
    }

    /** Every live node's row of the shard ({@code GET /v1/cluster}), for a failure message. */
    String describe() {
        StringBuilder out = new StringBuilder();
        for (String id : nodes.up()) {
            out.append("  ").append(id).append(": ").append(shardRow(id)).append('\n');
        }
        return out.toString();
    }

    /** The most leader changes any live replica of the shard has seen since it started. */
    long leaderChanges() {
        long most = 0;
        for (String id : nodes.up()) {
            JsonNode row = shardRow(id);
            most = Math.max(most, row == null ? 0 : row.path("leaderChanges").asLong());
        }
        return most;
    }

    /**
     * Waits until every live node's replica has applied the leader's commit index as of now (the
     * restarted node has caught up); returns the millis it took.
     */
    long awaitCaughtUp(Duration max) {
        long start = System.nanoTime();
        long deadline = start + max.toNanos();
        String leader = leader(max);
        JsonNode lead = shardRow(leader);
        long commit = lead == null ? 0 : lead.path("commitIndex").asLong();
        for (String id : nodes.up()) {
            while (true) {
                JsonNode row = shardRow(id);
                if (row != null && row.path("appliedIndex").asLong() >= commit) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(id + " did not apply shard " + shard + " through " + commit + " within " + max
                            + ": " + row);
                }
                LockSupport.parkNanos(50_000_000L);
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * Every entry of {@code log} as node {@code id} serves it, up to the head of its first page and no
     * further: with the load still running, a later page also holds entries committed after that head,
     * and its {@code limit} may cut a newer batch after its first part (a page may end inside a batch;
     * its {@code next} points at the rest), which would read as a torn batch. Seen once in 20 loops.
     */
    private static List<JsonNode> readLog(String url, String log) {
        List<JsonNode> out = new ArrayList<>();
        Http http = new Http(url, null);
        long next = 1;
        long head = -1;
        while (head < 0 || next <= head) {
            String page = "/v1/ws/" + FailoverLoad.WS + "/logs/" + log + "/entries?from=" + next + "&limit=1000";
            Http.Reply r = retrying503(() -> http.get(page));
            if (r.status() != 200) {
                throw new AssertionError("read of " + log + " from " + url + ": " + r.status() + " " + r.body());
            }
            JsonNode body = r.json();
            if (head < 0) {
                head = body.path("head").asLong();
            }
            if (body.path("entries").isEmpty()) {
                break;
            }
            for (JsonNode e : body.path("entries")) {
                if (e.path("seq").asLong() <= head) {
                    out.add(e);
                }
            }
            next = body.path("next").asLong();
        }
        return out;
    }

    /** A read answered {@code 503} (retryable: the replica could not be brought up to date in time) is retried for 30 s. */
    private static Http.Reply retrying503(java.util.function.Supplier<Http.Reply> read) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Http.Reply r = read.get();
        while (r.status() == 503 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(100_000_000L);
            r = read.get();
        }
        return r;
    }

    private static long docValue(String url, String doc, String path) {
        Http.Reply r = retrying503(() -> new Http(url, null).get("/v1/ws/" + FailoverLoad.WS + "/docs/" + doc));
        if (r.status() == 404) {
            return 0;
        }
        if (r.status() != 200) {
            throw new AssertionError("read of doc " + doc + " from " + url + ": " + r.status() + " " + r.body());
        }
        return r.json().path("value").path(path).asLong();
    }

    /** Runs one check; {@code quiesced} when the load has stopped (docs must then agree on every node). */
    Check check(String when, boolean quiesced) {
        List<Ack> acked = List.copyOf(load.acks);
        Set<DocOp> ackedOps = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        load.docOps.forEach(op -> {
            if (op.outcome == Outcome.ACKED) {
                ackedOps.add(op);
            }
        });
        List<String> up = nodes.up();
        long lost = 0;
        long behind = 0;
        long duplicated = 0;
        long gaps = 0;
        long diverged = 0;
        long torn = 0;
        Map<String, List<JsonNode>> reference = new HashMap<>();
        for (String log : LOGS) {
            Map<String, List<JsonNode>> byNode = new HashMap<>();
            for (String id : up) {
                byNode.put(id, readLog(nodes.url(id), log));
            }
            List<JsonNode> ref = byNode.values().stream().max(java.util.Comparator.comparingInt(List::size)).orElseThrow();
            reference.put(log, ref);
            for (Map.Entry<String, List<JsonNode>> n : byNode.entrySet()) {
                List<JsonNode> entries = n.getValue();
                for (int i = 0; i < entries.size(); i++) {
                    if (!entries.get(i).equals(ref.get(i))) {
                        diverged++;
                        System.out.println("ClusterFailoverIT " + when + ": " + n.getKey() + " " + log + " differs at "
                                + (i + 1) + ": " + entries.get(i) + " vs " + ref.get(i));
                    }
                }
            }
            long worstGaps = 0;
            long worstDup = 0;
            for (Map.Entry<String, List<JsonNode>> n : byNode.entrySet()) {
                long expect = 1;
                long g = 0;
                Set<String> seen = new HashSet<>();
                long d = 0;
                for (JsonNode e : n.getValue()) {
                    long seq = e.path("seq").asLong();
                    if (seq != expect) {
                        g += Math.max(1, seq - expect);
                    }
                    expect = seq + 1;
                    if (!seen.add(e.path("data").path("id").asText())) {
                        d++;
                        System.out.println("ClusterFailoverIT " + when + ": " + n.getKey() + " " + log + " holds "
                                + e.path("data") + " twice (again at seq " + seq + ")");
                    }
                }
                worstGaps = Math.max(worstGaps, g);
                worstDup = Math.max(worstDup, d);
            }
            gaps += worstGaps;
            duplicated += worstDup;
            for (Ack a : acked) {
                if (!a.log().equals(log)) {
                    continue;
                }
                boolean held = false;
                boolean wrong = false;
                boolean past = false;
                for (Map.Entry<String, List<JsonNode>> n : byNode.entrySet()) {
                    List<JsonNode> entries = n.getValue();
                    if (a.seq() > entries.size()) {
                        past = true;
                        System.out.println("ClusterFailoverIT " + when + ": acked " + a + " is past the end of " + n.getKey()
                                + "'s log (" + entries.size() + " entries)");
                        continue;
                    }
                    JsonNode at = entries.get((int) a.seq() - 1);
                    if (at.path("seq").asLong() == a.seq() && a.id().equals(at.path("data").path("id").asText())) {
                        held = true;
                    } else {
                        wrong = true;
                        System.out.println("ClusterFailoverIT " + when + ": acked " + a + " is " + at + " on " + n.getKey());
                    }
                }
                lost += wrong || !held ? 1 : 0;
                behind += past ? 1 : 0;
            }
            if (log.equals(FailoverLoad.PLAIN)) {
                torn += tornBatches(ref);
            }
        }
        long subMissed = 0;
        long subRepeated = 0;
        long subWrong = 0;
        for (ResumingSubscriber s : subscribers) {
            subMissed += s.missed.get();
            subRepeated += s.repeated.get();
            List<String> got = s.received();
            List<JsonNode> ref = reference.get(s.log());
            for (int i = 0; i < got.size() && i < ref.size(); i++) {
                String want = ref.get(i).path("data").path("id").asText();
                if (got.get(i) != null && !got.get(i).equals(want)) {
                    subWrong++;
                    System.out.println("ClusterFailoverIT " + when + ": subscriber " + s.name() + " took " + got.get(i)
                            + " at seq " + (i + 1) + ", the log holds " + want);
                }
            }
        }
        long floorCrossed = load.floorCrossed.get();
        Map<String, Long> tallies = new HashMap<>();
        Map<String, Long> balances = new HashMap<>();
        for (String id : up) {
            tallies.put(id, docValue(nodes.url(id), FailoverLoad.TALLY, "n"));
            long b = docValue(nodes.url(id), FailoverLoad.WALLET, "balance");
            balances.put(id, b);
            if (b < 0) {
                floorCrossed++;
            }
        }
        if (quiesced && (tallies.values().stream().distinct().count() > 1 || balances.values().stream().distinct().count() > 1)) {
            diverged++;
            System.out.println("ClusterFailoverIT " + when + ": docs differ between nodes: tally " + tallies + ", balance " + balances);
        }
        Counter tally = counter(FailoverLoad.TALLY, ackedOps, tallies);
        Counter balance = counter(FailoverLoad.WALLET, ackedOps, balances);
        return new Check(when, acked.size(), lost, behind, duplicated, gaps, diverged, torn, subMissed, subRepeated, subWrong,
                tally, balance, floorCrossed);
    }

    /**
     * The range a counter may hold: everything acked before the read, plus any subset of what was not
     * acked by then (in doubt, in flight, or acked since), less the floor refusals, which change nothing.
     * The actual value is the one read farthest outside the range (all reads are in it when exact).
     */
    private Counter counter(String doc, Set<DocOp> ackedBefore, Map<String, Long> reads) {
        long base = 0;
        long down = 0;
        long up = 0;
        for (DocOp op : load.docOps) {
            if (!op.doc.equals(doc)) {
                continue;
            }
            if (ackedBefore.contains(op)) {
                base += op.delta;
            } else if (op.outcome != Outcome.REFUSED) {
                if (op.delta < 0) {
                    down += op.delta;
                } else {
                    up += op.delta;
                }
            }
        }
        long lo = base + down;
        long hi = base + up;
        long actual = reads.values().stream().max(java.util.Comparator.comparingLong(v -> v < lo ? lo - v : v > hi ? v - hi : 0))
                .orElse(lo);
        return new Counter(lo, hi, actual);
    }

    /** Batches of the plain log ({@code id.k}, k = 0..2) that are not whole or not at consecutive seqs. */
    private static long tornBatches(List<JsonNode> entries) {
        Map<String, List<Long>> parts = new HashMap<>();
        for (JsonNode e : entries) {
            String id = e.path("data").path("id").asText();
            int dot = id.lastIndexOf('.');
            if (dot > 0) {
                parts.computeIfAbsent(id.substring(0, dot), k -> new ArrayList<>()).add(e.path("seq").asLong() * 10
                        + Integer.parseInt(id.substring(dot + 1)));
            }
        }
        long torn = 0;
        for (Map.Entry<String, List<Long>> p : parts.entrySet()) {
            List<Long> v = p.getValue();
            boolean whole = v.size() == 3;
            for (int k = 0; whole && k < 3; k++) {
                whole = v.get(k) % 10 == k && v.get(k) / 10 == v.get(0) / 10 + k;
            }
            if (!whole) {
                torn++;
                System.out.println("ClusterFailoverIT: batch " + p.getKey() + " is torn: " + v + " (seq*10+part)");
            }
        }
        return torn;
    }
}

package io.strand.app.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.cluster.ClusterSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the cluster fault tests ask of a running {@link ClusterNodes}: shard leaders, workspaces
 * placed on a chosen shard, idempotent appends retried through the live nodes, every log and doc
 * of a node read back, the Raft log's first index on disk, and the history check (every
 * acknowledged append present with its seq on every node, seqs dense, no duplicate, nodes
 * identical) printed as a table. Used by the test thread (appends also from virtual threads:
 * stateless apart from the nodes it reads).
 */
public final class ClusterProbe {
    /** {@code log_<start>-<end>} (closed) or {@code log_inprogress_<start>}: a Ratis log segment. */
    private static final Pattern SEGMENT = Pattern.compile("log_(?:inprogress_)?(\\d+)(?:-\\d+)?");
    /**
     * Server flags of the fault tests' nodes: a doc map of 10,000 docs per shard replica. The default
     * 200,000 makes every replica's map file 173 MB, created at each start of each shard: with 3 nodes
     * of 4 shards on a shared 2-core box that alone took minutes.
     */
    public static final List<String> SMALL_DOC_MAPS = List.of("--doc-capacity", "10000");
    private final ClusterNodes nodes;
    private final int shards;

    public ClusterProbe(ClusterNodes nodes, int shards) {
        this.nodes = nodes;
        this.shards = shards;
    }

    public Http http(String id) {
        return new Http(nodes.url(id), null);
    }

    /** The first of {@code prefix0}, {@code prefix1}, … that lives on {@code shard}. */
    public String wsOnShard(String prefix, int shard) {
        for (int i = 0; ; i++) {
            if (ClusterSpec.shardOf(prefix + i, shards) == shard) {
                return prefix + i;
            }
        }
    }

    public int shardOf(String ws) {
        return ClusterSpec.shardOf(ws, shards);
    }

    /** {@code GET /v1/cluster} on node {@code id}. */
    public JsonNode status(String id) {
        Http.Reply r = http(id).withTimeout(Duration.ofSeconds(10)).get("/v1/cluster");
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    /** The leader node {@code via} sees for {@code shard}, if any. */
    public Optional<String> leader(String via, int shard) {
        JsonNode l = status(via).path("shards").get(shard).path("leader");
        return l.isTextual() ? Optional.of(l.asText()) : Optional.empty();
    }

    /** Waits until every live node sees a leader among the live nodes for every shard. */
    public void awaitLeaders(Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            boolean all = true;
            for (String id : nodes.up()) {
                for (JsonNode s : status(id).path("shards")) {
                    String l = s.path("leader").asText("");
                    if (!nodes.up().contains(l)) {
                        all = false;
                        last = id + " sees shard " + s.path("shard") + " led by '" + l + "'";
                    }
                }
            }
            if (all) {
                return;
            }
            LockSupport.parkNanos(100_000_000L);
        }
        throw new AssertionError("no leader on every shard within " + max + ": " + last);
    }

    /** One acknowledged append of the entry named {@code id}. */
    public record Acked(String ws, String log, String id, long seq) {
    }

    /**
     * Appends {@code {"data":{"id":id,"pad":pad}}} with {@code producerId}/{@code producerSeq},
     * through the nodes of {@code via} in turn, until one acknowledges it (a retried try is applied
     * once, whichever node took it) or {@code max} passes (then an AssertionError).
     */
    public Acked append(List<String> via, String ws, String log, String id, String pad, String producer, long producerSeq,
                        Duration max) {
        String body = "{\"data\":{\"id\":\"" + id + "\",\"pad\":\"" + pad + "\"},\"producerId\":\"" + producer
                + "\",\"producerSeq\":" + producerSeq + "}";
        long deadline = System.nanoTime() + max.toNanos();
        String last = "";
        for (int i = 0; System.nanoTime() < deadline; i++) {
            String node = via.get(i % via.size());
            String url = nodes.url(node);
            if (url == null) {
                continue;
            }
            try {
                Http.Reply r = new Http(url, null).withTimeout(Duration.ofSeconds(10)).post("/v1/ws/" + ws + "/logs/" + log + "/entries", body);
                if (r.status() == 200) {
                    return new Acked(ws, log, id, r.json().path("firstSeq").asLong());
                }
                last = node + ": " + r.status() + " " + r.body();
                if (r.status() != 503) {
                    throw new AssertionError("append " + id + " on " + node + ": " + last);
                }
            } catch (IllegalStateException e) { // connection refused, timeout: try the next node
                last = node + ": " + e.getCause();
                LockSupport.parkNanos(50_000_000L);
            }
        }
        throw new AssertionError("append " + id + " to " + ws + "/" + log + " not acknowledged within " + max + "; last: " + last);
    }

    /**
     * {@code perWs} appends to log {@code log} of each of {@code wss}, the workspaces in parallel (one
     * virtual thread each, appends in order within one), each through {@link #append} with producer
     * {@code "p-" + ws + "-" + tag}, entry ids {@code ws-tag-i} and {@code padBytes} of padding, plus one
     * doc {@code put} per workspace (doc {@code tag}, retried past 503s: a put is idempotent).
     */
    public List<Acked> appendMany(List<String> via, List<String> wss, String log, int perWs, String tag, int padBytes,
                                  Duration max) throws InterruptedException {
        List<Acked> acked = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (String ws : wss) {
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < perWs; i++) {
                        acked.add(append(via, ws, log, ws + "-" + tag + "-" + i, pad(padBytes, i), "p-" + ws + "-" + tag, i, max));
                    }
                    Http.Reply put = past503(() -> new Http(nodes.url(via.getFirst()), null).put("/v1/ws/" + ws + "/docs/" + tag,
                            "{\"value\":{\"ws\":\"" + ws + "\",\"appends\":" + perWs + "}}"), max);
                    if (put.status() != 200) {
                        throw new AssertionError("doc put " + ws + "/" + tag + ": " + put.status() + " " + put.body());
                    }
                } catch (RuntimeException | Error e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new AssertionError("appends failed: " + failures.getFirst(), failures.getFirst());
        }
        return new ArrayList<>(acked);
    }

    /**
     * Calls {@code call} until it answers anything but {@code 503} (a busy box can make any single
     * write time out), for idempotent requests only; the last reply after {@code max}.
     */
    public static Http.Reply past503(java.util.function.Supplier<Http.Reply> call, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        Http.Reply r = call.get();
        while (r.status() == 503 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(100_000_000L);
            r = call.get();
        }
        return r;
    }

    /** Every entry of {@code ws/log} on node {@code id}, page after page (after its read barrier). */
    public List<JsonNode> entries(String id, String ws, String log) {
        List<JsonNode> out = new ArrayList<>();
        long from = 1;
        while (true) {
            Http.Reply r = http(id).get("/v1/ws/" + ws + "/logs/" + log + "/entries?from=" + from + "&limit=1000");
            assertEquals(200, r.status(), id + " " + ws + "/" + log + ": " + r.body());
            JsonNode page = r.json();
            page.path("entries").forEach(out::add);
            long next = page.path("next").asLong();
            if (page.path("entries").isEmpty() || next > page.path("head").asLong()) {
                return out;
            }
            from = next;
        }
    }

    /**
     * Everything node {@code id} serves, for comparing nodes: {@code ws/log} → every entry (seq, ts,
     * data) and {@code ws/docs/doc} → its {@code {"version","value"}}, over every workspace it lists.
     */
    public SortedMap<String, String> content(String id) {
        SortedMap<String, String> out = new TreeMap<>();
        Http http = http(id);
        Http.Reply list = http.get("/v1/ws");
        assertEquals(200, list.status(), list.body());
        for (JsonNode w : list.json().path("workspaces")) {
            String ws = w.path("ws").asText();
            if (ws.startsWith("_")) { // _system: only its audit log is readable over the API
                out.put(ws + "/audit", entries(id, ws, "audit").toString());
                continue;
            }
            for (String log : names(http, "/v1/ws/" + ws + "/logs", "logs")) {
                out.put(ws + "/" + log, entries(id, ws, log).toString());
            }
            for (String doc : names(http, "/v1/ws/" + ws + "/docs", "docs")) {
                Http.Reply d = http.get("/v1/ws/" + ws + "/docs/" + doc);
                assertEquals(200, d.status(), id + " " + ws + "/docs/" + doc + ": " + d.body());
                out.put(ws + "/docs/" + doc, d.body());
            }
        }
        return out;
    }

    private static List<String> names(Http http, String path, String field) {
        List<String> out = new ArrayList<>();
        String after = null;
        while (true) {
            Http.Reply r = http.get(path + "?limit=1000" + (after == null ? "" : "&after=" + after));
            assertEquals(200, r.status(), path + ": " + r.body());
            r.json().path(field).forEach(n -> out.add(n.asText()));
            if (!r.json().has("after")) {
                return out;
            }
            after = r.json().path("after").asText();
        }
    }

    /**
     * The lowest index still in node {@code id}'s Raft log of {@code shard} on disk (its segment
     * files), -1 when it has none: above 0 once the log was purged behind a snapshot, so a replica
     * that lacks the purged entries can only catch up by a snapshot install.
     */
    public long firstLogIndex(String id, int shard) throws IOException {
        Path current = nodes.dataDir(id).resolve("raft").resolve(ClusterSpec.groupId(shard).toString()).resolve("current");
        if (!Files.isDirectory(current)) {
            return -1;
        }
        try (Stream<Path> files = Files.list(current)) {
            return files.map(p -> SEGMENT.matcher(p.getFileName().toString())).filter(Matcher::matches)
                    .mapToLong(m -> Long.parseLong(m.group(1))).min().orElse(-1);
        }
    }

    /** The commit index node {@code via} reports for {@code shard} (its own replica's, or a replica's it asked). */
    public long commitIndex(String via, int shard) {
        return status(via).path("shards").get(shard).path("commitIndex").asLong();
    }

    /**
     * Waits until node {@code id}'s replica of every shard has applied at least {@code indexes[k]}
     * (its {@code appliedIndex} in {@code GET /v1/cluster}); returns how long it took.
     */
    public Duration awaitApplied(String id, long[] indexes, Duration max) {
        long start = System.nanoTime();
        long deadline = start + max.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                JsonNode shardsNow = status(id).path("shards");
                boolean all = true;
                for (int k = 0; k < indexes.length; k++) {
                    long applied = shardsNow.get(k).path("appliedIndex").asLong(-1);
                    if (applied < indexes[k]) {
                        all = false;
                        last = "shard " + k + " applied " + applied + " < " + indexes[k];
                    }
                }
                if (all) {
                    return Duration.ofNanos(System.nanoTime() - start);
                }
            } catch (AssertionError | IllegalStateException e) {
                last = String.valueOf(e.getMessage()); // starting up
            }
            LockSupport.parkNanos(200_000_000L);
        }
        throw new AssertionError(id + " did not apply " + java.util.Arrays.toString(indexes) + " within " + max + ": " + last);
    }

    /** The highest snapshot index in node {@code id}'s {@code shards/<k>/snapshots}, -1 without one. */
    public long snapshotIndex(String id, int shard) throws IOException {
        Path dir = nodes.dataDir(id).resolve("shards").resolve(Integer.toString(shard)).resolve("snapshots");
        if (!Files.isDirectory(dir)) {
            return -1;
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+_\\d+"))
                    .mapToLong(n -> Long.parseLong(n.substring(n.indexOf('_') + 1))).max().orElse(-1);
        }
    }

    /** A string of {@code n} letters (entries big enough to fill Raft log segments quickly). */
    public static String pad(int n, long seed) {
        StringBuilder b = new StringBuilder(n);
        java.util.Random r = new java.util.Random(seed);
        for (int i = 0; i < n; i++) {
            b.append((char) ('a' + r.nextInt(26)));
        }
        return b.toString();
    }

    /**
     * The history check over what {@code ids} serve: every acknowledged append present on every
     * node with the seq it was acknowledged with, each log's seqs dense from 1, no entry id twice in
     * a log, and every node's content identical to the first's. Prints the table, then asserts.
     *
     * @return the first node's content
     */
    public SortedMap<String, String> checkHistory(String title, List<String> ids, List<Acked> acked) {
        return checkHistory(title, ids, acked, null);
    }

    /**
     * As {@link #checkHistory(String, List, List)}, and fills {@code row} (if not null) before asserting:
     * acknowledged appends, and lost (missing or at another seq), duplicated and gaps on the worst node.
     */
    public SortedMap<String, String> checkHistory(String title, List<String> ids, List<Acked> acked,
                                                  ReliabilityRow row) {
        long worstLost = 0;
        long worstDuplicates = 0;
        long worstGaps = 0;
        Map<String, SortedMap<String, String>> byNode = new java.util.LinkedHashMap<>();
        for (String id : ids) {
            byNode.put(id, content(id));
        }
        SortedMap<String, String> first = byNode.get(ids.getFirst());
        StringBuilder table = new StringBuilder("\n" + title + "\n");
        table.append(String.format("| %-4s | %5s | %7s | %4s | %6s | %7s | %9s | %4s | %10s | %9s |%n", "node", "logs",
                "entries", "docs", "acked", "missing", "wrong seq", "gaps", "duplicates", "identical"));
        List<String> failures = new ArrayList<>();
        for (var e : byNode.entrySet()) {
            Map<String, Map<String, Long>> seqOfId = new HashMap<>();
            int logs = 0;
            int docs = 0;
            long entries = 0;
            long gaps = 0;
            long duplicates = 0;
            for (var c : e.getValue().entrySet()) {
                if (c.getKey().contains("/docs/")) {
                    docs++;
                    continue;
                }
                logs++;
                Map<String, Long> seqs = new HashMap<>();
                Set<String> seen = new HashSet<>();
                long expect = 1;
                for (JsonNode entry : io.strand.core.Json.parse(c.getValue())) {
                    entries++;
                    if (entry.path("seq").asLong() != expect) {
                        gaps++;
                    }
                    expect = entry.path("seq").asLong() + 1;
                    String id = entry.path("data").path("id").asText(null);
                    if (id != null) {
                        if (!seen.add(id)) {
                            duplicates++;
                        }
                        seqs.put(id, entry.path("seq").asLong());
                    }
                }
                seqOfId.put(c.getKey(), seqs);
            }
            long missing = 0;
            long wrongSeq = 0;
            for (Acked a : acked) {
                Long seq = seqOfId.getOrDefault(a.ws() + "/" + a.log(), Map.of()).get(a.id());
                if (seq == null) {
                    missing++;
                } else if (seq != a.seq()) {
                    wrongSeq++;
                }
            }
            worstLost = Math.max(worstLost, missing + wrongSeq);
            worstDuplicates = Math.max(worstDuplicates, duplicates);
            worstGaps = Math.max(worstGaps, gaps);
            boolean identical = e.getValue().equals(first);
            table.append(String.format("| %-4s | %5d | %7d | %4d | %6d | %7d | %9d | %4d | %10d | %9s |%n", e.getKey(), logs,
                    entries, docs, acked.size(), missing, wrongSeq, gaps, duplicates, identical));
            if (missing + wrongSeq + gaps + duplicates > 0 || !identical) {
                failures.add(e.getKey() + ": missing " + missing + ", wrong seq " + wrongSeq + ", gaps " + gaps
                        + ", duplicates " + duplicates + (identical ? "" : ", differs from " + ids.getFirst()
                        + " at " + firstDifference(first, e.getValue())));
            }
        }
        System.out.println(table);
        if (row != null) {
            row.runs(1).acknowledged(acked.size()).history(worstLost, worstDuplicates, worstGaps);
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
        return first;
    }

    private static String firstDifference(SortedMap<String, String> a, SortedMap<String, String> b) {
        Set<String> keys = new java.util.TreeSet<>(a.keySet());
        keys.addAll(b.keySet());
        for (String k : keys) {
            if (!java.util.Objects.equals(a.get(k), b.get(k))) {
                return k + " (" + abbreviate(a.get(k)) + " vs " + abbreviate(b.get(k)) + ")";
            }
        }
        return "?";
    }

    private static String abbreviate(String s) {
        return s == null ? "absent" : s.length() <= 300 ? s : s.substring(0, 300) + "…";
    }
}

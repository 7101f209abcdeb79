package io.strand.app.cluster;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.logPath;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.coldtier.Manifest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cold tier of a cluster (SPEC §13) on three real server processes sharing one cold directory
 * ({@code --cold file:…}), with a 300-entry hot threshold and one-second hot files so rolls happen
 * within seconds: only each shard's leader rolls, reads across the hot/cold boundary are identical
 * on every node, every replica drops its own rolled hot files, and after the leader is killed in
 * the middle of appends the new leader goes on rolling with no entry lost or duplicated and a
 * manifest that never goes back. The killed node, restarted, replays the log into the cycle files
 * of the seconds the replay took, cold entries and newer ones together; with traffic going on, it
 * too drops every hot file the manifest comes to cover. A wait that times out prints every node's
 * head, hot bounds, counters and hot cycle files, and names the node and field that were off.
 * A delete taken by a follower empties the shared manifest (the leader's term-fenced tombstone) and
 * deletes the segments before the name is used again.
 */
@Timeout(600)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterColdIT {
    private static final String LOG = "events";
    private static final int HOT_MAX = 300;
    ClusterNodes nodes;
    Path shared;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        shared = Files.createDirectories(dir.resolve("shared-cold"));
        nodes = new ClusterNodes(dir, 3, 4, List.of("--cold", shared.toUri().toString(),
                "--hot-max-entries", String.valueOf(HOT_MAX), "--hot-roll-cycle", "secondly"));
        nodes.startAll();
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    /** The workspace's shard leader as node {@code asking} sees it (null while there is none). */
    private String leaderOf(String ws, String asking) {
        Http.Reply r = nodes.http(asking).get("/v1/cluster/shard?ws=" + ws);
        assertEquals(200, r.status(), r.body());
        return r.json().path("leader").isTextual() ? r.json().path("leader").asText() : null;
    }

    /**
     * Sends one batch until a node acknowledges it, trying the running nodes in turn (a killed node,
     * a 503 during an election, a timeout: the producer seq makes a retry land once). Returns the ack.
     */
    private JsonNode appendUntilAcked(String ws, String body, int startAt, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        for (int attempt = startAt; System.nanoTime() < deadline; attempt++) {
            List<String> up = nodes.up();
            String id = up.get(Math.floorMod(attempt, up.size()));
            try {
                Http.Reply r = nodes.http(id).post(logPath(ws, LOG) + "/entries", body);
                if (r.status() == 200) {
                    return r.json();
                }
                last = id + ": " + r.status() + " " + r.body();
                assertTrue(r.status() >= 500, "a refused append: " + last);
            } catch (IllegalStateException e) {
                last = id + ": " + e.getMessage(); // connection refused or reset: that node is down
            }
            LockSupport.parkNanos(100_000_000); // before the retry, elections take a moment
        }
        throw new AssertionError("no node acknowledged the batch within " + timeout + "; last answer " + last);
    }

    /** Every entry of {@code ws/LOG} read forward from node {@code id}, page by page from seq 1, checked dense. */
    private static List<JsonNode> readAll(Http http, String ws, String id) {
        List<JsonNode> out = new ArrayList<>();
        long next = 1;
        while (true) {
            Http.Reply r = http.get(logPath(ws, LOG) + "/entries?from=" + next + "&limit=400");
            assertEquals(200, r.status(), id + ": " + r.body());
            JsonNode page = r.json();
            assertFalse(page.has("gap"), id + ": a gap in a log nothing trimmed: " + r.body());
            if (page.get("entries").isEmpty()) {
                assertEquals(page.get("head").asLong(), out.size(), id + ": forward pages end at the head");
                return out;
            }
            for (JsonNode e : page.get("entries")) {
                assertEquals(out.size() + 1, e.get("seq").asLong(), id + ": seqs dense and in order");
                out.add(e);
            }
            next = page.get("next").asLong();
        }
    }

    /** Every entry of {@code ws/LOG} read backward from node {@code id}, from the end down to seq 1, in seq order. */
    private static List<JsonNode> readAllBackward(Http http, String ws, String id) {
        List<JsonNode> out = new ArrayList<>();
        String before = "end";
        while (true) {
            Http.Reply r = http.get(logPath(ws, LOG) + "/entries?before=" + before + "&limit=333");
            assertEquals(200, r.status(), id + ": " + r.body());
            JsonNode page = r.json();
            List<JsonNode> entries = new ArrayList<>();
            page.get("entries").forEach(entries::add);
            if (entries.isEmpty()) {
                return out;
            }
            out.addAll(0, entries);
            long prev = page.get("prev").asLong();
            if (prev <= 1) {
                return out;
            }
            before = String.valueOf(prev);
        }
    }

    private static JsonNode coldStatus(Http http, String ws) {
        Http.Reply r = http.get(logPath(ws, LOG) + "/cold");
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    /**
     * Each node's head, first hot seq (the one it serves from, and the first it still stores),
     * whether it writes the log's cold part, and its roller's and step-6 counters, so a failed wait
     * says which node and which field is off.
     */
    private void printNodes(String ws, String when) {
        Manifest m = ColdLogs.storedManifest(shared, ws, LOG);
        System.out.printf("ClusterColdIT %s — %s: manifest generation %d, term %d, cold 1..%d in %d segments%n", ws, when,
                m.generation(), m.term(), m.lastSeq(), m.segments().size());
        String asking = nodes.up().getFirst();
        System.out.printf("  shard leader as %s sees it: %s%n", asking, leaderOf(ws, asking));
        System.out.printf("  %-4s %8s %8s %15s %8s %7s %6s %6s %7s %7s %8s  %s%n", "node", "head", "hotFirst", "hotStoredFirst",
                "coldLast", "writer", "term", "rolls", "drops", "dropErr", "rollErr", "lastError");
        for (String id : nodes.up()) {
            try {
                JsonNode s = coldStatus(nodes.http(id), ws);
                JsonNode n = s.path("node");
                System.out.printf("  %-4s %8d %8d %15d %8d %7s %6d %6d %7d %7d %8d  %s%n", id, s.path("head").asLong(),
                        s.path("hotFirst").asLong(), s.path("hotStoredFirst").asLong(), s.path("lastSeq").asLong(),
                        s.path("writer").asBoolean(), s.path("term").asLong(), n.path("rolls").asLong(),
                        n.path("coveredDrops").asLong(), n.path("coveredDropFailures").asLong(), n.path("rollFailures").asLong(),
                        n.path("lastError").asText());
                System.out.printf("       its hot cycle files: %s%n", hotFiles(id, ws));
            } catch (RuntimeException | AssertionError e) {
                System.out.printf("  %-4s no cold status: %s%n", id, e.getMessage());
            }
        }
    }

    /**
     * The hot cycle files of {@code ws/LOG} in node {@code id}'s live shard directory, by name: each
     * is named by the second this node started writing it (not by seqs), so a catch-up shows as the
     * seconds it replayed in.
     */
    private String hotFiles(String id, String ws) {
        try (Stream<Path> paths = Files.walk(nodes.dataDir(id))) {
            return paths.filter(f -> f.getFileName().toString().endsWith(".cq4") && f.getParent().endsWith(Path.of(ws, LOG, "queue"))
                    && f.toString().contains("live")).map(f -> f.getFileName().toString()).sorted().toList().toString();
        } catch (IOException | UncheckedIOException e) {
            return "unlisted (" + e.getMessage() + ")";
        }
    }

    /**
     * Waits until {@code behind} finds nothing wrong on any of {@code ids} (it answers null for a
     * node that is where it should be, else what is off, field by field); on a timeout prints every
     * node and fails naming each node that never got there and why.
     */
    private void awaitEveryNode(String ws, String what, Duration timeout, List<String> ids,
            BiFunction<String, JsonNode, String> behind) {
        Map<String, String> lastWrong = new TreeMap<>();
        try {
            await(what, timeout, () -> {
                lastWrong.clear();
                for (String id : ids) {
                    try {
                        String wrong = behind.apply(id, coldStatus(nodes.http(id), ws));
                        if (wrong != null) {
                            lastWrong.put(id, wrong);
                        }
                    } catch (RuntimeException | AssertionError e) {
                        lastWrong.put(id, "no cold status: " + e.getMessage());
                    }
                }
                return lastWrong.isEmpty();
            });
        } catch (AssertionError timedOut) {
            printNodes(ws, "timed out waiting for " + what);
            throw new AssertionError(timedOut.getMessage() + "; still off: " + lastWrong, timedOut);
        }
    }

    @Test
    @Order(1)
    void rolledEntriesShouldReadIdenticallyOnEveryNodeAndLeaveNoHotFilesOnAnyReplica() throws IOException {
        String ws = "cold-a";
        List<String> ids = List.of("n1", "n2", "n3");
        int batches = 30;
        int perBatch = 100;
        for (int b = 0; b < batches; b++) {
            JsonNode ack = appendUntilAcked(ws, ColdLogs.producerBatch("p-a", b + 1, perBatch), b, Duration.ofSeconds(60));
            assertEquals("quorum", ack.path("durable").asText(), ack.toString());
            assertEquals((long) b * perBatch + 1, ack.path("firstSeq").asLong(), ack.toString());
            LockSupport.parkNanos(120_000_000); // spreads the entries over several one-second hot files
        }
        long total = (long) batches * perBatch;
        awaitEveryNode(ws, "every replica past its hot threshold with rolled hot files dropped", Duration.ofSeconds(120), ids,
                (id, s) -> s.path("segments").asInt() == 0 ? "no cold segment yet"
                        : s.path("head").asLong() != total ? "head " + s.path("head") + " != " + total
                        : s.path("head").asLong() - s.path("hotFirst").asLong() + 1 > HOT_MAX ? "hotFirst " + s.path("hotFirst")
                                + " leaves more than " + HOT_MAX + " hot entries below head " + s.path("head")
                        : s.path("hotStoredFirst").asLong() <= total / 3 ? "hotStoredFirst " + s.path("hotStoredFirst")
                                + " <= " + total / 3 + " (rolled hot files not dropped)"
                        : null);
        printNodes(ws, "after " + total + " entries");
        String leader = leaderOf(ws, "n1");
        assertNotNull(leader);
        for (String id : ids) {
            JsonNode s = coldStatus(nodes.http(id), ws);
            assertEquals(id.equals(leader), s.path("writer").asBoolean(), id + " writes the cold part only if it leads: " + s);
        }
        Manifest m = ColdLogs.storedManifest(shared, ws, LOG);
        assertTrue(m.term() >= 1, "the leader's term is in the manifest: " + m.term());
        assertEquals(m.lastSeq(), coldStatus(nodes.http(leader), ws).path("lastSeq").asLong());

        // the same entries, byte for byte, from every node across the hot/cold boundary
        String first = null;
        for (String id : ids) {
            List<JsonNode> entries = readAll(nodes.http(id), ws, id);
            assertEquals(total, entries.size(), id);
            for (int k = 0; k < entries.size(); k++) {
                JsonNode d = entries.get(k).get("data");
                assertEquals(k / perBatch + 1, d.get("b").asLong(), id + " seq " + (k + 1));
                assertEquals(k % perBatch, d.get("i").asLong(), id + " seq " + (k + 1));
            }
            assertEquals(entries.toString(), readAllBackward(nodes.http(id), ws, id).toString(), id + ": backward pages");
            String all = entries.toString();
            if (first == null) {
                first = all;
            } else {
                assertEquals(first, all, "node " + id + " reads other entries (or other ts) than n1");
            }
        }

        // status and verify read on any node; roll and compact only on the leader, which a follower names
        String follower = ids.stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
        JsonNode verify = ColdLogs.verify(nodes.http(follower), ws, LOG);
        assertTrue(verify.path("ok").asBoolean(), verify.toString());
        Http.Reply refused = nodes.http(follower).post(logPath(ws, LOG) + "/cold/roll", "");
        assertEquals(503, refused.status(), refused.body());
        assertEquals(leader, refused.json().path("error").path("leader").asText(), refused.body());
        assertEquals(503, nodes.http(follower).post(logPath(ws, LOG) + "/cold/compact", "{}").status());
        Http.Reply rolled = nodes.http(leader).post(logPath(ws, LOG) + "/cold/roll", "");
        assertEquals(200, rolled.status(), rolled.body());
        assertEquals(total, rolled.json().path("coldLastSeq").asLong(), rolled.body());
        Http.Reply compacted = nodes.http(leader).post(logPath(ws, LOG) + "/cold/compact", "{\"graceSeconds\":3600}");
        assertEquals(200, compacted.status(), compacted.body());
        assertEquals(1, ColdLogs.storedManifest(shared, ws, LOG).segments().size(), "compacted into one segment: " + compacted.body());
        for (String id : ids) {
            assertEquals(first, readAll(nodes.http(id), ws, id).toString(), id + " after compaction");
        }
        // a delete on a follower: every replica drops the log, the leader empties the shared manifest
        long generation = ColdLogs.storedManifest(shared, ws, LOG).generation();
        Http.Reply delete = nodes.http(follower).delete(logPath(ws, LOG));
        assertEquals(200, delete.status(), delete.body());
        Manifest emptied = ColdLogs.storedManifest(shared, ws, LOG);
        assertTrue(emptied.segments().isEmpty() && emptied.generation() > generation, "the manifest is emptied: " + emptied);
        try (Stream<Path> objects = Files.walk(shared.resolve(ws).resolve(LOG))) {
            assertEquals(List.of("manifest.json"), objects.filter(Files::isRegularFile).map(f -> f.getFileName().toString()).toList(),
                    "the segments are deleted");
        }
        for (String id : ids) {
            assertEquals(404, ClusterNodes.untilNot503(() -> nodes.http(id).get(logPath(ws, LOG))).status(), id + " still has the deleted log");
        }
        // the name again: its entries only, rolled and read alike on every node
        for (int b = 0; b < 4; b++) {
            JsonNode ack = appendUntilAcked(ws, ColdLogs.producerBatch("p-again", b + 1, perBatch), b, Duration.ofSeconds(60));
            assertEquals((long) b * perBatch + 1, ack.path("firstSeq").asLong(), ack.toString());
        }
        awaitEveryNode(ws, "the new log rolled", Duration.ofSeconds(60), ids,
                (id, s) -> s.path("segments").asInt() == 0 ? "no cold segment yet" : null);
        for (String id : ids) {
            List<JsonNode> again = readAll(nodes.http(id), ws, id);
            assertEquals(4 * perBatch, again.size(), id);
            for (int k = 0; k < again.size(); k++) {
                assertEquals(k / perBatch + 1, again.get(k).path("data").path("b").asLong(), id + " seq " + (k + 1));
            }
        }
    }

    @Test
    @Order(2)
    void newLeaderShouldGoOnRollingAfterTheLeaderIsKilledMidTraffic() throws Exception {
        String ws = "cold-b";
        int perBatch = 50;
        List<String> ids = List.of("n1", "n2", "n3");
        // history: every batch acknowledged, and the manifest as a poller of the shared directory saw it
        Map<Long, JsonNode> acked = new ConcurrentHashMap<>();
        acked.put(1L, appendUntilAcked(ws, ColdLogs.producerBatch("p-b", 1, perBatch), 0, Duration.ofSeconds(60)));
        String leader = leaderOf(ws, "n1");
        assertNotNull(leader, "shard of " + ws + " has a leader");
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicReference<Manifest> seen = new AtomicReference<>(ColdLogs.storedManifest(shared, ws, LOG));
        AtomicLong generationsSeen = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong killedAt = new AtomicLong();
        AtomicLong firstAckAfterKill = new AtomicLong();
        Thread poller = Thread.ofPlatform().name("manifest-poller").start(() -> {
            while (!stop.get()) {
                Manifest now = ColdLogs.storedManifest(shared, ws, LOG);
                Manifest before = seen.get();
                if (now.generation() < before.generation() || now.lastSeq() < before.lastSeq() || now.term() < before.term()) {
                    violations.add("manifest went back: generation " + before.generation() + "→" + now.generation()
                            + ", lastSeq " + before.lastSeq() + "→" + now.lastSeq() + ", term " + before.term() + "→" + now.term());
                }
                if (now.generation() != before.generation()) {
                    generationsSeen.incrementAndGet();
                }
                seen.set(now);
                LockSupport.parkNanos(20_000_000);
            }
        });
        AtomicLong nextBatch = new AtomicLong(2);
        Thread producer = Thread.ofPlatform().name("producer").start(() -> {
            try {
                while (!stop.get()) {
                    long b = nextBatch.getAndIncrement();
                    // generous: on a 2-core box shared with other builds an election can take many timeouts
                    acked.put(b, appendUntilAcked(ws, ColdLogs.producerBatch("p-b", b, perBatch), (int) b, Duration.ofSeconds(150)));
                    if (killedAt.get() != 0) {
                        firstAckAfterKill.compareAndSet(0, System.nanoTime());
                    }
                    LockSupport.parkNanos(60_000_000); // about 800 entries a second, over one-second hot files
                }
            } catch (Throwable t) {
                violations.add("producer: " + t);
            }
        });
        try {
            await("rolls by the first leader", Duration.ofSeconds(120), () -> seen.get().lastSeq() >= 1_000 || !violations.isEmpty());
            Manifest beforeKill = seen.get();
            printNodes(ws, "before killing leader " + leader);
            nodes.kill(leader);
            killedAt.set(System.nanoTime());
            System.out.println("ClusterColdIT: killed " + leader + " (leader of " + ws + ") at cold lastSeq " + beforeKill.lastSeq()
                    + ", term " + beforeKill.term());
            await("a new leader rolling past the old one's manifest", Duration.ofSeconds(180), () ->
                    (seen.get().term() > beforeKill.term() && seen.get().lastSeq() >= beforeKill.lastSeq() + 1_000)
                            || !violations.isEmpty());
            nodes.start(leader); // back, rebuilt from its snapshot and the log
            await("the restarted node serving again", Duration.ofSeconds(120), () -> {
                try {
                    return nodes.http(leader).get(logPath(ws, LOG)).status() == 200;
                } catch (IllegalStateException notYet) {
                    return false;
                }
            });
            // A replica drops a hot cycle file only once the manifest covers all of it (SPEC §13), and
            // its cycle files are cut by its own clock as it applies: the restarted node rebuilt itself
            // by replaying the log, so the entries it replayed — cold ones and newer alike — share the
            // cycle files of the second or two the replay took. Those go once the leader has rolled past
            // their end, which takes more traffic: so the producer goes on until every replica,
            // the restarted one included, has dropped every entry that was cold when it came back.
            long coldAtRestart = seen.get().lastSeq();
            printNodes(ws, "the restarted " + leader + " serving again; cold 1.." + coldAtRestart + " at its restart");
            awaitEveryNode(ws, "every replica's hot files rolled before the restart dropped, under traffic", Duration.ofSeconds(120),
                    ids, (id, s) -> !violations.isEmpty() ? null
                            : s.path("hotStoredFirst").asLong() <= coldAtRestart ? "hotStoredFirst " + s.path("hotStoredFirst")
                                    + " <= " + coldAtRestart + " (hot files of entries cold before the restart not dropped)"
                            : null);
            stop.set(true);
            producer.join();
            awaitEveryNode(ws, "every replica caught up, with its rolled hot files still dropped", Duration.ofSeconds(120), ids,
                    (id, s) -> !violations.isEmpty() ? null
                            : s.path("head").asLong() != acked.size() * (long) perBatch ? "head " + s.path("head") + " != "
                            + acked.size() * (long) perBatch + " (not caught up)"
                            : s.path("hotStoredFirst").asLong() <= coldAtRestart ? "hotStoredFirst " + s.path("hotStoredFirst")
                                    + " <= " + coldAtRestart + " (dropped hot files back?)"
                            : null);
        } finally {
            stop.set(true);
            producer.join();
            poller.join();
        }
        assertTrue(violations.isEmpty(), String.join("\n", violations));
        long lastBatch = acked.keySet().stream().mapToLong(Long::longValue).max().orElseThrow();
        assertEquals(lastBatch, acked.size(), "batches 1.." + lastBatch + " each acknowledged");
        long total = lastBatch * perBatch;
        String newLeader = leaderOf(ws, nodes.up().getFirst());
        printNodes(ws, "after the failover, " + lastBatch + " batches acknowledged");

        // every acknowledged batch exactly once, at the seqs its ack named, identical on every node
        String first = null;
        for (String id : ids) {
            List<JsonNode> entries = readAll(nodes.http(id), ws, id);
            Map<String, Long> where = new HashMap<>();
            for (JsonNode e : entries) {
                String key = e.get("data").get("b").asLong() + "/" + e.get("data").get("i").asLong();
                Long dup = where.put(key, e.get("seq").asLong());
                assertEquals(null, dup, id + ": entry " + key + " stored twice, at seqs " + dup + " and " + e.get("seq"));
            }
            for (long b = 1; b <= lastBatch; b++) {
                for (int i = 0; i < perBatch; i++) {
                    assertNotNull(where.get(b + "/" + i), id + ": acknowledged entry " + b + "/" + i + " lost");
                }
                JsonNode ack = acked.get(b);
                assertEquals(where.get(b + "/0").longValue(), ack.get("firstSeq").asLong(), id + ": batch " + b + " " + ack);
            }
            assertEquals(total, entries.size(), id + ": nothing but the acknowledged batches");
            String all = entries.toString();
            if (first == null) {
                first = all;
            } else {
                assertEquals(first, all, "node " + id + " reads other entries than n1");
            }
        }
        Manifest end = ColdLogs.storedManifest(shared, ws, LOG);
        System.out.printf("ClusterColdIT history: %d batches × %d entries acknowledged (%d), 0 lost, 0 duplicated; manifest"
                        + " generations seen %d, final generation %d term %d cold 1..%d; new leader %s; first ack %d ms after the kill%n",
                lastBatch, perBatch, total, generationsSeen.get(), end.generation(), end.term(), end.lastSeq(), newLeader,
                (firstAckAfterKill.get() - killedAt.get()) / 1_000_000);
    }

    /**
     * A trim taken by a follower (SPEC §12 in a cluster): every node serves the same gap and entries
     * from the new first, and the shard's leader alone retires the cold segments wholly below it in
     * the shared manifest (term-fenced); the followers retire none.
     */
    @Test
    @Order(3)
    void aTrimShouldRetireColdSegmentsOnTheLeaderOnlyAndReadAlikeOnEveryNode() {
        String ws = "cold-c";
        List<String> ids = List.of("n1", "n2", "n3");
        int batches = 20;
        int perBatch = 100;
        for (int b = 0; b < batches; b++) {
            appendUntilAcked(ws, ColdLogs.producerBatch("p-c", b + 1, perBatch), b, Duration.ofSeconds(60));
            LockSupport.parkNanos(120_000_000); // spreads the entries over several one-second hot files
        }
        long total = (long) batches * perBatch;
        awaitEveryNode(ws, "cold segments rolled", Duration.ofSeconds(120), ids,
                (id, s) -> s.path("segments").asInt() < 2 ? "fewer than 2 cold segments" : null);
        long coldBefore = ColdLogs.storedManifest(shared, ws, LOG).segments().size();
        String leader = leaderOf(ws, "n1");
        assertNotNull(leader);
        String follower = ids.stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
        Map<String, Long> retiredBefore = new HashMap<>();
        for (String id : ids) {
            retiredBefore.put(id, retiredSegments(id));
        }
        long first = total - 99;
        Http.Reply trim = nodes.http(follower).post(logPath(ws, LOG) + "/trim", "{\"before\":" + first + "}");
        assertEquals(200, trim.status(), trim.body());
        assertEquals(first, trim.json().path("first").asLong(), trim.body());

        await("the leader retired every cold segment below first", Duration.ofSeconds(60),
                () -> ColdLogs.storedManifest(shared, ws, LOG).segments().stream().allMatch(seg -> seg.lastSeq() >= first));
        Manifest m = ColdLogs.storedManifest(shared, ws, LOG);
        assertTrue(m.term() >= 1, "a leader's term commits the trim's manifest: " + m.term());
        assertTrue(m.segments().size() < coldBefore, "segments retired: " + coldBefore + " → " + m.segments().size());
        String read = null;
        List<String> retiredBy = new ArrayList<>();
        for (String id : ids) {
            Http.Reply page = nodes.http(id).get(logPath(ws, LOG) + "/entries?from=1&limit=400");
            assertEquals(200, page.status(), id + ": " + page.body());
            JsonNode p = page.json();
            assertEquals(first - 1, p.path("gap").path("to").asLong(), id + ": " + page.body());
            assertEquals(100, p.path("entries").size(), id + ": " + page.body());
            assertEquals(first, p.path("entries").get(0).path("seq").asLong(), id + ": " + page.body());
            if (read == null) {
                read = p.path("entries").toString();
            } else {
                assertEquals(read, p.path("entries").toString(), id + " reads other entries than the first node");
            }
            if (retiredSegments(id) > retiredBefore.get(id)) {
                retiredBy.add(id);
            }
        }
        // the leader retires (a leader moved since then would show as the one now named)
        assertEquals(1, retiredBy.size(), "exactly one node retires the segments, its shard's leader: " + retiredBy);
        assertTrue(retiredBy.contains(leader) || retiredBy.contains(leaderOf(ws, "n1")), retiredBy + " did not lead " + ws);
    }

    /** The node's {@code strand_retention_cold_segments_retired} counter. */
    private long retiredSegments(String id) {
        Http.Reply r = nodes.http(id).get("/observe/metrics");
        assertEquals(200, r.status());
        return r.body().lines().filter(l -> l.startsWith("strand_retention_cold_segments_retired"))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }
}

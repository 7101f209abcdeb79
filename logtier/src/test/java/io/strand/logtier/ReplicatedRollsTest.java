package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.FileColdStore;
import io.strand.coldtier.Manifest;
import io.strand.core.Durability;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two replicas of one shard, each with its own hot files, sharing one cold store (SPEC §13): the
 * "Raft log" here is this test applying every append and every proposed step 6 to both replicas in
 * the same order. Only the replica whose writer term says it leads rolls; step 6 reaches both.
 */
@Timeout(120)
class ReplicatedRollsTest {
    @TempDir
    Path dir;
    Replica a;
    Replica b;
    /** Whether proposals of step 6 are committed (false: the proposer "dies" after its manifest commit). */
    final AtomicBoolean proposalsCommit = new AtomicBoolean(true);
    final List<String> proposed = new CopyOnWriteArrayList<>();

    /** One replica: its own data dir and writers, the shared cold directory, its own view of its term. */
    record Replica(String id, Writers writers, LogStore store, AtomicLong term) implements AutoCloseable {
        @Override
        public void close() {
            store.close();
            writers.close();
            store.coldTier().store().close();
        }
    }

    private Replica replica(String id) {
        LogConfig config = LogConfig.defaults(dir.resolve(id), Durability.OS)
                .withRollCycle(TestRollCycles.TEST_SECONDLY)
                .withHot(new LogConfig.HotThreshold(1_000_000, 1L << 40, Duration.ofDays(1)));
        Writers writers = new Writers(id, 1, Durability.OS, 1024, null, n -> { });
        LogStore store = new LogStore(config, writers);
        AtomicLong term = new AtomicLong(-1);
        ColdTier tier = new ColdTier(new FileColdStore(dir.resolve("shared-cold")), new BlockCache(8 << 20),
                ColdLogConfig.defaults(dir.resolve(id + "-tmp")), term::get);
        store.enableColdTier(tier, new ReplicatedRolls() {
            @Override
            public CompletableFuture<?> proposeCovered(String ws, String log, long coldLast) {
                return commitStepSix(id, ws, log, coldLast);
            }

            @Override
            public CompletableFuture<?> proposeColdDeleted(String ws, String log, long generation) {
                return commitColdDeleted(id, ws, log, generation);
            }
        });
        return new Replica(id, writers, store, term);
    }

    /** The shard's log applying a step 6 proposed by replica {@code by} on every replica, in order. */
    private synchronized CompletableFuture<?> commitStepSix(String by, String ws, String log, long coldLast) {
        if (!proposalsCommit.get()) {
            return CompletableFuture.failedFuture(new StrandException(ErrorCode.UNAVAILABLE, "no quorum"));
        }
        proposed.add(by + ":" + ws + "/" + log + "@" + coldLast);
        return CompletableFuture.allOf(a.store().dropCovered(ws, log, coldLast), b.store().dropCovered(ws, log, coldLast));
    }

    /** The shard's log applying "the deleted log's manifest is empty at {@code generation}" on every replica, in order. */
    private synchronized CompletableFuture<?> commitColdDeleted(String by, String ws, String log, long generation) {
        proposed.add(by + ":deleted " + ws + "/" + log + "@" + generation);
        return CompletableFuture.allOf(a.store().coldDeleted(ws, log, generation), b.store().coldDeleted(ws, log, generation));
    }

    @BeforeEach
    void start() {
        a = replica("a");
        b = replica("b");
    }

    @AfterEach
    void stop() {
        a.close();
        b.close();
    }

    /**
     * Appends {@code from..to} on both replicas with one leader stamp per batch, spread over cycle
     * files: the last batch always goes into a later one-second cycle than the first (the batches'
     * pacing alone left all of them in one cycle about one run in four, and then no file was wholly
     * covered by the manifest, so none could be dropped; CI saw it).
     */
    private void appendOnBoth(long from, long to) {
        long firstSecond = Long.MAX_VALUE; // read after the first batch went in: its cycle is that second or an earlier one
        for (long s = from; s <= to; s += 250) {
            int n = (int) Math.min(250, to - s + 1);
            if (s + 250 > to && s > from) {
                while (System.currentTimeMillis() / 1000 <= firstSecond) {
                    LockSupport.parkNanos(10_000_000); // until the wall clock (the queues' cycle clock) enters the next second
                }
            }
            AppendRequest req = ColdNode.batch(s, n).withStampedAt(System.currentTimeMillis());
            assertEquals(s, a.store().append("w", "c", req).join().firstSeq());
            assertEquals(s, b.store().append("w", "c", req).join().firstSeq());
            firstSecond = Math.min(firstSecond, System.currentTimeMillis() / 1000);
            LockSupport.parkNanos(150_000_000); // spreads the entries over several one-second hot files
        }
    }

    private static List<Entry> readAll(LogStore store) {
        List<Entry> out = new ArrayList<>();
        long next = 1;
        while (true) {
            Page p = store.readForward("w", "c", next, 700);
            if (p.entries().isEmpty()) {
                return out;
            }
            out.addAll(p.entries());
            next = p.next();
        }
    }

    private static void assertIdentical(List<Entry> expected, List<Entry> actual, long count) {
        assertEquals(count, expected.size());
        assertEquals(count, actual.size());
        for (int i = 0; i < count; i++) {
            Entry e = expected.get(i);
            Entry g = actual.get(i);
            assertEquals(i + 1, g.seq());
            assertEquals(e.ts(), g.ts(), "ts of " + g.seq());
            assertEquals(e.dataText(), g.dataText(), "data of " + g.seq());
            assertEquals("{\"n\":" + (i + 1) + "}", g.dataText());
        }
    }

    @Test
    void rollShouldRunOnlyOnTheLeaderAndDropHotFilesOnEveryReplica() {
        appendOnBoth(1, 2_000);
        StrandException refused = assertThrows(StrandException.class, () -> a.store().rollNow("w", "c"));
        assertEquals(ErrorCode.UNAVAILABLE, refused.code(), refused.getMessage());
        assertEquals(0, a.store().coldTier().log("w", "c").refresh().generation(), "a follower wrote no manifest");

        a.term().set(1); // a is elected
        assertEquals(2_000, a.store().rollNow("w", "c"));
        assertTrue(proposed.contains("a:w/c@2000"), proposed.toString());
        for (Replica r : List.of(a, b)) {
            assertTrue(r.store().hotStoredFirst("w", "c") > 1, r.id() + " dropped its rolled hot files");
        }
        assertIdentical(readAll(a.store()), readAll(b.store()), 2_000);

        // a loses its shard to b (term 2); b re-reads the manifest and continues the cold part
        a.term().set(-1);
        b.term().set(2);
        appendOnBoth(2_001, 3_000);
        assertEquals(1_000, b.store().rollNow("w", "c"));
        assertEquals(3_000, b.store().coldTier().log("w", "c").refresh().lastSeq());
        assertTrue(proposed.contains("b:w/c@3000"), proposed.toString());
        assertEquals(2, b.store().coldTier().log("w", "c").manifest().term());
        assertIdentical(readAll(a.store()), readAll(b.store()), 3_000);

        // a, partitioned, still believes it leads in term 1: its roll is fenced and changes nothing
        a.term().set(1);
        appendOnBoth(3_001, 3_500);
        StrandException fenced = assertThrows(StrandException.class, () -> a.store().rollNow("w", "c"));
        assertEquals(ErrorCode.VERSION_CONFLICT, fenced.code(), fenced.getMessage());
        assertEquals(3_000, a.store().coldTier().log("w", "c").refresh().lastSeq(), "the manifest never went back");
        for (String p : proposed) {
            assertTrue(Long.parseLong(p.substring(p.indexOf('@') + 1)) <= 3_000, "a step 6 beyond the manifest: " + proposed);
        }
        assertIdentical(readAll(a.store()), readAll(b.store()), 3_500);
    }

    @Test
    void newLeaderShouldProposeTheStepSixItsPredecessorCommittedButNeverProposed() {
        appendOnBoth(1, 1_500);
        a.term().set(1);
        proposalsCommit.set(false); // a commits its manifest, then dies before its step 6 commits
        assertThrows(StrandException.class, () -> a.store().rollNow("w", "c"));
        assertEquals(1_500, b.store().coldTier().log("w", "c").refresh().lastSeq());
        assertEquals(1, b.store().hotStoredFirst("w", "c"), "b still holds every hot file");

        a.term().set(-1);
        proposalsCommit.set(true);
        b.term().set(2);
        assertEquals(0, b.store().rollNow("w", "c"), "nothing is rolled twice");
        assertEquals(0, b.store().rollNow("w", "c"));
        assertEquals(List.of("b:w/c@1500"), proposed.stream().filter(p -> p.startsWith("b:")).toList(),
                "the new leader handed on its predecessor's step 6, once in its term");
        assertTrue(b.store().hotStoredFirst("w", "c") > 1, () -> "b dropped the files the manifest covers; its files: " + cycleFiles("b"));
        assertTrue(a.store().hotStoredFirst("w", "c") > 1, () -> "so did a; its files: " + cycleFiles("a"));
        assertIdentical(readAll(a.store()), readAll(b.store()), 1_500);
    }

    /**
     * A deleted log's cold part (SPEC §13, shared store): replicas apply the delete with no store I/O;
     * a step 6 of the deleted log that is applied after a log of the same name was created drops
     * none of the new log's files; the leader empties the manifest (term-fenced, a tombstone
     * generation) and deletes the segments before any roll of the new log, which then reads only
     * its own entries on every replica.
     */
    @Test
    void aDeletedLogsColdPartShouldBeEmptiedByTheLeaderBeforeALogOfTheSameNameRolls() throws Exception {
        appendOnBoth(1, 2_000);
        a.term().set(1);
        assertEquals(2_000, a.store().rollNow("w", "c"));
        a.term().set(-1); // no leader for a while: the cleanup waits

        for (Replica r : List.of(a, b)) {
            assertTrue(r.store().delete("w", "c"));
        }
        assertEquals(2_000, a.store().coldTier().log("w", "c").refresh().lastSeq(), "no replica touched the shared store");
        // the same name again, with other data
        for (long s = 1; s <= 600; s += 200) {
            List<byte[]> data = new ArrayList<>();
            List<String> keys = new ArrayList<>();
            for (long i = s; i < s + 200; i++) {
                data.add(("{\"again\":" + i + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
                keys.add(null);
            }
            AppendRequest req = new AppendRequest(data, keys, null, null, null).withStampedAt(System.currentTimeMillis());
            assertEquals(s, a.store().append("w", "c", req).join().firstSeq());
            assertEquals(s, b.store().append("w", "c", req).join().firstSeq());
        }
        // a step 6 of the deleted log, committed late: it must not drop the new log's files
        for (Replica r : List.of(a, b)) {
            assertEquals(0, r.store().dropCovered("w", "c", 2_000).join(), r.id());
            assertEquals(1, r.store().hotStoredFirst("w", "c"), r.id() + " keeps the new log's hot files");
        }
        assertFalse(a.store().whenColdDeleted("w", "c").isDone(), "pending until a leader empties the manifest");

        a.term().set(2); // a leads again: its roller empties the manifest before anything else
        for (Replica r : List.of(a, b)) {
            r.store().whenColdDeleted("w", "c").get(30, TimeUnit.SECONDS);
        }
        Manifest emptied = b.store().coldTier().log("w", "c").refresh();
        assertTrue(emptied.segments().isEmpty() && emptied.generation() > 1 && emptied.term() == 2, emptied.toString());
        try (var objects = java.nio.file.Files.walk(dir.resolve("shared-cold").resolve("w").resolve("c"))) {
            assertEquals(List.of("manifest.json"), objects.filter(java.nio.file.Files::isRegularFile)
                    .map(f -> f.getFileName().toString()).toList(), "every segment of the deleted log is gone");
        }
        // b, deposed in term 1 but unaware, cannot roll over the tombstone
        b.term().set(1);
        StrandException fenced = assertThrows(StrandException.class, () -> b.store().rollNow("w", "c"));
        assertEquals(ErrorCode.VERSION_CONFLICT, fenced.code(), fenced.getMessage());
        b.term().set(-1);
        assertEquals(600, a.store().rollNow("w", "c"));
        for (Replica r : List.of(a, b)) {
            List<Entry> entries = readAll(r.store());
            assertEquals(600, entries.size(), r.id());
            for (int i = 0; i < entries.size(); i++) {
                assertEquals("{\"again\":" + (i + 1) + "}", entries.get(i).dataText(), r.id() + " seq " + (i + 1));
            }
        }
        assertEquals(600, b.store().coldTier().log("w", "c").refresh().lastSeq());
    }

    /** Replica {@code id}'s hot cycle files of w/c (named by the second each started), for failure messages. */
    private String cycleFiles(String id) {
        try (var files = java.nio.file.Files.walk(dir.resolve(id))) {
            return files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".cq4")).sorted().toList().toString();
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }
}

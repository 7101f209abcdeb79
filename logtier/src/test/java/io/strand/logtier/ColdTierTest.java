package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.Entry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class ColdTierTest {
    @TempDir
    Path dir;

    private ColdNode start() {
        return start(1_000);
    }

    private ColdNode start(long hotEntries) {
        return ColdNode.start(dir, hotEntries);
    }

    private static List<Long> readAll(LogStore store, long head) {
        List<Long> seqs = new ArrayList<>();
        long next = 1;
        while (next <= head) {
            Page p = store.readForward("w", "c", next, 1000);
            for (Entry e : p.entries()) {
                seqs.add(e.seq());
                assertEquals("{\"n\":" + e.seq() + "}", e.dataText());
            }
            next = p.next();
        }
        return seqs;
    }

    /** Cold entries are counted into a chunk as hot ones are: it ends at the entry that reaches maxBytes, and takes its first always. */
    @Test
    void coldChunkShouldEndAtTheEntryThatReachesMaxBytesAsAHotOneDoes() throws Exception {
        try (ColdNode node = start(1_000_000)) {
            LogStore store = node.store();
            store.append("w", "c", ColdNode.batch(1, 6)).join();
            long deadline = System.nanoTime() + 30_000_000_000L;
            long next = 7;
            while (store.hotStoredFirst("w", "c") <= 6) { // until seqs 1..6 are in the cold tier only
                assertTrue(System.nanoTime() < deadline, "the first one-second cycle file was dropped");
                store.append("w", "c", ColdNode.batch(next++, 1)).join();
                store.rollNow("w", "c");
                java.util.concurrent.locks.LockSupport.parkNanos(50_000_000); // poll for the next cycle file with a deadline
            }
            int weight = Entry.weight("{\"n\":1}".length(), null); // seqs 1..6 weigh the same
            long[] budgets = {1, weight, weight + 1, 2L * weight, 2L * weight + 1};
            int[] counts = {1, 1, 2, 2, 3};
            for (int i = 0; i < budgets.length; i++) {
                List<Long> got = new ArrayList<>();
                store.readChunk("w", "c", 1, 100, budgets[i], (seq, ts, key, data, offset, length) -> got.add(seq));
                assertEquals(counts[i], got.size(), "a chunk of " + budgets[i] + " bytes");
                assertEquals(1, got.getFirst());
            }
        }
    }

    /**
     * A log's first batch queues no roll check when it stays under the threshold (nothing of a new log
     * is cold or old), and does when it passes it. Checks run in the order they were queued, so once
     * the second log has rolled, a check of the first would have run before it.
     */
    @Test
    void aNewLogsFirstBatchShouldQueueARollCheckOnlyPastTheThreshold() throws Exception {
        try (ColdNode node = start(10)) {
            LogStore store = node.store();
            Roller roller = store.roller();
            store.append("w", "small", ColdNode.batch(1, 3)).join();
            store.append("w", "small", ColdNode.batch(4, 3)).join(); // a later append under the threshold: none either
            store.append("w", "big", ColdNode.batch(1, 11)).join();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (roller.rolledEntries.get() == 0) {
                assertTrue(System.nanoTime() < deadline, "the first batch past the threshold was not rolled");
                Thread.onSpinWait();
            }
            assertEquals(1, roller.checks.get(), "roll checks run");
            assertEquals(6, roller.rolledEntries.get(), "rolled down to half the threshold");
        }
    }

    @Test
    void readsShouldCrossHotColdBoundaryExactlyWhenOldEntriesRolled() throws Exception {
        int total = 20_000;
        try (ColdNode node = start()) {
            for (int i = 0; i < total / 100; i++) {
                node.store().append("w", "c", ColdNode.batch(i * 100 + 1, 100)).join();
            }
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (node.store().info("w", "c").orElseThrow().hotFirst() < total - 1_000 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll without burning a core
            }
            LogInfo info = node.store().info("w", "c").orElseThrow();
            assertTrue(info.coldSegments() > 0, "rolled: " + info);
            assertEquals(1, info.first());
            List<Long> seqs = readAll(node.store(), total);
            assertEquals(total, seqs.size());
            for (int i = 0; i < total; i++) {
                assertEquals(i + 1, seqs.get(i));
            }
            Page back = node.store().readBackward("w", "c", 5, 10);
            assertEquals(List.of(1L, 2L, 3L, 4L), back.entries().stream().map(Entry::seq).toList());
            long ts = node.store().readForward("w", "c", 100, 1).entries().getFirst().ts();
            assertTrue(node.store().readFromTime("w", "c", ts, 1).entries().getFirst().seq() <= 100);
        }
        try (ColdNode node = start()) {
            assertEquals(total, readAll(node.store(), total).size());
            assertEquals(total + 1, node.store().append("w", "c", ColdNode.batch(total + 1, 1)).join().firstSeq());
            assertTrue(node.store().delete("w", "c"));
            assertEquals(0, node.store().readForward("w", "c", 1, 10).head());
        }
    }

    /**
     * Forbidden outcome: a page or subscription chunk whose first entry is not the seq asked for while
     * it carries no {@code gap}. One-second hot files, rolls dropping them every second, compaction
     * merging and deleting cold segments (no grace), readers asking for the seq where the hot part
     * starts (the boundary a roll moves) and a subscriber following each log from seq 1.
     */
    @Test
    void readsShouldNeverStartAfterTheRequestedSeqWithoutAGapWhileRollsAndCompactionRun() throws Exception {
        long seed = System.nanoTime();
        System.out.println("readsShouldNeverStartAfterTheRequestedSeqWithoutAGap… seed " + seed);
        List<String> logs = List.of("s0", "s1", "s2");
        long appendNanos = 8_000_000_000L;
        java.util.concurrent.ConcurrentLinkedQueue<String> violations = new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.concurrent.atomic.AtomicLong boundaryReads = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong firstMoves = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean appending = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        long[] heads = new long[logs.size()];
        try (ColdNode node = start(200)) {
            List<Thread> threads = new ArrayList<>();
            threads.add(Thread.ofPlatform().name("appender").start(() -> {
                long end = System.nanoTime() + appendNanos;
                try {
                    while (System.nanoTime() < end) {
                        for (int l = 0; l < logs.size(); l++) {
                            node.store().append("w", logs.get(l), ColdNode.batch((int) heads[l] + 1, 5)).join();
                            heads[l] += 5;
                        }
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // pace: a few thousand entries a second
                    }
                } catch (Throwable t) {
                    violations.add("appender: " + t);
                } finally {
                    appending.set(false);
                }
            }));
            for (int r = 0; r < 2; r++) {
                java.util.Random random = new java.util.Random(seed + r);
                threads.add(Thread.ofPlatform().name("boundary-reader-" + r).start(() -> {
                    long[] lastFirst = new long[logs.size()];
                    try {
                        while (!done.get()) {
                            int l = random.nextInt(logs.size());
                            long first = node.store().hotStoredFirst("w", logs.get(l));
                            if (first != lastFirst[l]) {
                                firstMoves.incrementAndGet();
                                lastFirst[l] = first;
                            }
                            long from = Math.max(1, first + random.nextInt(3) - 1);
                            checkChunk(node.store(), logs.get(l), from, 1 + random.nextInt(20), violations);
                            boundaryReads.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        violations.add(Thread.currentThread().getName() + ": " + t);
                    }
                }));
            }
            long[] followed = new long[logs.size()];
            threads.add(Thread.ofPlatform().name("subscriber").start(() -> {
                long[] next = {1, 1, 1};
                try {
                    boolean caughtUp = false;
                    while (!caughtUp) {
                        boolean wasAppending = appending.get();
                        caughtUp = !wasAppending;
                        for (int l = 0; l < logs.size(); l++) {
                            PageInfo p = checkChunk(node.store(), logs.get(l), next[l], 100, violations);
                            if (p.gap() != null) {
                                violations.add("subscriber got a gap in " + logs.get(l) + " though nothing is trimmed: " + p.gap());
                            }
                            next[l] = p.next();
                            caughtUp &= next[l] > p.head();
                        }
                        if (wasAppending) {
                            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000); // tail, not spin
                        }
                    }
                } catch (Throwable t) {
                    violations.add("subscriber: " + t);
                } finally {
                    for (int l = 0; l < logs.size(); l++) {
                        followed[l] = next[l] - 1;
                    }
                }
            }));
            threads.add(ColdNode.compactor(node.store(), logs, done, violations));
            threads.get(0).join();
            threads.get(3).join(); // the subscriber, once it has followed every log to its final head
            done.set(true);
            for (Thread t : threads) {
                t.join();
            }
            System.out.println("boundary reads " + boundaryReads + ", hot starts seen to move " + firstMoves
                    + ", heads " + java.util.Arrays.toString(heads) + ", cold segments "
                    + logs.stream().map(l -> node.store().info("w", l).orElseThrow().coldSegments()).toList());
            assertEquals(List.of(), List.copyOf(violations));
            assertTrue(firstMoves.get() > logs.size() * 3L, "rolls dropped hot files while readers read: " + firstMoves);
            for (int l = 0; l < logs.size(); l++) {
                assertEquals(heads[l], followed[l], "the subscriber followed " + logs.get(l) + " to its head");
            }
        }
    }

    /** Reads one chunk from {@code from} and records any forbidden outcome: a silent skip, a hole, a wrong entry. */
    private static PageInfo checkChunk(LogStore store, String log, long from, int max, java.util.Collection<String> violations) {
        List<Long> seqs = new ArrayList<>();
        List<String> data = new ArrayList<>();
        PageInfo p = store.readChunk("w", log, from, max, 1L << 20, (seq, ts, key, bytes, offset, length) -> {
            seqs.add(seq);
            data.add(new String(bytes, offset, length, StandardCharsets.UTF_8));
        });
        long expect = p.gap() == null ? from : p.gap().to() + 1;
        for (int i = 0; i < seqs.size(); i++) {
            if (seqs.get(i) != expect + i || !data.get(i).equals("{\"n\":" + seqs.get(i) + "}")) {
                violations.add(log + ": asked for " + from + (p.gap() == null ? " (no gap)" : " (gap " + p.gap() + ")")
                        + ", entry " + i + " is seq " + seqs.get(i) + " " + data.get(i));
                break;
            }
        }
        if (p.next() != expect + seqs.size()) {
            violations.add(log + ": asked for " + from + ", got " + seqs.size() + " entries, next " + p.next());
        }
        return p;
    }
}

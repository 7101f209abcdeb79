package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trims racing everything that moves a log's storage: one-second hot files, rolls dropping them,
 * compaction merging segments, the retention worker retiring segments and deleting hot files (no
 * grace period), boundary readers and a subscriber replaying each log from seq 1. History check:
 * every chunk starts at the seq asked for or says {@code gap} from exactly there; every delivered
 * seq is at or above the {@code first} acknowledged before the read began; the subscriber's
 * entries and gaps cover each log to its head; afterwards every seq from {@code first} to the head
 * reads back. About 15 s (appends run 8 s, longer on a loaded machine until 10 trims ran and the
 * worker gave space back, at most 23 s).
 */
@Timeout(120)
class RetentionStressTest {
    @TempDir
    Path dir;

    @Test
    void trimsShouldNeverLoseARetainedEntryNorServeATrimmedOneWhileRollsCompactionAndReadersRun() throws Exception {
        long seed = System.nanoTime();
        System.out.println("trimsShouldNeverLoseARetainedEntry… seed " + seed);
        List<String> logs = List.of("s0", "s1", "s2");
        long appendNanos = 8_000_000_000L;
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicBoolean appending = new AtomicBoolean(true);
        AtomicBoolean done = new AtomicBoolean();
        AtomicLongArray heads = new AtomicLongArray(logs.size());
        AtomicLongArray acked = new AtomicLongArray(logs.size()); // first as acknowledged by trims
        AtomicLong trims = new AtomicLong();
        AtomicLong gapsSeen = new AtomicLong();
        ColdNode node = ColdNode.start(dir, 1_000);
        LogStore store = node.store();
        Retention retention = new Retention(store, RetentionPolicy.UNLIMITED, Duration.ofMillis(100), Duration.ZERO);
        try {
            for (int l = 0; l < logs.size(); l++) {
                acked.set(l, 1);
            }
            List<Thread> threads = new ArrayList<>();
            threads.add(Thread.ofPlatform().name("appender").start(() -> {
                long end = System.nanoTime() + appendNanos;
                long latest = end + 15_000_000_000L;
                try {
                    // at least 8 s, and on a loaded machine until 10 trims ran and the worker gave space back (≤ 23 s)
                    while (System.nanoTime() < end || System.nanoTime() < latest
                            && (retention.coldSegmentsRetired.get() + retention.hotFilesDeleted.get() == 0 || trims.get() < 10)) {
                        for (int l = 0; l < logs.size(); l++) {
                            store.append("w", logs.get(l), ColdNode.batch(heads.get(l) + 1, 5)).join();
                            heads.addAndGet(l, 5);
                        }
                        LockSupport.parkNanos(1_000_000); // pace: a few thousand entries a second
                    }
                } catch (Throwable t) {
                    violations.add("appender: " + t);
                } finally {
                    appending.set(false);
                }
            }));
            Random trimRandom = new Random(seed);
            threads.add(Thread.ofPlatform().name("trimmer").start(() -> {
                try {
                    while (appending.get()) {
                        int l = trimRandom.nextInt(logs.size());
                        long head = heads.get(l);
                        if (head < 400) {
                            LockSupport.parkNanos(10_000_000); // let the log grow first
                            continue;
                        }
                        long before = Math.max(1, head - 20 - trimRandom.nextInt(4_000));
                        Retention.Trimmed t = retention.trim("w", logs.get(l), before);
                        if (t.first() < before || t.first() < acked.get(l)) {
                            violations.add("trim of " + logs.get(l) + " to " + before + " answered " + t + " after first " + acked.get(l));
                        }
                        acked.accumulateAndGet(l, t.first(), Math::max);
                        trims.incrementAndGet();
                        LockSupport.parkNanos(150_000_000); // a trim every 0.15 s
                    }
                } catch (Throwable t) {
                    violations.add("trimmer: " + t);
                }
            }));
            for (int r = 0; r < 2; r++) {
                Random random = new Random(seed + 1 + r);
                threads.add(Thread.ofPlatform().name("boundary-reader-" + r).start(() -> {
                    try {
                        while (!done.get()) {
                            int l = random.nextInt(logs.size());
                            long hotFirst = store.hotStoredFirst("w", logs.get(l));
                            long from = Math.max(1, (random.nextBoolean() ? hotFirst : acked.get(l)) + random.nextInt(3) - 1);
                            checkChunk(store, logs, l, from, 1 + random.nextInt(20), acked, violations);
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
                            PageInfo p = checkChunk(store, logs, l, next[l], wasAppending ? 5 : 1000, acked, violations);
                            if (p.gap() != null) {
                                gapsSeen.incrementAndGet();
                            }
                            next[l] = p.next();
                            caughtUp &= next[l] > p.head();
                        }
                        if (wasAppending) {
                            LockSupport.parkNanos(3_000_000); // replay slower than the appends, so trims overtake it
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
            threads.add(ColdNode.compactor(store, logs, done, violations));
            threads.add(Thread.ofPlatform().name("roll-now").start(() -> {
                int round = 0;
                try {
                    while (!done.get()) {
                        // besides the threshold rolls: a loaded machine appends too slowly to reach them often
                        store.rollNow("w", logs.get(round++ % logs.size()));
                        LockSupport.parkNanos(700_000_000); // each log rolled whole every ~2 s
                    }
                } catch (Throwable t) {
                    violations.add("roll-now: " + t);
                }
            }));
            threads.get(0).join();
            threads.get(1).join();
            threads.get(4).join(); // the subscriber, once it has followed every log to its final head
            done.set(true);
            for (Thread t : threads) {
                t.join();
            }
            long hotDeleted = retention.hotFilesDeleted.get();
            long coldRetired = retention.coldSegmentsRetired.get();
            System.out.println("trims " + trims + ", gaps seen by the subscriber " + gapsSeen + ", hot files deleted " + hotDeleted
                    + ", cold segments retired " + coldRetired + ", heads " + heads + ", firsts " + acked
                    + ", retention failures " + retention.failures + " " + retention.lastError);
            assertEquals(List.of(), List.copyOf(violations));
            assertTrue(trims.get() > 0, "trims ran: " + trims);
            assertTrue(hotDeleted + coldRetired > 0, "the worker gave hot files or cold segments back");
            assertTrue(logs.stream().anyMatch(l -> store.coldTier().log("w", l).firstSeq() > 1),
                    "cold segments below first were retired (by the worker or a roll continuing at first)");
            for (int l = 0; l < logs.size(); l++) {
                assertEquals(heads.get(l), followed[l], "the subscriber followed " + logs.get(l) + " to its head");
                String log = logs.get(l);
                LogInfo info = store.info("w", log).orElseThrow();
                assertEquals(acked.get(l), info.first(), "first is the last acknowledged trim of " + log);
                long next = info.first();
                while (next <= info.head()) { // nothing retained is missing
                    PageInfo p = checkChunk(store, logs, l, next, 1000, acked, violations);
                    assertEquals(null, p.gap(), "reading " + log + " from its first");
                    assertTrue(p.next() > next, "reading " + log + " from " + next);
                    next = p.next();
                }
                assertEquals(List.of(), List.copyOf(violations));
            }
        } finally {
            retention.close();
            node.close();
        }
    }

    /**
     * Reads one chunk from {@code from} and records any forbidden outcome: a start after {@code from}
     * without a gap from exactly there, a hole, a wrong entry, or a seq below the first acknowledged
     * before the read began.
     */
    private static PageInfo checkChunk(LogStore store, List<String> logs, int l, long from, int max, AtomicLongArray acked,
            Collection<String> violations) {
        String log = logs.get(l);
        long firstBefore = acked.get(l);
        List<Long> seqs = new ArrayList<>();
        List<String> data = new ArrayList<>();
        PageInfo p = store.readChunk("w", log, from, max, 1L << 20, (seq, ts, key, bytes, offset, length) -> {
            seqs.add(seq);
            data.add(new String(bytes, offset, length, StandardCharsets.UTF_8));
        });
        if (p.gap() != null && (p.gap().from() != from || p.gap().to() + 1 != p.first())) {
            violations.add(log + ": asked for " + from + ", gap " + p.gap() + " with first " + p.first());
        }
        long expect = p.gap() == null ? from : p.gap().to() + 1;
        for (int i = 0; i < seqs.size(); i++) {
            if (seqs.get(i) != expect + i || !data.get(i).equals("{\"n\":" + seqs.get(i) + "}")) {
                violations.add(log + ": asked for " + from + (p.gap() == null ? " (no gap)" : " (gap " + p.gap() + ")")
                        + ", entry " + i + " is seq " + seqs.get(i) + " " + data.get(i));
                break;
            }
            if (seqs.get(i) < firstBefore) {
                violations.add(log + ": served trimmed seq " + seqs.get(i) + ", first was " + firstBefore + " before the read");
                break;
            }
        }
        if (p.next() != expect + seqs.size()) {
            violations.add(log + ": asked for " + from + ", got " + seqs.size() + " entries, next " + p.next());
        }
        return p;
    }
}

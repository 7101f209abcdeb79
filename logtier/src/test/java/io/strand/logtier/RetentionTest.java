package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.FileColdStore;
import io.strand.core.Durability;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class RetentionTest {
    @TempDir
    Path dir;

    private static AppendRequest batch(long from, int n) {
        return batch(from, n, null, null);
    }

    private static AppendRequest batch(long from, int n, String producer, Long producerSeq) {
        List<byte[]> data = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            data.add(("{\"n\":" + (from + i) + "}").getBytes(StandardCharsets.UTF_8));
            keys.add(null);
        }
        return new AppendRequest(data, keys, null, producer, producerSeq);
    }

    private record Node(Writers writers, LogStore store, Retention retention) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            retention.close();
            store.close();
            writers.close();
            if (store.coldTier() != null) {
                store.coldTier().close();
            }
        }
    }

    private Node start(boolean cold, long hotEntries, RetentionPolicy defaults) {
        LogConfig config = LogConfig.defaults(dir.resolve("data"), Durability.OS)
                .withRollCycle(TestRollCycles.TEST_SECONDLY)
                .withHot(new LogConfig.HotThreshold(hotEntries, 1L << 40, Duration.ofDays(1)));
        Writers writers = new Writers("t", 2, Durability.OS, 1024, null, n -> { });
        LogStore store = new LogStore(config, writers);
        if (cold) {
            store.enableColdTier(new ColdTier(new FileColdStore(dir.resolve("cold")), new BlockCache(8 << 20),
                    ColdLogConfig.defaults(dir.resolve("tmp"))));
        }
        return new Node(writers, store, new Retention(store, defaults, Duration.ofMillis(200), Duration.ZERO));
    }

    private static void await(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            LockSupport.parkNanos(10_000_000); // poll with a deadline
        }
    }

    /** Appends {@code n} entries one batch of 10 at a time across at least {@code seconds} one-second cycle files. */
    private static long fill(Node node, String log, long head, int n, int seconds) {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        int batches = n / 10;
        for (int b = 0; b < batches; b++) {
            node.store.append("w", log, batch(head + 1, 10)).join();
            head += 10;
            long due = System.nanoTime() + (end - System.nanoTime()) / Math.max(1, batches - b);
            LockSupport.parkNanos(Math.max(0, due - System.nanoTime())); // spread over several cycle files
        }
        return head;
    }

    @Test
    void trimShouldHideEntriesBelowItDurablyAndReadsShouldSayGap() throws Exception {
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            node.store.append("w", "t", batch(1, 100)).join();
            assertEquals(new Retention.Trimmed(40, 100), node.retention.trim("w", "t", 40));
            Page p = node.store.readForward("w", "t", 1, 10);
            assertEquals(new Page.Gap(1, 39), p.gap());
            assertEquals(40, p.entries().getFirst().seq());
            assertEquals(40, p.first());
            assertEquals(List.of(40L, 41L), node.store.readBackward("w", "t", 42, 10).entries().stream().map(Entry::seq).toList());
            assertEquals(40, node.store.readFromTime("w", "t", 0, 1).entries().getFirst().seq());
            assertNull(node.store.readForward("w", "t", 40, 1).gap());
            // first only moves forward: a lower before answers the current first
            assertEquals(new Retention.Trimmed(40, 100), node.retention.trim("w", "t", 10));
            StrandException past = assertThrows(StrandException.class, () -> node.retention.trim("w", "t", 102));
            assertEquals(ErrorCode.BAD_REQUEST, past.code());
            assertEquals(100L, past.extras().get("head"));
            assertEquals(ErrorCode.NOT_FOUND, assertThrows(StrandException.class, () -> node.retention.trim("w", "nope", 1)).code());
            assertEquals(new Retention.Trimmed(101, 100), node.retention.trim("w", "t", 101));
            assertEquals(0, node.store.readForward("w", "t", 1, 10).entries().size());
        }
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            LogInfo info = node.store.info("w", "t").orElseThrow();
            assertEquals(101, info.first());
            assertEquals(0, info.entries());
            assertEquals(101, node.store.append("w", "t", batch(101, 1)).join().firstSeq(), "seqs are never reused");
            Page p = node.store.readForward("w", "t", 1, 10);
            assertEquals(new Page.Gap(1, 100), p.gap());
            assertEquals(List.of(101L), p.entries().stream().map(Entry::seq).toList());
        }
    }

    /** A cursor below a trim point reads a gap first, then the entries from first on. */
    @Test
    void cursorBelowTheTrimPointShouldReadTheGapThenEntriesFromFirst() throws Exception {
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            node.store.append("w", "g", batch(1, 20)).join();
            node.retention.trim("w", "g", 11);
            List<Long> got = new ArrayList<>();
            try (LogCursor cursor = node.store.cursor("w", "g", 3)) {
                PageInfo page = cursor.read(4, Long.MAX_VALUE, (seq, ts, key, data, offset, length) -> got.add(seq));
                assertEquals(new Page.Gap(3, 10), page.gap());
                assertEquals(List.of(11L, 12L, 13L, 14L), got);
                assertEquals(15, page.next());
                cursor.moveTo(page.next());
                page = cursor.read(100, Long.MAX_VALUE, (seq, ts, key, data, offset, length) -> got.add(seq));
                assertNull(page.gap());
                assertEquals(21, page.next());
                assertEquals(java.util.stream.LongStream.rangeClosed(11, 20).boxed().toList(), got);
            }
        }
    }

    @Test
    void trimShouldDeleteHotFilesAndColdSegmentsWhollyBelowFirst() throws Exception {
        try (Node node = start(true, 1_000_000, RetentionPolicy.UNLIMITED)) {
            long head = fill(node, "c", 0, 600, 3);
            node.store.rollNow("w", "c"); // everything but the newest hot file is cold now
            long more = fill(node, "c", head, 300, 2);
            LogInfo before = node.store.info("w", "c").orElseThrow();
            assertTrue(before.coldSegments() > 0 && before.bytesCold() > 0 && before.bytesHot() > 0, before.toString());
            long firstCold = node.store.coldTier().log("w", "c").manifest().segments().size();
            node.retention.trim("w", "c", more - 5);
            await("hot files and cold segments below first to go", () -> {
                LogInfo i = node.store.info("w", "c").orElseThrow();
                return i.coldSegments() == 0 && i.bytesHot() < before.bytesHot()
                        && node.store.coldTier().log("w", "c").manifest().pendingDeletes().isEmpty();
            });
            LogInfo after = node.store.info("w", "c").orElseThrow();
            assertEquals(more - 5, after.first());
            assertEquals(0, after.bytesCold());
            assertTrue(firstCold > 0);
            assertEquals(List.of(), node.store.coldTier().store().list("w/c/seg/").stream().map(o -> o.key()).toList(),
                    "cold segment objects deleted after the grace period");
            Page p = node.store.readForward("w", "c", 1, 100);
            assertEquals(new Page.Gap(1, more - 6), p.gap());
            assertEquals(List.of(more - 5, more - 4, more - 3, more - 2, more - 1, more),
                    p.entries().stream().map(Entry::seq).toList());
            // the cold part continues at first: a roll after the trim leaves no gap in the manifest
            long last = fill(node, "c", more, 20, 1);
            node.store.rollNow("w", "c");
            assertEquals(more - 5, node.store.coldTier().log("w", "c").firstSeq());
            assertEquals(last, node.store.readForward("w", "c", more - 5, 1000).entries().getLast().seq());
        }
    }

    @Test
    void trimInsideAColdSegmentShouldKeepTheSegmentAndStartReadsAtFirst() throws Exception {
        try (Node node = start(true, 1_000_000, RetentionPolicy.UNLIMITED)) {
            long head = fill(node, "m", 0, 300, 2);
            node.store.rollNow("w", "m");
            long coldLast = node.store.coldTier().log("w", "m").lastSeq();
            assertTrue(coldLast > 20, "rolled " + coldLast);
            node.retention.trim("w", "m", 11);
            node.retention.request("w", "m");
            await("a worker pass", () -> node.retention.passes.get() > 1);
            assertEquals(1, node.store.coldTier().log("w", "m").firstSeq(), "segment 1.. holds seq 11: kept whole");
            Page p = node.store.readForward("w", "m", 3, 5);
            assertEquals(new Page.Gap(3, 10), p.gap());
            assertEquals(List.of(11L, 12L, 13L, 14L, 15L), p.entries().stream().map(Entry::seq).toList());
            assertEquals(head, node.store.info("w", "m").orElseThrow().head());
        }
    }

    @Test
    void policyShouldTrimInTheBackgroundAndSurviveARestart() throws Exception {
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            node.store.append("w", "p", batch(1, 100)).join();
            node.store.append("w", "d", batch(1, 100)).join();
            node.retention.policy("w", "p", new RetentionPolicy(null, 30L, null));
            await("the policy to trim", () -> node.store.info("w", "p").orElseThrow().first() == 71);
            assertEquals(new RetentionPolicy(null, 30L, null), node.store.info("w", "p").orElseThrow().retention());
            assertEquals(1, node.store.info("w", "d").orElseThrow().first(), "no policy, no defaults: kept");
        }
        try (Node node = start(false, 1_000_000, new RetentionPolicy(null, 50L, null))) {
            assertEquals(new RetentionPolicy(null, 30L, null), node.store.info("w", "p").orElseThrow().retention());
            assertEquals(71, node.store.info("w", "p").orElseThrow().first());
            node.store.append("w", "p", batch(101, 10)).join();
            await("the policy to trim new entries", () -> node.store.info("w", "p").orElseThrow().first() == 81);
            await("the server default to trim", () -> node.store.info("w", "d").orElseThrow().first() == 51);
            LogInfo d = node.store.info("w", "d").orElseThrow();
            assertTrue(d.retentionDefault());
            assertEquals(new RetentionPolicy(null, 50L, null), d.retention());
            node.store.append("_system", "audit", batch(1, 100)).join();
            node.retention.request("_system", "audit");
            long passes = node.retention.passes.get();
            await("two passes", () -> node.retention.passes.get() > passes + 1);
            assertEquals(1, node.store.info("_system", "audit").orElseThrow().first(), "defaults never trim _system");
            assertEquals(0, node.retention.failures.get(), node.retention.lastError);
        }
    }

    @Test
    void maxAgeAndMaxBytesShouldTrimOldest() throws Exception {
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            node.store.append("w", "a", batch(1, 50)).join();
            node.store.append("w", "b", batch(1, 100)).join(); // "{"n":1}".."{"n":100}": 7..9 bytes each
            long cut = System.currentTimeMillis() + 1;
            while (System.currentTimeMillis() <= cut + 1000) {
                LockSupport.parkNanos(50_000_000); // let the first 50 entries age past one second
            }
            node.store.append("w", "a", batch(51, 5)).join();
            node.retention.policy("w", "a", new RetentionPolicy(1L, null, null));
            await("age trim", () -> node.store.info("w", "a").orElseThrow().first() == 51);
            long bytes = node.store.info("w", "b").orElseThrow().bytes();
            node.retention.policy("w", "b", new RetentionPolicy(null, null, bytes / 4));
            await("bytes trim", () -> node.store.info("w", "b").orElseThrow().first() > 70);
            assertTrue(node.store.info("w", "b").orElseThrow().first() <= 77, node.store.info("w", "b").toString());
        }
    }

    @Test
    void producerDuplicatesShouldStillBeAnsweredAfterATrimAndRestart() throws Exception {
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            long head = 0;
            for (long s = 1; s <= 20; s++) {
                head = node.store.append("w", "i", batch(head + 1, 10, "p1", s)).join().lastSeq();
                LockSupport.parkNanos(100_000_000); // two seconds over one-second files: trims drop files
            }
            node.retention.trim("w", "i", 150);
            await("hot files below first to go", () -> node.store.hotStoredFirst("w", "i") > 1);
        }
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            AppendResult dup = node.store.append("w", "i", batch(999, 10, "p1", 18L)).join();
            assertTrue(dup.duplicate());
            assertEquals(171, dup.firstSeq());
            assertEquals(180, dup.lastSeq());
            assertEquals(201, node.store.append("w", "i", batch(201, 10, "p1", 21L)).join().firstSeq());
        }
    }

    /**
     * A reader whose manifest predates a trim, when the retired segment is already deleted (no grace):
     * the cold part must deliver nothing rather than the entries after the retired ones as if they
     * were the seq asked for (the read path then answers with a gap).
     */
    @Test
    void coldReadWithAManifestOlderThanATrimShouldNeverStartAfterTheSeqAskedFor() throws Exception {
        FileColdStore store = new FileColdStore(dir.resolve("cold"));
        ColdTier reader = new ColdTier(store, new BlockCache(8 << 20), ColdLogConfig.defaults(dir.resolve("tmp1")));
        ColdTier trimmer = new ColdTier(store, new BlockCache(8 << 20), ColdLogConfig.defaults(dir.resolve("tmp2")));
        for (long first = 1; first <= 200; first += 100) {
            List<Entry> entries = new ArrayList<>();
            for (long s = first; s < first + 100; s++) {
                entries.add(new Entry(s, 1000 + s, null, ("{\"n\":" + s + "}").getBytes(StandardCharsets.UTF_8)));
            }
            trimmer.log("w", "o").roll(entries);
        }
        ColdPart part = reader.part("w", "o");
        assertEquals(200, part.lastSeq()); // the reader's manifest: segments 1..100 and 101..200
        trimmer.log("w", "o").trimBefore(101, Duration.ZERO);
        trimmer.log("w", "o").collectGarbage(java.time.Instant.now());
        List<Long> got = new ArrayList<>();
        long next = part.read(50, 200, new LogReader.Limit(10, 1L << 20, (seq, ts, key, data, offset, length) -> got.add(seq)));
        assertEquals(List.of(), got, "nothing, never seqs after the one asked for");
        assertEquals(50, next);
        assertEquals(101, part.firstSeq(), "the reader now sees the trimmed manifest");
        store.close();
    }

    @Test
    void policyAndTrimOfAMissingLogAreNotFoundAndInvalidLimitsBadRequest() throws Exception {
        try (Node node = start(false, 1_000_000, RetentionPolicy.UNLIMITED)) {
            assertEquals(ErrorCode.NOT_FOUND, assertThrows(StrandException.class,
                    () -> node.retention.policy("w", "none", RetentionPolicy.UNLIMITED)).code());
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(StrandException.class,
                    () -> new RetentionPolicy(0L, null, null)).code());
            assertNotNull(node.retention.stats());
        }
    }
}

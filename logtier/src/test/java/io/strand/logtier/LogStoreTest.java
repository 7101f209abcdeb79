package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.Durability;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import io.strand.core.WriteAheadLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class LogStoreTest {
    @TempDir
    Path dir;
    private Writers writers;
    private LogStore store;
    private final AtomicInteger syncs = new AtomicInteger();

    private LogStore open(LogConfig config) {
        writers = new Writers("test", 2, config.durability(), 1024, new WriteAheadLog(config.logsDir().resolveSibling("wal")),
                nanos -> syncs.incrementAndGet());
        store = new LogStore(config, writers);
        writers.recover();
        return store;
    }

    private void reopen(LogConfig config) {
        store.close();
        writers.close();
        open(config);
    }

    @AfterEach
    void close() {
        store.close();
        writers.close();
    }

    private static AppendRequest one(String json) {
        return AppendRequest.of(json.getBytes(StandardCharsets.UTF_8));
    }

    private static AppendRequest batch(int n, int from) {
        List<byte[]> data = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            data.add(("{\"i\":" + (from + i) + "}").getBytes(StandardCharsets.UTF_8));
            keys.add(i % 2 == 0 ? "k" + i : null);
        }
        return new AppendRequest(data, keys, null, null, null);
    }

    private static List<Long> seqs(Page page) {
        return page.entries().stream().map(e -> e.seq()).toList();
    }

    @Test
    void readShouldReturnDenseSeqsAcrossBatchesAndRestart() {
        LogConfig config = LogConfig.defaults(dir, Durability.FSYNC);
        open(config);
        assertEquals(1, store.append("w", "a", one("{\"x\":1}")).join().firstSeq());
        AppendResult b = store.append("w", "a", batch(5, 0)).join();
        assertEquals(2, b.firstSeq());
        assertEquals(6, b.lastSeq());
        assertEquals("fsync", b.durable());
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), seqs(store.readForward("w", "a", 0, 100)));
        assertEquals(List.of(4L, 5L), seqs(store.readForward("w", "a", 4, 2)));
        reopen(config);
        Page page = store.readForward("w", "a", 3, 100);
        assertEquals(List.of(3L, 4L, 5L, 6L), seqs(page));
        assertEquals("{\"i\":1}", page.entries().getFirst().dataText());
        assertEquals(7, store.append("w", "a", one("7")).join().firstSeq());
        Page back = store.readBackward("w", "a", Long.MAX_VALUE, 3);
        assertEquals(List.of(5L, 6L, 7L), seqs(back));
        assertEquals(5, back.prev());
    }

    @Test
    void seqIndexShouldMapSeqsWhenQueueRollsAcrossCycles() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withRollCycle(TestRollCycles.TEST_SECONDLY);
        open(config);
        long seq = 0;
        int cyclesSeen = 0;
        long lastCycleTime = System.currentTimeMillis() / 1000;
        while (cyclesSeen < 3) { // append until the queue has rolled at least three times
            seq = store.append("w", "r", (seq % 3 == 0) ? batch(3, (int) seq) : one("{\"n\":" + seq + "}")).join().lastSeq();
            long now = System.currentTimeMillis() / 1000;
            if (now != lastCycleTime) {
                cyclesSeen++;
                lastCycleTime = now;
            }
        }
        long head = seq;
        for (long from = 1; from <= head; from += Math.max(1, head / 97)) {
            Page p = store.readForward("w", "r", from, 7);
            assertEquals(from, p.entries().getFirst().seq(), "first seq of page from " + from);
            for (int i = 1; i < p.entries().size(); i++) {
                assertEquals(p.entries().get(i - 1).seq() + 1, p.entries().get(i).seq());
            }
        }
        reopen(config);
        List<Long> all = new ArrayList<>();
        long next = 1;
        while (next <= head) {
            Page p = store.readForward("w", "r", next, 1000);
            all.addAll(seqs(p));
            next = p.next();
        }
        assertEquals(head, all.size());
        for (int i = 0; i < all.size(); i++) {
            assertEquals(i + 1, all.get(i));
        }
    }

    @Test
    void producerRetryShouldReturnOriginalSeqsAcrossRestart() {
        LogConfig config = LogConfig.defaults(dir, Durability.FSYNC);
        open(config);
        AppendRequest req = new AppendRequest(batch(2, 0).data(), batch(2, 0).keys(), null, "p1", 7L);
        AppendResult first = store.append("w", "idem", req).join();
        store.append("w", "idem", one("1")).join();
        AppendResult retry = store.append("w", "idem", req).join();
        assertTrue(retry.duplicate());
        assertEquals(first.firstSeq(), retry.firstSeq());
        assertEquals(first.lastSeq(), retry.lastSeq());
        reopen(config);
        AppendResult afterRestart = store.append("w", "idem", req).join();
        assertTrue(afterRestart.duplicate());
        assertEquals(1, afterRestart.firstSeq());
        assertEquals(3, store.readForward("w", "idem", 1, 10).entries().size());
    }

    @Test
    void appendShouldRefuseWhenExpectedLastSeqDiffers() {
        open(LogConfig.defaults(dir, Durability.OS));
        AppendRequest expectEmpty = new AppendRequest(batch(1, 0).data(), batch(1, 0).keys(), 0L, null, null);
        assertEquals(1, store.append("w", "x", expectEmpty).join().firstSeq());
        CompletionException e = assertThrows(CompletionException.class, () -> store.append("w", "x", expectEmpty).join());
        StrandException se = (StrandException) e.getCause();
        assertEquals(ErrorCode.SEQ_MISMATCH, se.code());
        assertEquals(1L, se.extras().get("head"));
    }

    /**
     * Power loss, simulated: the home files go back to an earlier image (as if the page cache never reached
     * the disk) while the write-ahead log keeps what was acknowledged since. Every acknowledged append must
     * come back with its seq, ts, key and producer, and a delete logged in between must hold.
     */
    @Test
    void appendsLostFromTheQueueShouldComeBackFromTheWriteAheadLog() throws Exception {
        Path live = dir.resolve("live");
        open(LogConfig.defaults(live, Durability.FSYNC));
        store.append("w", "a", batch(10, 0)).join();
        store.append("w", "d", batch(3, 0)).join();
        Path image = dir.resolve("image");
        copyTree(live.resolve("logs"), image.resolve("logs"));
        AppendRequest produced = new AppendRequest(batch(5, 10).data(), batch(5, 10).keys(), null, "p1", 2L);
        AppendResult p = store.append("w", "a", produced).join();
        for (int i = 15; i < 30; i++) {
            store.append("w", "a", one("{\"i\":" + i + "}")).join();
        }
        store.delete("w", "d");
        store.append("w", "d", one("\"new\"")).join();
        Page before = store.readForward("w", "a", 1, 100);
        copyTree(live.resolve("wal"), image.resolve("wal")); // the kill: only the write-ahead log is newer
        close();

        open(LogConfig.defaults(image, Durability.FSYNC));
        Page after = store.readForward("w", "a", 1, 100);
        assertEquals(30, after.entries().size());
        for (int i = 0; i < 30; i++) {
            var want = before.entries().get(i);
            var got = after.entries().get(i);
            assertEquals(want.seq(), got.seq());
            assertEquals(want.ts(), got.ts());
            assertEquals(want.key(), got.key());
            assertEquals(want.dataText(), got.dataText());
        }
        AppendResult retry = store.append("w", "a", produced).join();
        assertTrue(retry.duplicate(), "the producer window comes back with the replayed batch");
        assertEquals(p.firstSeq(), retry.firstSeq());
        Page d = store.readForward("w", "d", 1, 100);
        assertEquals(List.of(1L), seqs(d));
        assertEquals("\"new\"", d.entries().getFirst().dataText());
        assertEquals(31, store.append("w", "a", one("31")).join().firstSeq());
    }

    private static void copyTree(Path from, Path to) throws java.io.IOException {
        try (var walk = java.nio.file.Files.walk(from)) {
            for (Path src : walk.toList()) {
                Path dst = to.resolve(from.relativize(src).toString());
                if (java.nio.file.Files.isDirectory(src)) {
                    java.nio.file.Files.createDirectories(dst);
                } else {
                    java.nio.file.Files.copy(src, dst, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    @Test
    void groupCommitShouldShareSyncsWhenWritersAreConcurrent() {
        open(LogConfig.defaults(dir, Durability.FSYNC));
        List<CompletableFuture<AppendResult>> acks = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            acks.add(store.append("w", "g", one("{\"i\":" + i + "}")));
        }
        acks.forEach(CompletableFuture::join);
        assertTrue(syncs.get() < 2000, "2000 appends should share syncs, saw " + syncs.get());
        assertEquals(2000, store.info("w", "g").orElseThrow().head());
    }

    @Test
    void appendsShouldKeepSubmissionOrderWhileTheLogIsBeingOpened() {
        open(LogConfig.defaults(dir, Durability.OS));
        List<CompletableFuture<AppendResult>> acks = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            acks.add(store.append("w", "fresh", one(String.valueOf(i))));
        }
        for (int i = 0; i < 300; i++) {
            assertEquals(i + 1, acks.get(i).join().firstSeq(), "append " + i);
        }
    }

    /** In a cluster the leader stamps each batch, so every replica stores the same ts: the stamp wins over the clock. */
    @Test
    void appendShouldStoreTheGivenStampWhenTheRequestCarriesOne() {
        open(LogConfig.defaults(dir, Durability.OS));
        long stamp = 1_600_000_000_000L; // years before this node's clock
        AppendResult first = store.append("w", "s", batch(2, 0).withStampedAt(stamp)).join();
        assertEquals(stamp, first.ts());
        assertEquals(List.of(stamp, stamp), store.readForward("w", "s", 1, 10).entries().stream().map(Entry::ts).toList());
        assertEquals(stamp + 7, store.append("w", "s", one("3").withStampedAt(stamp + 7)).join().ts());
        assertEquals(stamp + 7, store.append("w", "s", one("4").withStampedAt(stamp - 5_000)).join().ts(),
                "a stamp before the log's last ts is raised to it: ts never decreases within a log");
        long clock = System.currentTimeMillis();
        assertTrue(store.append("w", "s", one("5")).join().ts() >= clock, "no stamp: the node's clock");
        assertEquals(List.of(stamp, stamp, stamp + 7, stamp + 7),
                store.readForward("w", "s", 1, 4).entries().stream().map(Entry::ts).toList());
    }

    /** A txn's staged append keeps the stamp too, for a log that exists and for one the txn creates. */
    @Test
    void stageShouldStoreTheGivenStampWhenTheRequestCarriesOne() {
        open(LogConfig.defaults(dir, Durability.OS));
        long stamp = 1_600_000_000_000L;
        store.append("w", "old", one("1").withStampedAt(stamp)).join();
        List<AppendResult> applied = store.writers().submit("w", commit -> {
            StagedAppend existing = store.stage("w", "old", one("2").withStampedAt(stamp + 1));
            StagedAppend created = store.stage("w", "new", one("1").withStampedAt(stamp + 2));
            return List.of(existing.apply(commit, "os"), created.apply(commit, "os"));
        }).join();
        assertEquals(stamp + 1, applied.get(0).ts());
        assertEquals(stamp + 2, applied.get(1).ts());
        assertEquals(stamp + 1, store.readForward("w", "old", 2, 1).entries().getFirst().ts());
        assertEquals(stamp + 2, store.readForward("w", "new", 1, 1).entries().getFirst().ts());
    }

    @Test
    void readFromTimeShouldStartAtFirstEntryAtOrAfterTime() {
        open(LogConfig.defaults(dir, Durability.OS));
        store.append("w", "t", one("1")).join();
        long ts2 = store.append("w", "t", one("2")).join().ts();
        store.append("w", "t", one("3")).join();
        Page p = store.readFromTime("w", "t", ts2, 10);
        assertTrue(p.entries().getFirst().ts() >= ts2);
        assertTrue(p.entries().getFirst().seq() <= 2);
        assertEquals(0, store.readFromTime("w", "t", ts2 + 60_000, 10).entries().size());
    }

    @Test
    void readShouldBeEmptyWhenLogWasNeverCreated() {
        open(LogConfig.defaults(dir, Durability.OS));
        Page p = store.readForward("w", "nope", 1, 10);
        assertEquals(0, p.head());
        assertTrue(p.entries().isEmpty());
        assertFalse(store.info("w", "nope").isPresent());
        assertThrows(StrandException.class, () -> store.readForward("w", "..", 1, 10));
    }

    @Test
    void readsRacingIdleCloseShouldStayExactAndLeakNoTailer() throws Exception {
        raceReadsWithTheReaper(LogStore.FORGET_SLOTS_AFTER);
    }

    /** The reaper also forgets each slot as soon as it is unused: a read that looked one up just before must not open a queue there. */
    @Test
    void readsRacingTheReaperForgettingSlotsShouldLeaveNoQueueOpen() throws Exception {
        raceReadsWithTheReaper(java.time.Duration.ZERO);
    }

    /**
     * An append whose writer turn waits (here behind a blocked turn) while the reaper closes its log
     * and forgets its slot, and a later append opens the log again through a new slot: the waiting
     * append must go through that new slot, not open a second queue with a stale head.
     */
    @Test
    void anAppendQueuedWhileItsSlotIsForgottenShouldAppendThroughTheRegisteredSlot() throws Exception {
        open(LogConfig.defaults(dir, Durability.OS).withOpenLimits(java.time.Duration.ZERO, 1000));
        store.forgetSlotsAfter(java.time.Duration.ZERO);
        store.append("w", "pin", batch(1, 0)).join();
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<Object> blocker = store.writers().submit("w", commit -> {
            running.countDown();
            release.await();
            return null;
        });
        assertTrue(running.await(10, java.util.concurrent.TimeUnit.SECONDS));
        CompletableFuture<AppendResult> queued = store.append("w", "pin", batch(1, 1));
        store.closeIdle(); // or the store's own reaper got there first: either way the log closes and its slot goes
        assertEquals(0, store.openLogs(), "the idle log is closed and its slot forgotten");
        CompletableFuture<AppendResult> later = store.append("w", "pin", batch(1, 2)); // opens the log through a new slot
        release.countDown();
        blocker.join();
        assertEquals(2, queued.join().firstSeq());
        assertEquals(3, later.join().firstSeq());
        Page page = store.readForward("w", "pin", 1, 10);
        assertEquals(List.of(1L, 2L, 3L), page.entries().stream().map(Entry::seq).toList());
        assertEquals(1, store.openLogs(), "one open queue for the log");
    }

    /**
     * A delete whose turn waits (here its write-ahead record is replayed behind a blocked turn) while
     * the reaper closes the log and forgets its slot, and the log is opened again through a new slot:
     * the delete must go through the slot the registry holds then, closing that log and telling its
     * watchers, never delete the files under a queue left open in the new slot.
     */
    @Test
    void aDeleteQueuedWhileItsSlotIsForgottenShouldDeleteTheLogReopenedThroughTheNewSlot() throws Exception {
        open(LogConfig.defaults(dir, Durability.OS).withOpenLimits(java.time.Duration.ofHours(1), 1));
        store.forgetSlotsAfter(java.time.Duration.ZERO);
        store.append("w", "d", batch(3, 0)).join();
        store.append("w", "other", one("{}")).join(); // two open, one over the cap: "d", used least recently, is closed first
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<Object> blocker = store.writers().submit("w", commit -> {
            running.countDown();
            release.await();
            return null;
        });
        assertTrue(running.await(10, java.util.concurrent.TimeUnit.SECONDS));
        CompletableFuture<?> delete = writers.replay(LogStore.WAL_DELETE,
                java.nio.ByteBuffer.wrap(WriteAheadLog.keyed("w/d", new byte[0]))); // its turn waits behind the blocker
        store.closeIdle(); // or the store's own reaper got there first: "d" closes and its slot goes
        assertEquals(3, store.readForward("w", "d", 1, 10).entries().size(), "opened again, through a new slot");
        try (LogWatch watch = store.watch("w", "d")) {
            release.countDown();
            blocker.join();
            delete.join();
            assertTrue(watch.deleted(), "the watch of the log open now sees the delete");
            assertFalse(store.info("w", "d").isPresent(), "the log open now is the one deleted");
        }
        assertEquals(1, store.append("w", "d", one("\"new\"")).join().firstSeq());
        assertEquals(List.of(1L), seqs(store.readForward("w", "d", 1, 10)));
    }

    /** A subscription's cursor reads the chunk at its place, moved on by its owner, and holds the log's watch meanwhile. */
    @Test
    void cursorShouldReadTheChunkAtItsPlaceUntilMoved() {
        open(LogConfig.defaults(dir, Durability.OS));
        store.append("w", "c", batch(10, 0)).join();
        List<Entry> got = new ArrayList<>();
        try (LogCursor cursor = store.cursor("w", "c", 0)) {
            assertEquals(1, cursor.next());
            assertEquals(5, cursor.read(4, Long.MAX_VALUE, EntrySink.of(got::add)).next());
            assertEquals(1, cursor.next(), "reading does not move the cursor");
            cursor.moveTo(5);
            PageInfo page = cursor.read(4, Long.MAX_VALUE, EntrySink.of(got::add));
            assertEquals(9, page.next());
            cursor.moveTo(page.next());
            page = cursor.read(4, Long.MAX_VALUE, EntrySink.of(got::add));
            assertEquals(2, page.count());
            assertEquals(10, page.head());
            cursor.moveTo(page.next());
            assertEquals(0, cursor.read(4, Long.MAX_VALUE, EntrySink.of(got::add)).count(), "at the head");
            assertEquals(1, store.watchers("w", "c"));
        }
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L), got.stream().map(Entry::seq).toList());
        assertEquals(0, store.watchers("w", "c"), "closing the cursor closes its watch");
    }

    /** A chunk ends at the entry that reaches maxBytes (or maxEntries), and always takes its first entry. */
    @Test
    void chunkShouldEndAtTheEntryThatReachesMaxBytes() {
        open(LogConfig.defaults(dir, Durability.OS));
        store.append("w", "b", batch(6, 0)).join();
        int keyed = Entry.weight("{\"i\":0}".length(), "k0"); // entries 0, 2, 4 have keys "k0", "k2", "k4"
        int unkeyed = Entry.weight("{\"i\":1}".length(), null);
        assertEquals(1, chunk("b", 100, 1), "the first entry is always taken");
        assertEquals(1, chunk("b", 100, keyed));
        assertEquals(2, chunk("b", 100, keyed + 1), "the entry that reaches maxBytes ends the chunk");
        assertEquals(2, chunk("b", 100, keyed + unkeyed));
        assertEquals(3, chunk("b", 100, keyed + unkeyed + 1));
        assertEquals(2, chunk("b", 2, Long.MAX_VALUE));
    }

    /** How many entries a chunk of log {@code name} from seq 1 holds. */
    private int chunk(String name, int maxEntries, long maxBytes) {
        return store.readChunk("w", name, 1, maxEntries, maxBytes, (seq, ts, key, data, offset, length) -> { }).count();
    }

    /**
     * Readers page through their logs again and again while another thread runs the reaper's turn
     * without pause (every log not in use is closed at once); every page must be exact, and when the
     * store closes, every queue and every pooled tailer must be closed with it.
     */
    private void raceReadsWithTheReaper(java.time.Duration forgetSlotsAfter) throws Exception {
        int tailersBefore = ReadCursors.openTailers();
        open(LogConfig.defaults(dir, Durability.OS).withOpenLimits(java.time.Duration.ZERO, 1000));
        store.forgetSlotsAfter(forgetSlotsAfter);
        int logs = 3;
        int entries = 3000;
        for (int l = 0; l < logs; l++) {
            for (int b = 0; b < entries / 100; b++) {
                store.append("w", "race" + l, batch(100, b * 100)).join();
            }
        }
        int wantedCloses = 50;
        AtomicInteger closes = new AtomicInteger();
        java.util.concurrent.CountDownLatch readersDone = new java.util.concurrent.CountDownLatch(logs);
        java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
        List<Thread> readers = new ArrayList<>();
        for (int l = 0; l < logs; l++) {
            String log = "race" + l;
            readers.add(Thread.ofPlatform().name("reader-" + l).start(() -> {
                try {
                    int passes = 0;
                    // page through again and again until the reaper has closed logs under the readers often enough
                    while (passes == 0 || closes.get() < wantedCloses) {
                        long next = 1;
                        while (next <= entries) {
                            Page p = store.readForward("w", log, next, 7);
                            for (int i = 0; i < p.entries().size(); i++) {
                                Entry e = p.entries().get(i);
                                assertEquals(next + i, e.seq());
                                assertEquals("{\"i\":" + (e.seq() - 1) + "}", e.dataText());
                            }
                            assertEquals(next + p.entries().size(), p.next());
                            next = p.next();
                        }
                        passes++;
                    }
                } catch (Throwable t) {
                    failures.add(t);
                } finally {
                    readersDone.countDown();
                }
            }));
        }
        Thread reaper = Thread.ofPlatform().name("reaper-race").start(() -> {
            while (readersDone.getCount() > 0) {
                closes.addAndGet(store.closeIdle());
                Thread.onSpinWait();
            }
        });
        assertTrue(readersDone.await(50, java.util.concurrent.TimeUnit.SECONDS), "readers finished");
        reaper.join();
        for (Thread t : readers) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new AssertionError("a reader failed", failures.peek());
        }
        assertTrue(closes.get() >= wantedCloses, "logs were closed between reads: " + closes.get());
        store.close();
        assertEquals(0, store.openLogs(), "every queue opened by a read was closed");
        assertEquals(tailersBefore, ReadCursors.openTailers(), "every pooled tailer closed with its log");
    }

    /**
     * The reaper orders slots by last use to close the least recently used past the cap, while readers
     * change those last uses: with more than 1,000 slots the sort used to see values move under it
     * ("Comparison method violates its general contract!"), so the turn failed and the cap was not kept.
     * Most of the 1,100 slots here are of logs that do not exist (a lookup makes a slot too), so the
     * test need not create a thousand queues.
     */
    @Test
    void closeIdleShouldKeepTheOpenCapWhileManyLogsAreTouchedConcurrently() throws Exception {
        int cap = 2;
        int logs = 40;
        open(LogConfig.defaults(dir, Durability.OS).withOpenLimits(java.time.Duration.ofHours(1), cap));
        for (int i = 0; i < logs; i++) {
            store.append("w", "many" + i, one("{}")).join();
        }
        for (int i = 0; i < 1100 - logs; i++) {
            assertEquals(0, store.readForward("w", "absent" + i, 1, 1).head());
        }
        long seed = System.nanoTime();
        System.out.println("closeIdleShouldKeepTheOpenCapWhileManyLogsAreTouchedConcurrently seed " + seed);
        java.util.concurrent.atomic.AtomicBoolean touching = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
        List<Thread> touchers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            java.util.Random random = new java.util.Random(seed + t);
            touchers.add(Thread.ofPlatform().name("toucher-" + t).start(() -> {
                try {
                    while (touching.get()) {
                        assertEquals(1, store.readForward("w", "many" + random.nextInt(logs), 1, 1).entries().size());
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        long failedBefore = store.reaperFailures();
        try {
            for (int turn = 0; turn < 60; turn++) { // before the fix about one turn in six failed
                store.closeIdle();
            }
        } finally {
            touching.set(false);
            for (Thread t : touchers) {
                t.join();
            }
        }
        if (!failures.isEmpty()) {
            throw new AssertionError("a toucher failed", failures.peek());
        }
        assertEquals(failedBefore, store.reaperFailures(), "no reaper turn failed");
        store.closeIdle(); // nothing touches the logs now: one turn brings them under the cap
        assertTrue(store.openLogs() <= cap, "open logs " + store.openLogs() + " > cap " + cap);
    }

    /** A page is served in place only from an open log's newest cycle file; anything else says null, having read nothing. */
    @Test
    void readForwardInPlaceShouldServeOnlyTheNewestCycleOfAnOpenLog() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withRollCycle(TestRollCycles.TEST_SECONDLY)
                .withOpenLimits(java.time.Duration.ofMinutes(5), 1); // the reaper closes "p" only once a second log is open
        open(config);
        long last = store.append("w", "p", batch(3, 0)).join().lastSeq();
        long firstSecond = System.currentTimeMillis() / 1000; // seq 1 was written in this cycle or before
        long startedIn;
        do { // until an append starts in a later second: the queue has rolled
            startedIn = System.currentTimeMillis() / 1000;
            last = store.append("w", "p", batch(3, (int) last)).join().lastSeq();
        } while (startedIn == firstSecond);
        long newest = store.append("w", "p", batch(3, (int) last)).join().firstSeq(); // first seq in the newest cycle, or later
        List<Entry> got = new ArrayList<>();
        PageInfo inPlace = store.readForwardInPlace("w", "p", newest, 2, EntrySink.of(got::add));
        assertEquals(List.of(newest, newest + 1), got.stream().map(Entry::seq).toList());
        assertEquals(newest + 2, inPlace.next());
        assertEquals(newest + 2, inPlace.head());
        assertEquals(null, store.readForwardInPlace("w", "p", 1, 2, EntrySink.of(got::add)), "seq 1 is in an older cycle file");
        assertEquals(0, store.readForwardInPlace("w", "p", newest + 3, 2, EntrySink.of(got::add)).count(), "past the head: empty, in place");
        store.append("w", "q", one("1")).join(); // now two are open, one over the limit: the least recently used goes
        store.closeIdle();
        assertEquals(null, store.readForwardInPlace("w", "p", newest, 2, EntrySink.of(got::add)), "a closed log needs its files opened");
        assertEquals(null, store.readForwardInPlace("w", "never", 1, 2, EntrySink.of(got::add)));
        assertEquals(2, got.size(), "nothing was read by the calls that said null");
        assertEquals(List.of(newest), seqs(store.readForward("w", "p", newest, 1))); // reopens the log
        assertEquals(1, store.readForwardInPlace("w", "p", newest, 1, EntrySink.of(got::add)).count());
    }

    @Test
    void idleLogsShouldCloseAndReopenTransparently() throws Exception {
        open(LogConfig.defaults(dir, Durability.OS).withOpenLimits(java.time.Duration.ZERO, 1));
        for (int i = 0; i < 20; i++) {
            store.append("w", "l" + i, one("{}")).join();
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (store.openLogs() > 1 && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll without burning a core
        }
        assertTrue(store.openLogs() <= 1, "idle logs should be closed, open: " + store.openLogs());
        assertEquals(1, store.readForward("w", "l3", 1, 10).entries().size());
        assertEquals(20, store.list("w", null, 100).size());
        assertEquals(List.of("l3", "l4"), store.list("w", "l2", 2));
        assertTrue(store.delete("w", "l3"));
        assertFalse(store.info("w", "l3").isPresent());
    }

    @Test
    void aDamagedFirstExcerptShouldFailOnlyReadsOfItsOwnSeqAfterACrash() throws Exception {
        LogConfig config = LogConfig.defaults(dir, Durability.OS);
        open(config);
        for (int i = 1; i <= 300; i++) {
            store.append("w", "a", one("{\"m\":\"MARK-" + i + "-q\"}")).join();
        }
        LogStore crashed = store; // not closed: the next open replays the write-ahead log over the queue
        Writers crashedWriters = writers;
        byte[] needle = "MARK-1-q".getBytes(StandardCharsets.UTF_8);
        boolean flipped = false;
        try (var files = java.nio.file.Files.walk(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".cq4")).toList()) {
                byte[] all = java.nio.file.Files.readAllBytes(f);
                for (int i = 0; !flipped && i + needle.length <= all.length; i++) {
                    if (java.util.Arrays.equals(all, i, i + needle.length, needle, 0, needle.length)) {
                        try (var raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
                            raf.seek(i + 5);
                            raf.write(all[i + 5] ^ 1);
                        }
                        flipped = true;
                    }
                }
            }
        }
        assertTrue(flipped);
        try {
            open(config);
            // found by BitFlipIT: the producer-window restore at open met the damaged seq 1 first and
            // refused the whole log, so every page answered corrupt, not only the page holding seq 1
            StrandException e = assertThrows(StrandException.class, () -> store.readForward("w", "a", 1, 100));
            assertEquals(ErrorCode.CORRUPT, e.code());
            assertEquals(1L, e.extras().get("seq"));
            assertEquals(100, store.readForward("w", "a", 101, 100).entries().size());
            assertEquals(List.of(2L, 3L), seqs(store.readForward("w", "a", 2, 2)));
            assertEquals(301, store.append("w", "a", one("{}")).join().firstSeq());
        } finally {
            crashed.close();
            crashedWriters.close();
        }
    }
}

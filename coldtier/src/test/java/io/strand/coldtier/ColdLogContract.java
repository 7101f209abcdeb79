package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The cold log's behaviour, run against the directory store and against a real S3 server. */
@Timeout(60)
abstract class ColdLogContract {
    /** The logs' clock: real time (object mtimes are real), frozen so grace periods are exact. */
    static final Instant NOW = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);

    @TempDir
    Path tmp;
    CountingColdStore store;
    ColdLogConfig config;
    ColdLog log;

    /** A fresh, empty store; the same location each time it is called within one test. */
    abstract ColdStore openStore();

    @BeforeEach
    void setUp() {
        store = new CountingColdStore(openStore());
        config = ColdLogConfig.defaults(tmp.resolve("roll-tmp")).withBlockBytes(1024)
                .withClock(InstantSource.fixed(NOW));
        log = newLog();
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    /** Another handle on the same log with its own cache: what another process would see. */
    ColdLog newLog() {
        return new ColdLog(store, "ws1", "orders", new BlockCache(8 << 20), config);
    }

    private List<Entry> readAll(ColdLog l) {
        List<Entry> out = new ArrayList<>();
        long from = 1;
        while (true) {
            List<Entry> page = l.read(from, 97, 1 << 20);
            if (page.isEmpty()) {
                return out;
            }
            out.addAll(page);
            from = page.getLast().seq() + 1;
        }
    }

    private void rollThree() {
        log.roll(TestEntries.range(1, 100));
        log.roll(TestEntries.range(101, 250));
        log.roll(TestEntries.range(251, 300));
    }

    @Test
    void rollThreeSegmentsThenReadRangesAcrossBoundariesExactly() {
        rollThree();
        assertEquals(1, log.firstSeq());
        assertEquals(300, log.lastSeq());
        assertEquals(3, log.manifest().segments().size());
        assertEquals(3, log.manifest().generation());
        for (ColdLog reader : List.of(log, newLog())) {
            for (long from : new long[] {0, 1, 2, 99, 100, 101, 102, 150, 249, 250, 251, 299, 300}) {
                for (int max : new int[] {1, 2, 7, 60, 151, 500}) {
                    long start = Math.max(1, from);
                    List<Entry> expected = TestEntries.range(start, Math.min(300, start + max - 1));
                    TestEntries.assertSame(expected, reader.read(from, max, Long.MAX_VALUE));
                }
            }
            assertTrue(reader.read(301, 10, Long.MAX_VALUE).isEmpty());
        }
        TestEntries.assertSame(TestEntries.range(1, 300), readAll(newLog()));
    }

    @Test
    void readShouldNotTouchTheNextSegmentWhenAPageEndsAtASegmentEnd() {
        rollThree();
        ColdLog reader = newLog();
        reader.manifest();
        store.reset();
        TestEntries.assertSame(TestEntries.range(51, 100), reader.read(51, 50, Long.MAX_VALUE));
        TestEntries.assertSame(TestEntries.range(201, 250), reader.read(201, 50, Long.MAX_VALUE));
        SegmentMeta third = reader.manifest().segments().get(2);
        store.delete(third.key()); // not even a damaged (here: missing) next segment may fail such a page
        TestEntries.assertSame(TestEntries.range(201, 250), newLog().read(201, 50, Long.MAX_VALUE));
    }

    @Test
    void readShouldFetchOnlyNeededBlocksWhenPageIsSmall() {
        log.roll(TestEntries.range(1, 4000));
        SegmentMeta seg = log.manifest().segments().getFirst();
        ColdLog reader = newLog();
        reader.manifest();
        store.reset();
        TestEntries.assertSame(TestEntries.range(1000, 1004), reader.read(1000, 5, Long.MAX_VALUE));
        assertTrue(store.rangeGets.get() <= 3, "tail (+ rest of a big footer) and one block: " + store.rangeGets.get());
        assertTrue(store.rangeBytes.get() < seg.bytes() / 4,
                "fetched " + store.rangeBytes.get() + " of " + seg.bytes() + " bytes");
        assertEquals(0, store.wholeGets.get());
        store.reset();
        TestEntries.assertSame(TestEntries.range(1001, 1001), reader.read(1001, 1, Long.MAX_VALUE));
        assertEquals(0, store.rangeGets.get(), "the same block again comes from the cache");
        // with the index cached, a page elsewhere costs exactly one ranged read of exactly its block
        SegmentReader index = reader.reader(seg);
        BlockIndex b = index.blocks().get(index.blockOf(3000));
        store.reset();
        TestEntries.assertSame(TestEntries.range(3000, 3000), reader.read(3000, 1, Long.MAX_VALUE));
        assertEquals(1, store.rangeGets.get());
        assertEquals(b.length(), store.rangeBytes.get());
    }

    @Test
    void readShouldStopBeforeMaxBytesButReturnAtLeastOneEntry() {
        log.roll(TestEntries.range(1, 50));
        List<Entry> one = log.read(10, 100, 1);
        TestEntries.assertSame(TestEntries.range(10, 10), one);
        long budget = 0;
        for (Entry e : TestEntries.range(10, 14)) {
            budget += e.weight();
        }
        TestEntries.assertSame(TestEntries.range(10, 14), log.read(10, 100, budget));
        TestEntries.assertSame(TestEntries.range(10, 14), log.read(10, 100, budget + TestEntries.entry(15).weight() - 1));
    }

    @Test
    void readAheadShouldPrefetchTheNextBlockForSequentialReplay() {
        log.roll(TestEntries.range(1, 400));
        ColdLog reader = new ColdLog(store, "ws1", "orders", new BlockCache(8 << 20), config.withReadAhead(Runnable::run));
        SegmentReader r = reader.reader(reader.manifest().segments().getFirst());
        BlockIndex b0 = r.blocks().get(0);
        store.reset();
        reader.read(1, (int) b0.entries(), Long.MAX_VALUE);
        assertEquals(2, store.rangeGets.get(), "block 0 + read-ahead of block 1 (the tail was read above)");
        store.reset();
        TestEntries.assertSame(TestEntries.range(b0.lastSeq() + 1, b0.lastSeq() + 3), reader.read(b0.lastSeq() + 1, 3, Long.MAX_VALUE));
        assertEquals(0, store.rangeGets.get(), "block 1 was already there");
    }

    /**
     * Found in {@code ObjectStoreFaultIT}'s logs: a status request's re-read of the manifest that
     * returned after a roll's commit put the older manifest back, so the roller then asked the hot
     * part for entries it had already rolled and dropped ("hot entries … are missing while
     * rolling"), and a read between the two sides would have found neither.
     */
    @Test
    void aRereadThatReturnsAfterACommitShouldNotMoveTheManifestBack() throws Exception {
        log.roll(TestEntries.range(1, 100));
        // commits generation 2 while the re-read holds generation 1
        whileARereadIsHeld(() -> log.roll(TestEntries.range(101, 250)));
        assertEquals(2, log.manifest().generation());
        assertEquals(250, log.lastSeq(), "the older manifest the re-read found did not replace the newer one");
        assertEquals(250, log.refresh().lastSeq());
    }

    /** The same race with a delete: the re-read that began before it must not bring the deleted manifest back. */
    @Test
    void aRereadThatReturnsAfterADeleteShouldNotBringTheManifestBack() throws Exception {
        log.roll(TestEntries.range(1, 100));
        whileARereadIsHeld(log::deleteManifest);
        assertEquals(0, log.manifest().generation(), "the deleted manifest stays deleted");
        assertEquals(0, log.lastSeq());
    }

    /**
     * Starts a {@link ColdLog#refresh()} on another thread, holds it after it has read the stored
     * manifest, runs {@code meanwhile}, then lets the re-read finish and waits for it.
     */
    private void whileARereadIsHeld(Runnable meanwhile) throws InterruptedException {
        java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread slow = new Thread(() -> log.refresh(), "slow-refresh");
        store.afterVersionedGet = key -> {
            if (Thread.currentThread() == slow) {
                read.countDown();
                try {
                    assertTrue(done.await(30, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        slow.start();
        assertTrue(read.await(30, TimeUnit.SECONDS));
        meanwhile.run();
        done.countDown();
        slow.join(30_000);
        assertFalse(slow.isAlive());
    }

    @Test
    void rollShouldRejectEntriesThatDoNotContinueTheColdPart() {
        log.roll(TestEntries.range(1, 10));
        StrandException e = assertThrows(StrandException.class, () -> log.roll(TestEntries.range(12, 20)));
        assertEquals(ErrorCode.SEQ_MISMATCH, e.code());
        assertEquals(10L, e.extras().get("head"));
        assertEquals("ws1", e.extras().get("ws"));
        assertEquals(10, log.lastSeq());
    }

    @Test
    void rollShouldSkipEntriesAlreadyColdAndBeANoOpWhenAllAre() {
        log.roll(TestEntries.range(1, 10));
        long gen = log.manifest().generation();
        assertEquals(Optional.empty(), log.roll(TestEntries.range(1, 10)));
        assertEquals(gen, log.manifest().generation());
        SegmentMeta next = log.roll(TestEntries.range(5, 20)).orElseThrow();
        assertEquals(11, next.firstSeq());
        TestEntries.assertSame(TestEntries.range(1, 20), readAll(newLog()));
    }

    @Test
    void rollShouldBeIdempotentWhenRepeatedAfterACrashAtEachStep() {
        log.roll(TestEntries.range(1, 10));
        // crash after writing the local file (step 2): nothing uploaded
        ColdRoll.write(log, TestEntries.range(11, 20).iterator());
        // crash after upload (step 3): an uncommitted object under the deterministic key
        ColdRoll.Prepared p = ColdRoll.write(log, TestEntries.range(11, 20).iterator());
        ColdRoll.upload(log, p);
        assertEquals(1, log.orphans().size(), "the uploaded segment is not yet referenced");
        assertEquals(10, newLog().lastSeq(), "readers do not see it");
        // a new process re-runs the same roll: the object is overwritten with the same bytes and committed
        ColdLog restarted = newLog();
        restarted.roll(TestEntries.range(11, 20));
        assertEquals(20, restarted.lastSeq());
        assertTrue(restarted.orphans().isEmpty());
        // crash after verify (step 4)
        p = ColdRoll.write(restarted, TestEntries.range(21, 30).iterator());
        ColdRoll.upload(restarted, p);
        ColdRoll.verifyUpload(restarted, p);
        newLog().roll(TestEntries.range(21, 30));
        // crash after the manifest commit (step 5), before the hot entries were dropped: the re-run is a no-op
        ColdLog again = newLog();
        long gen = again.manifest().generation();
        assertEquals(Optional.empty(), again.roll(TestEntries.range(21, 30)));
        assertEquals(gen, again.refresh().generation());
        // re-committing the same prepared segment is a no-op too
        assertEquals(p.key(), ColdRoll.commit(again, p).key());
        assertEquals(gen, again.refresh().generation());
        assertEquals(3, again.manifest().segments().size());
        TestEntries.assertSame(TestEntries.range(1, 30), readAll(newLog()));
        VerifyReport report = newLog().verify();
        assertTrue(report.ok(), report.toString());
    }

    @Test
    void findSeqAtOrAfterTimeShouldFindTheFirstEntryNoOlderThanTime() {
        rollThree();
        assertEquals(OptionalLong.of(1), log.findSeqAtOrAfterTime(0));
        for (long seq : new long[] {1, 2, 3, 4, 5, 99, 100, 101, 177, 250, 251, 300}) {
            long ts = TestEntries.ts(seq);
            long expected = seq;
            while (expected > 1 && TestEntries.ts(expected - 1) == ts) {
                expected--; // equal timestamps: the first of them
            }
            assertEquals(OptionalLong.of(expected), newLog().findSeqAtOrAfterTime(ts), "ts of " + seq);
            if (TestEntries.ts(seq) - 1 > TestEntries.ts(expected - 1)) {
                assertEquals(OptionalLong.of(expected), log.findSeqAtOrAfterTime(ts - 1));
            }
        }
        assertEquals(OptionalLong.empty(), log.findSeqAtOrAfterTime(TestEntries.ts(300) + 1));
    }

    @Test
    void compactShouldMergeSmallSegmentsKeepEveryEntryAndDeleteOldOnesAfterGrace() {
        for (int i = 0; i < 8; i++) {
            log.roll(TestEntries.range(i * 25L + 1, i * 25L + 25));
        }
        List<String> oldKeys = log.manifest().segments().stream().map(SegmentMeta::key).toList();
        long target = log.manifest().totalBytes() / 2 + 1;
        Compactor.Report r = log.compact(target, Duration.ofMinutes(5));
        assertEquals(8, r.segmentsBefore());
        assertTrue(r.segmentsAfter() <= 3 && r.segmentsAfter() >= 2, r.toString());
        assertEquals(0, r.abandoned());
        assertEquals(r.retired(), log.manifest().pendingDeletes().size());
        TestEntries.assertSame(TestEntries.range(1, 200), readAll(newLog()));
        VerifyReport v = newLog().verify();
        assertTrue(v.ok(), "pending deletes are not orphans: " + v);
        assertEquals(200, v.entries());
        // not yet: the grace period has not passed
        assertEquals(0, log.collectGarbage(NOW.plus(Duration.ofMinutes(4))));
        assertTrue(store.head(oldKeys.getFirst()).isPresent());
        assertEquals(r.retired(), log.collectGarbage(NOW.plus(Duration.ofMinutes(5))));
        assertTrue(log.manifest().pendingDeletes().isEmpty());
        for (String k : oldKeys) {
            boolean live = log.manifest().segments().stream().anyMatch(s -> s.key().equals(k));
            assertEquals(live, store.head(k).isPresent(), k);
        }
        TestEntries.assertSame(TestEntries.range(1, 200), readAll(newLog()));
        assertTrue(newLog().verify().ok());
        // rolling continues the chain after compaction
        log.roll(TestEntries.range(201, 230));
        assertTrue(newLog().verify().ok());
    }

    @Test
    void readerWithAnOldManifestShouldRecoverWhenCompactedSegmentsAreGone() {
        for (int i = 0; i < 4; i++) {
            log.roll(TestEntries.range(i * 10L + 1, i * 10L + 10));
        }
        ColdLog stale = newLog();
        stale.manifest();
        log.compact(1 << 30, Duration.ZERO);
        log.collectGarbage(NOW);
        TestEntries.assertSame(TestEntries.range(5, 24), stale.read(5, 20, Long.MAX_VALUE));
    }

    @Test
    void compactionWhileRollingShouldLoseAndDuplicateNothing() throws Exception {
        log.roll(TestEntries.range(1, 20));
        ColdLog roller = newLog();
        ColdLog compactor = newLog();
        ColdLog reader = newLog();
        int rolls = 12;
        CyclicBarrier start = new CyclicBarrier(3);
        AtomicBoolean done = new AtomicBoolean();
        // each roll lets the compactor and the reader go once more: they overlap the next roll, never spin
        Semaphore compactTurns = new Semaphore(0);
        Semaphore readTurns = new Semaphore(0);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            CompletableFuture<Void> rolling = CompletableFuture.runAsync(() -> {
                await(start);
                for (int i = 1; i <= rolls; i++) {
                    roller.roll(TestEntries.range(i * 20L + 1, i * 20L + 20));
                    if (i == rolls) {
                        done.set(true);
                    }
                    compactTurns.release();
                    readTurns.release();
                }
            }, pool);
            CompletableFuture<Integer> compacting = CompletableFuture.supplyAsync(() -> {
                await(start);
                int merged = 0;
                while (!done.get()) {
                    acquire(compactTurns);
                    merged += compactor.compact(12_000, Duration.ofHours(1)).merged();
                }
                return merged;
            }, pool);
            CompletableFuture<Long> reading = CompletableFuture.supplyAsync(() -> {
                await(start);
                long pages = 0;
                while (!done.get()) {
                    acquire(readTurns);
                    reader.refresh();
                    List<Entry> all = readAll(reader);
                    for (int i = 0; i < all.size(); i++) {
                        if (all.get(i).seq() != i + 1) {
                            throw new AssertionError("gap or duplicate at " + i + ": seq " + all.get(i).seq());
                        }
                    }
                    pages++;
                }
                return pages;
            }, pool);
            rolling.get(50, TimeUnit.SECONDS);
            int merged = compacting.get(50, TimeUnit.SECONDS);
            reading.get(50, TimeUnit.SECONDS);
            assertTrue(merged > 0, "compaction ran");
        } finally {
            pool.shutdownNow();
        }
        ColdLog after = newLog();
        assertEquals(rolls * 20L + 20, after.lastSeq());
        assertTrue(after.manifest().segments().size() < rolls + 1, "some segments were merged");
        TestEntries.assertSame(TestEntries.range(1, rolls * 20L + 20), readAll(after));
        after.collectGarbage(NOW.plus(Duration.ofHours(2)));
        List<ColdStore.ObjectInfo> orphans = after.orphans();
        // an abandoned merge (its run changed under it) leaves its upload behind for orphan clean-up
        after.deleteOrphans(Duration.ZERO);
        VerifyReport v = after.verify();
        assertTrue(v.ok(), v + " (orphans before clean-up: " + orphans + ")");
        assertEquals(rolls * 20L + 20, v.entries());
    }

    @Test
    void compactShouldReapplyItsSwapWhenARollCommitsMeanwhile() {
        for (int i = 0; i < 4; i++) {
            log.roll(TestEntries.range(i * 10L + 1, i * 10L + 10));
        }
        ColdLog roller = newLog();
        String mergedKey = log.segmentKey(1, 40);
        AtomicBoolean fired = new AtomicBoolean();
        store.beforePut = key -> {
            if (key.equals(mergedKey) && fired.compareAndSet(false, true)) {
                roller.roll(TestEntries.range(41, 50)); // lands between our plan and our commit
            }
        };
        Compactor.Report r = log.compact(1 << 30, Duration.ofMinutes(1));
        assertTrue(fired.get());
        assertEquals(1, r.merged());
        assertEquals(0, r.abandoned());
        assertEquals(List.of(mergedKey, log.segmentKey(41, 50)),
                newLog().manifest().segments().stream().map(SegmentMeta::key).toList());
        TestEntries.assertSame(TestEntries.range(1, 50), readAll(newLog()));
    }

    @Test
    void compactShouldGiveUpCleanlyWhenAnotherCompactorChangedItsRun() {
        for (int i = 0; i < 4; i++) {
            log.roll(TestEntries.range(i * 10L + 1, i * 10L + 10));
        }
        long each = log.manifest().segments().stream().mapToLong(SegmentMeta::bytes).max().orElseThrow();
        ColdLog rival = newLog();
        String ourKey = log.segmentKey(1, 30);
        AtomicBoolean fired = new AtomicBoolean();
        store.beforePut = key -> {
            if (key.equals(ourKey) && fired.compareAndSet(false, true)) {
                rival.compact(2 * each + 1, Duration.ofMinutes(1)); // merges 1-20 and 21-40 first
            }
        };
        Compactor.Report r = log.compact(3 * each + 2, Duration.ofMinutes(1)); // plans 1-30
        assertTrue(fired.get());
        assertEquals(0, r.merged());
        assertEquals(1, r.abandoned());
        ColdLog after = newLog();
        assertEquals(List.of(log.segmentKey(1, 20), log.segmentKey(21, 40)),
                after.manifest().segments().stream().map(SegmentMeta::key).toList());
        TestEntries.assertSame(TestEntries.range(1, 40), readAll(after));
        assertEquals(List.of(ourKey), after.orphans().stream().map(ColdStore.ObjectInfo::key).toList(),
                "the abandoned upload is left for orphan clean-up, never deleted under someone else");
    }

    @Test
    void verifyShouldDetectASegmentReplacedByDifferentValidContent() throws Exception {
        rollThree();
        SegmentMeta mid = log.manifest().segments().get(1);
        // a well-formed segment for the same range and chain start, but one entry's data differs
        List<Entry> forged = new ArrayList<>(TestEntries.range(101, 250));
        forged.set(50, new Entry(151, TestEntries.ts(151), null, "\"forged\"".getBytes()));
        Path f = tmp.resolve("forged.seg");
        try (SegmentWriter w = SegmentWriter.create(f, mid.prevChainSha256(), 1024, 3)) {
            forged.forEach(w::append);
            w.finish();
        }
        store.put(mid.key(), f);
        VerifyReport v = newLog().verify();
        assertEquals(List.of("mismatch"), v.problems().stream().map(VerifyReport.Problem::kind).toList(), v.toString());
        StrandException e = assertThrows(StrandException.class, () -> newLog().read(151, 1, Long.MAX_VALUE));
        assertEquals(ErrorCode.CORRUPT, e.code(), "never serve bytes the manifest did not commit");
    }

    @Test
    void verifyShouldFindBitFlipsAndOrphans() {
        rollThree();
        assertTrue(log.verify().ok(), log.verify().toString());
        List<SegmentMeta> segs = log.manifest().segments();
        // an orphan: an object under the log's prefix that no manifest references
        store.put(log.prefix() + "seg/00000000000000000301-00000000000000000400.seg", new byte[] {1, 2, 3});
        // one flipped bit inside a block of the middle segment
        SegmentMeta mid = segs.get(1);
        SegmentReader r = log.reader(mid);
        BlockIndex victim = r.blocks().get(2);
        flip(mid.key(), victim.offset() + victim.length() / 2);
        // and one in the trailer of the last
        SegmentMeta last = segs.get(2);
        flip(last.key(), last.bytes() - 20);

        VerifyReport v = newLog().verify();
        assertFalse(v.ok());
        assertEquals(List.of(mid.key(), last.key()), v.problems().stream().map(VerifyReport.Problem::key).toList(), v.toString());
        assertTrue(v.problems().stream().allMatch(p -> p.kind().equals("corrupt")));
        assertEquals(List.of(log.prefix() + "seg/00000000000000000301-00000000000000000400.seg"),
                v.orphans().stream().map(ColdStore.ObjectInfo::key).toList());

        // reads of damaged blocks fail loudly with the segment and range; undamaged blocks still read
        StrandException e = assertThrows(StrandException.class, () -> newLog().read(victim.firstSeq(), 1, Long.MAX_VALUE));
        assertEquals(ErrorCode.CORRUPT, e.code());
        assertEquals(mid.key(), e.extras().get("segment"));
        assertEquals(victim.firstSeq(), e.extras().get("firstSeq"));
        assertEquals("orders", e.extras().get("log"));
        TestEntries.assertSame(TestEntries.range(101, 105), newLog().read(101, 5, Long.MAX_VALUE));
        assertEquals(ErrorCode.CORRUPT, assertThrows(StrandException.class, () -> newLog().read(260, 1, Long.MAX_VALUE)).code());

        assertEquals(0, newLog().deleteOrphans(), "too young to be sure it is not an upload in flight");
        assertEquals(1, newLog().deleteOrphans(Duration.ZERO));
        assertTrue(newLog().verify().orphans().isEmpty());
    }

    @Test
    void verifyShouldReportMissingSegmentsAndBrokenManifests() {
        rollThree();
        SegmentMeta mid = log.manifest().segments().get(1);
        store.delete(mid.key());
        VerifyReport v = newLog().verify();
        assertEquals(List.of("missing"), v.problems().stream().map(VerifyReport.Problem::kind).toList());
        StrandException e = assertThrows(StrandException.class, () -> newLog().read(150, 1, Long.MAX_VALUE));
        assertEquals(ErrorCode.CORRUPT, e.code(), "a committed segment that is gone is corruption, not 'not found'");
        store.put(log.manifestKey(), "{\"format\":1,\"generation\":".getBytes());
        VerifyReport broken = newLog().verify();
        assertEquals("manifest", broken.problems().getFirst().kind());
        assertTrue(broken.orphans().isEmpty(), "without a manifest nothing may be called an orphan");
    }

    @Test
    void deleteAllShouldRemoveEveryObjectAndLetTheLogStartAgain() {
        rollThree();
        ColdLog other = new ColdLog(store, "ws1", "orders-2", new BlockCache(1 << 20), config);
        other.roll(TestEntries.range(1, 5));
        log.deleteAll();
        assertEquals(0, log.lastSeq());
        assertTrue(store.list(log.prefix()).isEmpty());
        assertEquals(0, newLog().lastSeq());
        assertEquals(5, other.refresh().lastSeq(), "a log whose name extends this one is untouched");
        List<Entry> fresh = List.of(new Entry(1, 7, null, "\"new\"".getBytes()));
        log.roll(fresh);
        TestEntries.assertSame(fresh, log.read(1, 10, Long.MAX_VALUE));
    }

    private void flip(String key, long pos) {
        byte[] b = store.get(key);
        b[(int) pos] ^= 0x04;
        store.put(key, b);
    }

    private static void acquire(Semaphore s) {
        try {
            s.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

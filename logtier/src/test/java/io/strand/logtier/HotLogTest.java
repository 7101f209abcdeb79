package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.Durability;
import io.strand.core.Entry;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class HotLogTest {
    private static final int BATCHES = 10;
    private static final int BATCH = 25;

    @TempDir
    Path dir;

    /** {@code n} small JSON entries numbered from {@code from} (shared with {@link ReadCursorsTest}). */
    static List<byte[]> data(long from, int n) {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(("{\"n\":" + (from + i) + "}").getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    private static void assertReadsExactly(HotLog hot, long from, long to, String when) {
        List<Entry> got = new ArrayList<>();
        long next = from;
        while (next <= to) {
            int before = got.size();
            next = hot.reader().read(next, to, new LogReader.Limit(1000, Long.MAX_VALUE, EntrySink.of(got::add)));
            if (got.size() == before) {
                break;
            }
        }
        assertEquals(to - from + 1, got.size(), when + ": every seq " + from + ".." + to + " readable");
        for (int i = 0; i < got.size(); i++) {
            assertEquals(from + i, got.get(i).seq(), when);
            assertEquals("{\"n\":" + (from + i) + "}", got.get(i).dataText(), when);
        }
    }

    /**
     * A batch is one excerpt plus paddings; with a clock that moves 100 ms per Chronicle call, every
     * batch of 25 spans several one-second cycles, so its paddings sit in later cycles than its
     * entries. Dropping cycles before a padding seq must keep the cycle that holds the batch itself.
     */
    @Test
    void dropCyclesBeforeShouldKeepTheBatchWhenItsPaddingsRolledIntoALaterCycle() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withRollCycle(TestRollCycles.TEST_SECONDLY);
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-01-01T00:00:00Z"))
                .autoIncrement(100, TimeUnit.MILLISECONDS);
        long last = (long) BATCHES * BATCH;
        long keepFrom = 5L * BATCH; // the last seq of batch 5: a padding, cycles after its batch's entries
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, clock)) {
            for (int b = 0; b < BATCHES; b++) {
                long first = hot.appender().append(clock.currentTimeMillis(), data(b * (long) BATCH + 1, BATCH),
                        Collections.nCopies(BATCH, null), null, 0);
                assertEquals(b * (long) BATCH + 1, first);
            }
            assertEquals(last, hot.lastSeq());
            assertTrue(hot.cycles().dropBefore(keepFrom) > 0, "older cycles dropped");
            assertTrue(hot.firstSeq() <= keepFrom && hot.firstSeq() > 1, "first stored seq " + hot.firstSeq());
            assertReadsExactly(hot, keepFrom, last, "after the drop");
            assertReadsExactly(hot, hot.firstSeq(), last, "from the first stored seq");
            hot.reader().tsOf(hot.firstSeq()); // the first stored seq leads to a whole batch, not an orphan padding
        }
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, clock)) {
            assertTrue(hot.firstSeq() <= keepFrom && hot.firstSeq() > 1, "first stored seq after reopening " + hot.firstSeq());
            assertEquals(last, hot.lastSeq());
            assertReadsExactly(hot, hot.firstSeq(), last, "after reopening");
            hot.reader().tsOf(hot.firstSeq());
        }
    }

    /**
     * A reader that saw the hot part start at an older seq asks for it after a roll dropped its cycle
     * file: the hot part must deliver nothing (the caller then reads the seq cold), never the seqs
     * after the dropped ones as if they were the ones asked for.
     */
    @Test
    void readOfASeqWhoseCycleWasDroppedShouldDeliverNothingRatherThanLaterSeqs() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withRollCycle(TestRollCycles.TEST_SECONDLY);
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-01-01T00:00:00Z"))
                .autoIncrement(100, TimeUnit.MILLISECONDS);
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, clock)) {
            for (int b = 0; b < BATCHES; b++) {
                hot.appender().append(clock.currentTimeMillis(), data(b * (long) BATCH + 1, BATCH), Collections.nCopies(BATCH, null), null, 0);
            }
            long staleFirst = hot.firstSeq();
            assertTrue(hot.cycles().dropBefore(5L * BATCH) > 0, "older cycles dropped");
            assertTrue(hot.firstSeq() > staleFirst, "the first stored seq moved to " + hot.firstSeq());
            List<Entry> got = new ArrayList<>();
            assertEquals(staleFirst, hot.reader().read(staleFirst, hot.lastSeq(), new LogReader.Limit(10, Long.MAX_VALUE, EntrySink.of(got::add))));
            assertEquals(List.of(), got, "nothing delivered for a seq the hot part no longer holds");
            String dropped = hot.describe(staleFirst);
            assertTrue(dropped.startsWith("hot first " + hot.firstSeq() + ", last " + hot.lastSeq()), dropped);
            assertTrue(dropped.endsWith("a new tailer moves there: no index") || dropped.endsWith("a new tailer moves there: false"), dropped);
            String held = hot.describe(hot.lastSeq());
            assertTrue(held.endsWith("a new tailer moves there: true"), held);
        }
    }

    /**
     * One append is one Chronicle excerpt, and Chronicle writes an excerpt of at most a quarter of its
     * block: with the default block a batch at both limits (1,000 entries, 4 MiB of data) is stored and
     * reads back; with a block whose quarter is smaller than a batch, the batch is refused
     * {@code too_large} before anything is written, and the log takes the next append as before.
     */
    @Test
    void aBatchAtTheLimitsShouldBeStoredAndOneTooBigForTheBlockRefusedWithNothingWritten() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS);
        int size = config.maxBatchBytes() / config.maxBatchEntries();
        byte[] entry = ("\"" + "x".repeat(size - 2) + "\"").getBytes(StandardCharsets.UTF_8);
        List<byte[]> full = Collections.nCopies(config.maxBatchEntries(), entry);
        try (HotLog hot = HotLog.open(dir.resolve("full"), config, null)) {
            LogAppender.check(new AppendRequest(full, Collections.nCopies(full.size(), null), null, null, null, null), config);
            assertEquals(1, hot.appender().append(1L, full, Collections.nCopies(full.size(), null), null, 0));
            List<Entry> got = new ArrayList<>();
            hot.reader().read(1, 1000, new LogReader.Limit(1000, Long.MAX_VALUE, EntrySink.of(got::add)));
            assertEquals(1000, got.size());
            assertEquals(size, got.get(999).data().length);
        }
        LogConfig d = LogConfig.defaults(dir, Durability.OS);
        LogConfig small = new LogConfig(d.dataDir(), d.durability(), d.rollCycle(), 1 << 20, d.idleClose(), d.maxOpenLogs(),
                64 << 10, 10, 64 << 10, d.hot());
        List<byte[]> keyed = Collections.nCopies(10, data(1, 1).getFirst());
        List<String> bigKeys = Collections.nCopies(10, "k".repeat(40_000)); // keys are outside the data limit
        try (HotLog hot = HotLog.open(dir.resolve("small"), small, null)) {
            io.strand.core.StrandException e = org.junit.jupiter.api.Assertions.assertThrows(io.strand.core.StrandException.class,
                    () -> hot.appender().append(1L, keyed, bigKeys, null, 0));
            assertEquals(io.strand.core.ErrorCode.TOO_LARGE, e.code(), e.getMessage());
            assertEquals(0, hot.lastSeq(), "nothing written");
            assertEquals(1, hot.appender().append(2L, data(1, 3), Collections.nCopies(3, null), null, 0));
            assertReadsExactly(hot, 1, 3, "after the refusal");
        }
    }

    /** The bytes a cycle file takes on disk, not its length: Chronicle extends it past what it wrote. */
    @Test
    void hotBytesShouldCountWhatTheCycleFileHoldsNotItsLength() throws java.io.IOException {
        LogConfig config = LogConfig.defaults(dir, Durability.OS);
        try (HotLog hot = HotLog.open(dir.resolve("sparse"), config, null)) {
            hot.appender().append(1L, data(1, 3), Collections.nCopies(3, null), null, 0);
            long length = 0;
            try (var files = java.nio.file.Files.list(dir.resolve("sparse"))) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    if (f.toString().endsWith(".cq4")) {
                        length += java.nio.file.Files.size(f);
                    }
                }
            }
            long onDisk = hot.cycles().diskBytes();
            assertTrue(onDisk > 0, "the file holds the entries");
            if (System.getProperty("os.name").startsWith("Linux")) {
                assertTrue(onDisk < length / 8, onDisk + " bytes on disk against a length of " + length);
            }
        }
    }

    /**
     * The creation time is the first batch's ts (so every replica of a cluster agrees on it), kept in
     * the queue's own metadata file across a reopen, and taken from seq 1 when that unforced value was
     * lost (here overwritten as a crash would leave it).
     */
    @Test
    void createdShouldBeTheFirstBatchsTsKeptByTheQueue() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS);
        long firstTs = 1_767_225_600_123L;
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, null)) {
            assertEquals(0, hot.created(), "no entry yet, no creation time");
            hot.appender().append(firstTs, data(1, 2), Collections.nCopies(2, null), null, 0);
            hot.appender().append(firstTs + 9_000, data(3, 1), Collections.nCopies(1, null), null, 0);
            assertEquals(firstTs, hot.created());
        }
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, null)) {
            assertEquals(firstTs, hot.created(), "kept in the queue's metadata file");
            hot.queue.tableStorePut(HotLog.CREATED_KEY, Long.MIN_VALUE);
        }
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, null)) {
            assertEquals(firstTs, hot.created(), "the stored value lost: seq 1's ts");
        }
    }

    /**
     * A closed log's queue is garbage at the next collection. Chronicle's queue, mapped-file and
     * file classes declare {@code finalize()}; with finalization on (the JDK's default) every closed
     * queue, with what it references, outlived one collection, waited for the finalizer thread and
     * went only at a later one: under {@code many-logs} the heap after a young collection held
     * 500–570 MiB instead of 150–170 MiB. {@code strand.jvmFlags} (which the tests run with) turns
     * finalization off; without it this test fails: one collection enqueues no queue's reference.
     */
    @Test
    void aClosedLogsQueueIsReclaimedByOneCollection() throws InterruptedException {
        ReferenceQueue<Object> reclaimed = new ReferenceQueue<>();
        List<PhantomReference<Object>> queues = openAndClose(20, reclaimed);
        // Chronicle may hand a closed resource to its releaser thread; wait until that let go of them all
        BackgroundResourceReleaser.releasePendingResources();
        System.gc(); // one full collection, and no other: nothing else allocates here
        for (int i = 0; i < queues.size(); i++) {
            assertTrue(reclaimed.remove(5_000) != null,
                    (queues.size() - i) + " of " + queues.size() + " closed queues still held after one collection"
                            + " (is finalization on? strand.jvmFlags has --finalization=disabled)");
        }
    }

    /** Opens, appends to and closes {@code n} logs; in a method of its own so that no frame of the test still refers to one. */
    private List<PhantomReference<Object>> openAndClose(int n, ReferenceQueue<Object> reclaimed) {
        LogConfig config = LogConfig.defaults(dir, Durability.OS);
        List<PhantomReference<Object>> queues = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            try (HotLog hot = HotLog.open(dir.resolve("q" + i), config, null)) {
                hot.appender().append(System.currentTimeMillis(), data(1, 1), Collections.nCopies(1, null), null, 0);
                queues.add(new PhantomReference<>(hot.queue, reclaimed));
            }
        }
        return queues;
    }
}

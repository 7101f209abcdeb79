package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.Durability;
import io.strand.core.Entry;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pooled read cursors ({@link ReadCursors}): sequential readers continue without seeking and read
 * exactly. Reads racing the reaper's idle close are in {@link LogStoreTest}.
 */
@Timeout(60)
class ReadCursorsTest {
    @TempDir
    Path dir;

    /** Appends batches of the given sizes; returns the last seq. */
    private static long append(HotLog hot, SetTimeProvider clock, int... sizes) {
        for (int n : sizes) {
            long first = hot.lastSeq() + 1;
            hot.appender().append(clock.currentTimeMillis(), HotLogTest.data(first, n), Collections.nCopies(n, null), null, 0);
        }
        return hot.lastSeq();
    }

    /** One reader paging forward with its own limit, checking every entry it gets. */
    private static final class Reader {
        final int limit;
        final long maxBytes;
        long next = 1;

        Reader(int limit, long maxBytes) {
            this.limit = limit;
            this.maxBytes = maxBytes;
        }

        /** Reads one page up to {@code to}; returns how many entries it got. */
        int page(HotLog hot, long to) {
            List<Entry> got = new ArrayList<>();
            long after = hot.reader().read(next, to, new LogReader.Limit(limit, maxBytes, EntrySink.of(got::add)));
            for (int i = 0; i < got.size(); i++) {
                assertEquals(next + i, got.get(i).seq(), "seq of a page from " + next);
                assertEquals("{\"n\":" + (next + i) + "}", got.get(i).dataText(), "data of seq " + (next + i));
            }
            assertEquals(next + got.size(), after, "cursor after a page from " + next);
            next = after;
            return got.size();
        }
    }

    private static SetTimeProvider clock() {
        return new SetTimeProvider(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Test
    void interleavedSequentialPagesShouldEachContinueWithoutSeeking() {
        SetTimeProvider clock = clock();
        try (HotLog hot = HotLog.open(dir.resolve("q"), LogConfig.defaults(dir, Durability.OS), clock)) {
            long last = append(hot, clock, 7, 1, 13, 25, 2, 40, 1, 1, 9, 30);
            List<Reader> readers = List.of(new Reader(5, Long.MAX_VALUE), new Reader(3, Long.MAX_VALUE),
                    new Reader(11, Long.MAX_VALUE), new Reader(100, 150)); // the last one is cut by bytes (weight ≥ 48 each)
            boolean progress = true;
            while (progress) {
                progress = false;
                for (Reader r : readers) {
                    progress |= r.page(hot, last) > 0;
                }
            }
            for (Reader r : readers) {
                assertEquals(last + 1, r.next, "every reader read to the end");
            }
            assertEquals(readers.size(), hot.cursors().seeks(), "each reader seeks once, on its first page");
            assertEquals(readers.size(), hot.cursors().created(), "each reader keeps its own tailer");
            assertTrue(hot.cursors().idleCount() <= ReadCursors.MAX_IDLE);
        }
    }

    /**
     * Pages of a large batch resume where the last one stopped inside it (its header and checksum
     * kept by the cursor); pages cut by {@code toSeq}, by bytes and by count, and a second reader
     * stopped elsewhere in the same batch, all get exactly their entries.
     */
    @Test
    void pagesOfALargeBatchShouldResumeAtTheirEntryWhenReadersStopAtDifferentPlacesInIt() {
        SetTimeProvider clock = clock();
        try (HotLog hot = HotLog.open(dir.resolve("q"), LogConfig.defaults(dir, Durability.OS), clock)) {
            long last = append(hot, clock, 1000, 1, 250, 1000);
            Reader hundreds = new Reader(100, Long.MAX_VALUE);
            Reader sevens = new Reader(7, 5 * 48 + 1); // cut by bytes after five entries
            Reader toSeq = new Reader(1000, Long.MAX_VALUE);
            boolean progress = true;
            long cut = 0;
            while (progress) {
                progress = hundreds.page(hot, last) > 0;
                progress |= sevens.page(hot, last) > 0;
                cut = Math.min(last, cut + 333); // stops inside batches at 333, 666, 999, 1332, …
                progress |= toSeq.page(hot, cut) > 0;
            }
            for (Reader r : List.of(hundreds, sevens, toSeq)) {
                assertEquals(last + 1, r.next, "every reader read to the end");
            }
            assertEquals(3, hot.cursors().seeks(), "each reader seeks once, on its first page");
        }
    }

    @Test
    void aPageCutInsideABatchShouldContinueAtTheNextEntryOfThatBatch() {
        SetTimeProvider clock = clock();
        try (HotLog hot = HotLog.open(dir.resolve("q"), LogConfig.defaults(dir, Durability.OS), clock)) {
            long last = append(hot, clock, 50, 3, 50);
            Reader byCount = new Reader(7, Long.MAX_VALUE);
            while (byCount.page(hot, last) > 0) {
                // each page stops inside a batch and the next continues right after it
            }
            Reader byBytes = new Reader(1000, 3 * 48 + 1); // three entries' weight: the fourth passes the limit
            int pages = 0;
            while (byBytes.page(hot, last) > 0) {
                pages++;
            }
            assertEquals(last + 1, byCount.next);
            assertEquals(last + 1, byBytes.next);
            assertTrue(pages > 20, "pages were cut by bytes: " + pages);
            Reader upTo = new Reader(1000, Long.MAX_VALUE); // a page cut by toSeq (a backward page's end) inside a batch
            assertEquals(20, upTo.page(hot, 20));
            assertEquals(last - 20, upTo.page(hot, last));
            assertEquals(3, hot.cursors().seeks(), "one seek per reader, none to continue");
        }
    }

    /**
     * Every second of the clock is a new cycle file; batches, reads stopped inside them and a reader
     * waiting at the head all cross cycle files, and dropping older cycles closes idle cursors.
     */
    @Test
    void pagesShouldContinueAcrossRollCyclesAndWhileTailingTheHead() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withRollCycle(TestRollCycles.TEST_SECONDLY);
        SetTimeProvider clock = clock();
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, clock)) {
            Reader paging = new Reader(4, Long.MAX_VALUE);
            Reader tailing = new Reader(1000, Long.MAX_VALUE);
            long last = 0;
            for (int cycle = 0; cycle < 12; cycle++) {
                last = append(hot, clock, 5, 1 + cycle % 3, 9);
                paging.page(hot, last); // falls further behind: always reads from an older cycle
                while (tailing.page(hot, last) > 0) {
                    // reads up to the head, then waits there while the queue rolls
                }
                assertEquals(last + 1, tailing.next);
                clock.advanceMillis(1000);
            }
            while (paging.page(hot, last) > 0) {
                // the rest, crossing every cycle file
            }
            assertEquals(last + 1, paging.next);
            assertEquals(2, hot.cursors().seeks(), "both readers followed every roll without seeking again");
            assertTrue(hot.cursors().idleCount() > 0);
            assertTrue(hot.cycles().dropBefore(last - 10) > 0, "older cycles dropped");
            assertEquals(0, hot.cursors().idleCount(), "idle cursors closed with the dropped cycles");
            Reader afterDrop = new Reader(3, Long.MAX_VALUE);
            afterDrop.next = hot.firstSeq();
            while (afterDrop.page(hot, last) > 0) {
                // reads what is left
            }
            assertEquals(last + 1, afterDrop.next);
        }
    }
}

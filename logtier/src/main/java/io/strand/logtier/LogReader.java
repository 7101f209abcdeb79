package io.strand.logtier;

import io.strand.core.Entry;

/**
 * Stateless, so thread-safe (a read runs on its caller's thread): every read of one open log —
 * forward and backward pages, pages from a time, subscription chunks — across its cold and hot
 * parts, and the one place that counts a page's limits ({@link Limit}). Readers see entries up to
 * the committed head only, so nothing undurable is ever served.
 *
 * <p>Both sides stream into the page's {@link Limit}: the hot queue from its pooled cursors
 * ({@link HotReader}), the cold segments block by block ({@link ColdPart}). Each pass of a read
 * views the hot/cold boundary once (the hot queue's first stored seq): seqs below it are read
 * cold, the rest hot. A roll drops hot files only after the manifest that holds their entries is
 * committed, so when the hot side finds the next seq's files gone the next pass finds it cold.
 */
final class LogReader {
    /** Passes that moved nothing before a read gives up with a short page (never a skipped seq). */
    private static final int MAX_IDLE_PASSES = 3;

    private LogReader() {
    }

    /**
     * Forward from {@code from} (at least 1) up to the head: a {@code gap} when {@code from} lies
     * below the log's first retained seq, whose page then starts at first.
     */
    static PageInfo forward(Log log, long from, int maxEntries, long maxBytes, EntrySink sink) {
        long first = log.first();
        long head = log.head();
        Page.Gap gap = null;
        long start = from;
        if (from < first && first > 1) {
            gap = new Page.Gap(from, first - 1);
            start = first;
        }
        Limit limit = new Limit(maxEntries, maxBytes, sink);
        long next = read(log, start, head, limit);
        return new PageInfo(limit.count(), Math.max(next, start), 0, first, head, gap);
    }

    /** Forward from the first retained entry with ts ≥ {@code ts}. */
    static PageInfo fromTime(Log log, long ts, int maxEntries, EntrySink sink) {
        return forward(log, log.seqAtOrAfter(ts), maxEntries, Long.MAX_VALUE, sink);
    }

    /** Up to {@code maxEntries} entries ending before {@code before} (Long.MAX_VALUE = after the head), ascending. */
    static PageInfo backward(Log log, long before, int maxEntries, EntrySink sink) {
        long head = log.head();
        long end = Math.min(before, head + 1);
        long first = log.first();
        long start = Math.max(first, end - maxEntries);
        long next = end;
        long firstRead = -1;
        Limit limit = new Limit(maxEntries, Long.MAX_VALUE, sink);
        if (start < end) {
            long after = read(log, start, end - 1, limit);
            if (limit.count() > 0) {
                next = after;
                firstRead = limit.firstSeq();
            }
        }
        long prev = limit.count() == 0 ? Math.min(start, end) : firstRead;
        return new PageInfo(limit.count(), next, prev, first, head, null);
    }

    /** A page of a log that does not exist: nothing, head 0. */
    static PageInfo emptyPage(long from) {
        return new PageInfo(0, Math.max(from, 1), 0, 1, 0, null);
    }

    /**
     * True when a forward read from {@code from} needs nothing but the open log's newest hot cycle
     * file (which the writer holds mapped) and cold bounds already in memory: no file to open, no
     * object-store round trip. Such a read may run on a socket's own thread.
     */
    static boolean readsInPlace(Log log, long from) {
        HotLog hot = log.hot();
        long hotFirst = hot.firstSeq();
        return hotFirst > 0 && from >= hotFirst && (hotFirst == 1 || log.cold().inMemory()) && hot.inNewestCycle(from);
    }

    /**
     * Entries {@code from ≤ seq ≤ min(toSeq, head)} across cold and hot, in order, into {@code limit}
     * while it takes them; returns the next seq. The first entry delivered is always {@code from}
     * itself (or nothing is): the hot side never serves a later seq instead (see {@link HotReader#read}).
     */
    private static long read(Log log, long from, long toSeq, Limit limit) {
        HotLog hot = log.hot();
        ColdPart cold = log.cold();
        long upTo = Math.min(toSeq, log.head());
        long next = from;
        int idle = 0;
        while (next <= upTo && limit.wantsMore()) {
            long before = next;
            long hotFirst = hot.firstSeq(); // the boundary, as this pass sees it
            if (hotFirst == 0 || next < hotFirst) {
                long coldLast = cold.lastSeq();
                if (coldLast < next) {
                    break; // on neither side: not written, or trimmed (the caller's first and gap say so)
                }
                next = cold.read(next, Math.min(upTo, coldLast), limit);
            }
            if (hotFirst != 0 && next >= hotFirst && next <= upTo && limit.wantsMore()) {
                next = hot.reader().read(next, upTo, limit);
            }
            if (next == before && ++idle >= MAX_IDLE_PASSES) {
                break; // neither side moved: a short page, never a skipped seq
            }
        }
        return next;
    }

    /**
     * Used by one reading thread: one page's limits, counted as entries pass to its sink, the only
     * count of page limits in the log tier. A page takes entries while it holds fewer than
     * {@code maxEntries} and less than {@code maxBytes} of {@link Entry#weight}: it ends at the
     * entry that reaches either, so its last entry may pass {@code maxBytes}, and its first entry
     * is always taken, whatever its size.
     */
    static final class Limit implements EntrySink {
        private final int maxEntries;
        private final long maxBytes;
        private final EntrySink sink;
        private int count;
        private long bytes;
        private long firstSeq = -1;

        Limit(int maxEntries, long maxBytes, EntrySink sink) {
            this.maxEntries = maxEntries;
            this.maxBytes = maxBytes;
            this.sink = sink;
        }

        /** True while the page takes another entry: a reader asks before each entry and before it fetches more. */
        boolean wantsMore() {
            return count < maxEntries && (count == 0 || bytes < maxBytes);
        }

        /** Counts the entry and hands it to the sink; the reader asked {@link #wantsMore} first. */
        @Override
        public void entry(long seq, long ts, String key, byte[] data, int offset, int length) {
            if (count++ == 0) {
                firstSeq = seq;
            }
            bytes += Entry.weight(length, key);
            sink.entry(seq, ts, key, data, offset, length);
        }

        int count() {
            return count;
        }

        /** The seq of the first entry taken, -1 before one is. */
        long firstSeq() {
            return firstSeq;
        }
    }
}

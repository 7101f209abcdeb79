package io.strand.logtier;

import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.bytes.MappedBytesStore;

/**
 * Owned by the log's writer thread (one per {@link HotAppender}): before an append, gives a chunk the
 * appender has not written into yet {@link NoReadAround}'s advice, and maps the pages of
 * the cycle file it is about to write, and as many again beyond them, in one
 * {@code madvise(MADV_POPULATE_WRITE)} call, instead of taking one page fault per page as the copy
 * first touches each.
 *
 * <p><b>Why.</b> A write fault on this VM costs far more than the work it does: under {@code strand
 * bench --cluster 3 append-batched} (2026-12-03, {@code perf}, three nodes) page faults were 39 % of
 * the replicas' store-writer threads, and most of that was the fault's entry into the kernel, not the
 * zeroing and block reservation it does. One call populates many pages with a single entry. The
 * kernel does the same per-page work as the faults would (a zeroed page-cache page, the file
 * system's block reservation, a writable, dirty page-table entry).
 *
 * <p><b>How much.</b> The pages of this append (its excerpt and its paddings, as
 * {@link HotAppender} claims them) and after them the larger of the same number of bytes again and
 * a sixteenth of what this appender has written into the cycle file so far ({@link #AHEAD_SHARE}),
 * at most {@link #AHEAD_MAX}: a log that writes large batches, or has written much this cycle,
 * populates in large steps, a small log one page at a time, so an idle or small log is never given pages it does not write soon
 * (100,000 small logs must not hold 100,000 × a fixed read-ahead of page cache), and no log holds
 * more than a sixteenth more than it wrote. The share: one-entry appends of about 330 B (32 in
 * flight, {@code strand bench append-concurrent}) made one call per page written, one per group,
 * 6 % of the server's {@code perf} samples (2026-12-05); with the share a busy log makes one call
 * per 64 pages. Pages beyond the write that are populated and then not written (the
 * hour turns, the log is closed) stay zero on disk: Chronicle reads zero as "nothing written", exactly
 * as it reads a hole.
 *
 * <p><b>Limits.</b> Only within the mapped chunk the append starts in (Chronicle maps the next chunk
 * when the write crosses into it; those pages fault as before). A kernel without
 * {@code MADV_POPULATE_WRITE} (before Linux 5.14) refuses every call; after {@link #GIVE_UP_AFTER}
 * refusals with no success the calls stop, and the faults happen as before. A refused range is not
 * retried.
 */
final class PrefaultAhead {
    /** Linux's {@code MADV_POPULATE_WRITE} (5.14+). */
    static final int MADV_POPULATE_WRITE = 23;
    /**
     * The most populated beyond an append's own pages: bounds the page cache and disk blocks a log
     * holds ahead of its writes (a 1 MiB batch would otherwise take 1 MiB more).
     */
    static final long AHEAD_MAX = 256 << 10;
    /** Beyond an append's own pages, at least what this appender wrote into the cycle file divided by this is populated. */
    static final int AHEAD_SHARE = 16;
    /** Refusals, with none accepted, after which no more calls are made (an old kernel). */
    static final int GIVE_UP_AFTER = 16;
    private static final long PAGE = QueueFilePrefill.PAGE;
    private static final AtomicLong POPULATED = new AtomicLong();
    private static final AtomicLong REFUSED = new AtomicLong();
    /** Set once {@link #GIVE_UP_AFTER} calls were refused and none accepted: one read per append after that. */
    private static volatile boolean gaveUp;

    /**
     * The mapped chunk the appender writes into, given {@link NoReadAround}'s advice when it became
     * this one; {@code populatedTo} is a file offset in it.
     */
    private MappedBytesStore chunk;
    private long populatedTo;
    /** File offset of the first write this appender saw in its current cycle file; -1 before the first. */
    private long firstPosition = -1;
    /** File offset just past the last write this appender was told of. */
    private long lastEnd;

    /**
     * Before {@code bytes} are written at file offset {@code position} into {@code store} (the mapped
     * chunk the appender's write position is in): a chunk not seen before gets {@link NoReadAround}'s
     * advice; then populates what of the bytes, and of as many again after them or a sixteenth of
     * what was written into this cycle file since this appender's first write to it, if more (at
     * most {@link #AHEAD_MAX}), is not populated yet. Anything other than a mapped chunk is left alone.
     */
    void before(BytesStore<?, ?> store, long position, long bytes) {
        if (!(store instanceof MappedBytesStore mapped)) {
            return;
        }
        if (mapped != chunk) {
            chunk = mapped;
            populatedTo = 0;
            NoReadAround.advise(mapped);
            if (firstPosition < 0 || mapped.start() == 0) { // the first write, or a cycle file's first chunk
                firstPosition = position;
            }
        }
        lastEnd = position + bytes;
        if (gaveUp) {
            return;
        }
        long end = position + bytes;
        if (end <= populatedTo) {
            return;
        }
        long from = Math.max(populatedTo, position) & -PAGE;
        long ahead = Math.min(AHEAD_MAX, Math.max(bytes, (position - firstPosition) / AHEAD_SHARE));
        // not past the chunk's safe limit: from there on Chronicle writes through the next chunk's mapping
        long to = Math.min(roundUp(end + ahead), mapped.safeLimit() & -PAGE);
        if (to <= from) {
            return;
        }
        int rc = NoReadAround.madvise(mapped.address + (from - mapped.start()), to - from, MADV_POPULATE_WRITE);
        if (rc == 0) {
            POPULATED.incrementAndGet();
        } else if (REFUSED.incrementAndGet() >= GIVE_UP_AFTER && POPULATED.get() == 0) {
            gaveUp = true;
        }
        populatedTo = to; // refused: not retried, the faults happen as before
    }

    private static long roundUp(long offset) {
        return (offset + PAGE - 1) & -PAGE;
    }

    /** The chunk the last append wrote into, as advised; null before the first (tests). */
    MappedBytesStore chunk() {
        return chunk;
    }

    /** File offsets: just past the last write, and how far the chunk is populated (tests). */
    long lastEnd() {
        return lastEnd;
    }

    long populatedTo() {
        return populatedTo;
    }

    /** Calls the kernel accepted so far (tests). */
    static long populated() {
        return POPULATED.get();
    }

    /** Calls the kernel refused so far (tests). */
    static long refused() {
        return REFUSED.get();
    }
}

package io.strand.logtier;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

/**
 * Thread-safe: a cursor is used by one thread between {@link #borrow} and {@link #giveBack}; the
 * pool's lock guards only the idle list. The read cursors of one hot queue: a few tailers kept open
 * between reads, each positioned where its last read ended, so a sequential reader (the next page,
 * a subscription's next chunk) continues where it stopped instead of creating a tailer, mapping the
 * cycle file's blocks, seeking with {@code moveToIndex} and closing it all again for every read.
 *
 * <p>The lock is never held while a tailer is created or closed. Cursors are closed when the pool is (with the log), when more than {@link #MAX_IDLE} are idle, when a reader gives
 * one back in an unknown state, and when {@link #invalidate} says older cycle files went away.
 */
final class ReadCursors implements AutoCloseable {
    /** Idle cursors kept per log: a few concurrent sequential readers keep their places. */
    static final int MAX_IDLE = 4;
    /** Tailers the pools of this JVM hold open (idle or borrowed); tests check it returns to zero. */
    private static final AtomicInteger OPEN = new AtomicInteger();

    /**
     * One tailer and the seq it delivers next. {@link HotLog} keeps this invariant between reads: the
     * tailer's next ENTRIES excerpt is the batch that holds {@code nextSeq}; only paddings of batches
     * already delivered may lie before it. {@code nextSeq} is -1 when the position is not known.
     */
    static final class Cursor {
        final ExcerptTailer tailer;
        long nextSeq = -1;
        /** The entry data of the last read, reused: an entry's bytes are copied here on their way to a sink. */
        byte[] scratch = new byte[512];
        /**
         * Where the last read stopped inside a batch, so the next page of that batch resumes there
         * ({@link HotReader}): the queue index of its ENTRIES excerpt (-1: none), its header (its
         * checksum already verified), the seq it stopped at and that entry's byte position in the
         * excerpt. Excerpts are immutable once written, so index + seq name the same bytes.
         */
        long batchIndex = -1;
        HotExcerptCodec.Header batchHeader;
        long batchNextSeq;
        long batchPosition;
        private long generation;

        private Cursor(ExcerptTailer tailer, long generation) {
            this.tailer = tailer;
            this.generation = generation;
        }
    }

    private final SingleChronicleQueue queue;
    /** Most recently given back first. */
    private final ArrayDeque<Cursor> idle = new ArrayDeque<>();
    private long generation;
    private boolean closed;
    private final LongAdder created = new LongAdder();
    private final LongAdder seeks = new LongAdder();

    ReadCursors(SingleChronicleQueue queue) {
        this.queue = queue;
    }

    /**
     * A cursor for a read starting at {@code seq}: one that stopped exactly there when there is one;
     * else a new one, so the idle cursors of other sequential readers keep their places; once
     * {@link #MAX_IDLE} are idle, the one unused the longest (the caller repositions it).
     */
    Cursor borrow(long seq) {
        long gen;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the log's queue is closed: " + queue.file());
            }
            for (Iterator<Cursor> it = idle.iterator(); it.hasNext(); ) {
                Cursor c = it.next();
                if (c.nextSeq == seq) {
                    it.remove();
                    return c;
                }
            }
            if (idle.size() >= MAX_IDLE) {
                return idle.pollLast();
            }
            gen = generation;
        }
        ExcerptTailer tailer = queue.createTailer();
        tailer.singleThreadedCheckDisabled(true); // one thread at a time, handed over under this pool's lock
        OPEN.incrementAndGet();
        created.increment();
        return new Cursor(tailer, gen);
    }

    /**
     * Returns a borrowed cursor. With {@code reusable} false (the read failed part-way, so the tailer's
     * position is not known) it is closed, as it is when the pool has closed, older cycles were
     * dropped since it was borrowed, or enough cursors are idle already.
     */
    void giveBack(Cursor cursor, boolean reusable) {
        Cursor evicted;
        synchronized (this) {
            if (!reusable || closed || cursor.generation != generation) {
                evicted = cursor;
            } else {
                idle.addFirst(cursor);
                evicted = idle.size() > MAX_IDLE ? idle.pollLast() : null;
            }
        }
        if (evicted != null) {
            closeTailer(evicted);
        }
    }

    /**
     * Closes the idle cursors and marks borrowed ones to be closed when given back: cycle files were
     * dropped, and a tailer left on one would keep the deleted file mapped.
     */
    void invalidate() {
        List<Cursor> dropped;
        synchronized (this) {
            generation++;
            dropped = new ArrayList<>(idle);
            idle.clear();
        }
        dropped.forEach(ReadCursors::closeTailer);
    }

    /** Counts a read that had to position its cursor with a seek ({@code moveToIndex}) instead of continuing. */
    void sought() {
        seeks.increment();
    }

    /** Reads that had to seek (for tests: a sequential reader seeks once). */
    long seeks() {
        return seeks.sum();
    }

    /** Tailers this pool created (for tests). */
    long created() {
        return created.sum();
    }

    /** Idle cursors (for tests). */
    synchronized int idleCount() {
        return idle.size();
    }

    /** Tailers open in every pool of this JVM, idle or borrowed (for leak checks). */
    static int openTailers() {
        return OPEN.get();
    }

    private static void closeTailer(Cursor c) {
        try {
            c.tailer.close();
        } finally {
            OPEN.decrementAndGet();
        }
    }

    /** Closes every idle cursor; cursors still borrowed are closed when given back. Call before closing the queue. */
    @Override
    public void close() {
        List<Cursor> dropped;
        synchronized (this) {
            closed = true;
            dropped = new ArrayList<>(idle);
            idle.clear();
        }
        dropped.forEach(ReadCursors::closeTailer);
    }
}

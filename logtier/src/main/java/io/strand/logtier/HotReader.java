package io.strand.logtier;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Thread-safe: each read borrows a cursor from the log's {@link ReadCursors} and is its only user
 * until it gives it back. The read side of one hot queue: pages of entries, the ts of a seq, and
 * the check of a stored batch during write-ahead replay. A sequential reader continues where its
 * last read stopped, without a seek. The page limits are the caller's ({@link LogReader.Limit}).
 */
final class HotReader {
    private static final System.Logger LOG = System.getLogger(HotLog.class.getName());
    private final HotLog hot;
    private final ReadCursors cursors;

    HotReader(HotLog hot, ReadCursors cursors) {
        this.hot = hot;
        this.cursors = cursors;
    }

    /**
     * Reads entries with {@code fromSeq ≤ seq ≤ toSeq} in order into {@code limit} while it takes
     * them, on a pooled cursor: one left exactly at {@code fromSeq} by an earlier read continues
     * without a seek. Any thread; {@code toSeq} must not pass the last seq written. The first entry
     * delivered is {@code fromSeq} or there is none: a seq whose cycle file a roll dropped (below
     * {@link HotLog#firstSeq()}, which may move during the call) is not here any more, and the
     * caller must read it from the cold tier rather than get later seqs.
     * @return the seq after the last entry delivered ({@code fromSeq} when none was)
     */
    long read(long fromSeq, long toSeq, LogReader.Limit limit) {
        long first = hot.firstSeq();
        if (fromSeq > toSeq || first == 0 || fromSeq < first) {
            return fromSeq;
        }
        ReadCursors.Cursor cursor = cursors.borrow(fromSeq);
        boolean known = false;
        try {
            long next = read(cursor, fromSeq, toSeq, limit);
            known = true;
            return next;
        } finally {
            cursors.giveBack(cursor, known);
        }
    }

    /**
     * The read loop on one cursor. Keeps the cursor's invariant ({@link ReadCursors.Cursor}): a read
     * that stops inside a batch leaves that batch's excerpt unread ({@code rollbackOnClose}), so the
     * next read from {@code cursor.nextSeq} finds it again. That read resumes at the byte position
     * where the last one stopped, with the header (and checksum) it already checked, instead of
     * verifying the whole excerpt again and skipping the entries delivered before: pages of 100 over
     * batches of 1,000 (the bench's read-pagination) otherwise checksummed each 300 KB excerpt ten
     * times and skipped 4,500 entries per batch. Server CPU per entry of {@code ./strand bench
     * --warmup 10 read-pagination} (fsync, 2 shared cores, 5 runs each): 1.76 → 1.48 µs (means).
     */
    private long read(ReadCursors.Cursor cursor, long from, long toSeq, LogReader.Limit limit) {
        ExcerptTailer tailer = cursor.tailer;
        if (cursor.nextSeq != from) {
            cursor.nextSeq = -1;
            cursors.sought();
            if (hot.moveTo(tailer, from) == null) {
                return from;
            }
            cursor.nextSeq = from;
        }
        long next = from;
        boolean sought = false;
        reading:
        while (next <= toSeq && limit.wantsMore()) {
            boolean present;
            try (DocumentContext dc = tailer.readingDocument()) {
                present = dc.isPresent();
                if (present) {
                    Bytes<?> in = dc.wire().bytes();
                    long index = dc.index();
                    // the batch the last read stopped inside: resume at its entry, its checksum already checked
                    boolean resumed = index == cursor.batchIndex && next == cursor.batchNextSeq;
                    HotExcerptCodec.Header h = resumed ? cursor.batchHeader : hot.header(dc, next);
                    if (resumed) {
                        in.readPosition(cursor.batchPosition);
                    }
                    cursor.batchIndex = -1;
                    if (h.kind() == HotExcerptCodec.PADDING || h.lastSeq() < next) {
                        continue; // a padding, or a batch delivered before
                    }
                    if (h.firstSeq() > next) {
                        // A roll dropped the cycle file under this tailer and Chronicle moved it on to a
                        // later one: seek the seq once through the index (below); after a seek, corrupt.
                        if (sought) {
                            throw hot.corrupt(next, "a read found seqs " + h.firstSeq() + ".." + h.lastSeq() + " where this seq belongs");
                        }
                        dc.rollbackOnClose();
                        present = false;
                    }
                    for (int i = resumed ? (int) (next - h.firstSeq()) : 0; present && i < h.count(); i++) {
                        long seq = h.firstSeq() + i;
                        if (seq < next) {
                            HotExcerptCodec.skipEntry(in);
                        } else if (seq > toSeq || !limit.wantsMore()) {
                            dc.rollbackOnClose(); // the rest of this batch is for the next read
                            cursor.batchIndex = index;
                            cursor.batchHeader = h;
                            cursor.batchNextSeq = seq;
                            cursor.batchPosition = in.readPosition();
                            break reading;
                        } else {
                            HotExcerptCodec.readEntry(in, seq, h.ts(), cursor, limit);
                            next = seq + 1;
                        }
                    }
                }
            }
            if (!present) {
                // next ≤ toSeq was written, so its batch is in the files: a tailer that does not see it
                // has not yet followed a roll to the next cycle file; find it through the index, once.
                if (sought) {
                    break;
                }
                sought = true;
                cursors.sought();
                if (hot.moveTo(tailer, next) == null) {
                    cursor.nextSeq = -1; // where a failed moveToIndex leaves the tailer is not known
                    return next;
                }
            }
        }
        cursor.nextSeq = next;
        return next;
    }

    /** The ts of {@code seq} (one random read), for time search. */
    long tsOf(long seq) {
        ReadCursors.Cursor cursor = cursors.borrow(seq);
        boolean known = false;
        try {
            cursor.nextSeq = -1;
            HotExcerptCodec.Header h = hot.moveTo(cursor.tailer, seq);
            if (h == null) {
                throw hot.corrupt(seq, "no excerpt at its index");
            }
            cursor.nextSeq = h.firstSeq(); // left at the batch's excerpt, unread: a read from its first seq continues here
            known = true;
            return h.ts();
        } finally {
            cursors.giveBack(cursor, known);
        }
    }

    /**
     * Write-ahead replay skips a batch the queue already holds; this checks that the held copy is
     * intact (checksum, seqs) rather than trusting it unread. A damaged copy cannot be rewritten in
     * place (Chronicle excerpts are immutable), so it is reported at start-up, naming ws, log and seq,
     * and start-up goes on: reads of those seqs answer {@code corrupt}, the rest of the log works.
     * @return false when the copy is damaged
     */
    boolean checkStoredCopy(long seq) {
        if (seq < hot.firstSeq()) {
            return true; // rolled to cold and dropped from the hot files
        }
        ReadCursors.Cursor cursor = cursors.borrow(seq); // pooled: replay checks one batch after another
        boolean known = false;
        try {
            cursor.nextSeq = -1;
            HotExcerptCodec.Header h = hot.moveTo(cursor.tailer, seq);
            if (h != null) {
                cursor.nextSeq = h.firstSeq(); // left at the batch's excerpt, unread, as tsOf leaves it
                known = true;
            }
            return true;
        } catch (StrandException e) {
            if (e.code() != ErrorCode.CORRUPT) {
                throw e;
            }
            LOG.log(System.Logger.Level.ERROR, "write-ahead replay found the hot copy of a batch damaged (the write-ahead"
                    + " copy is intact but cannot replace it): " + e.getMessage());
            return false;
        } finally {
            cursors.giveBack(cursor, known);
        }
    }
}

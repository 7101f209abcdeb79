package io.strand.logtier;

import io.strand.core.DiskSpace;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.WriteAheadLog;
import java.nio.file.Path;
import java.util.List;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Owned by the holder of the log's writer's turn (and by {@link HotLog#open}, before the log is shared): the
 * writer side of one hot queue. Writes each batch as one excerpt followed by its paddings
 * ({@link HotExcerptCodec}), replays batches logged ahead, and keeps the last batch's bytes for the
 * write-ahead record.
 *
 * <p>Disk space: the queue's files are mapped sparse, so an append claims its bytes from the
 * {@link DiskSpace} guard before it touches a page (a page the file system cannot back is a SIGBUS,
 * an {@link InternalError}, part way through the excerpt). A write that fails anyway is rolled back,
 * never committed short, and answered {@code storage_full}.
 */
final class HotAppender implements AutoCloseable {
    private final HotLog hot;
    private final DiskSpace disk;
    private ExcerptAppender appender;
    /** The last batch's excerpt as encoded, kept for its write-ahead record. */
    private final Bytes<?> encoded = Bytes.allocateElasticOnHeap(1024);
    /** A padding excerpt as encoded (scratch). */
    private final Bytes<?> padding = Bytes.allocateElasticOnHeap(32);
    /** Advises each new mapped chunk once and maps the pages each append is about to write in one call ({@link PrefaultAhead}). */
    private final PrefaultAhead prefault = new PrefaultAhead();
    /** Entries of the last batch whose paddings a full disk cut short: written before anything else. */
    private long paddingsFrom;
    private long paddingsHead;

    HotAppender(HotLog hot, DiskSpace disk) {
        this.hot = hot;
        this.disk = disk;
        // used by whoever holds the writer's turn (its thread or an event loop, one at a time), not one fixed thread
        encoded.singleThreadedCheckDisabled(true);
        padding.singleThreadedCheckDisabled(true);
    }

    /**
     * Appends one batch as one excerpt (plus paddings), stamped {@code ts} or the last batch's ts
     * when that is later (a log's ts never decreases).
     * @return the first seq assigned
     */
    long append(long ts, List<byte[]> data, List<String> keys, String producerId, long producerSeq) {
        writeMissingPaddings();
        long first = hot.lastSeq() + 1;
        long stamped = Math.max(ts, hot.lastTs());
        encoded.clear();
        HotExcerptCodec.writeEntries(encoded, first, stamped, data, keys, producerId, producerSeq);
        claim(encoded.readRemaining(), data.size());
        appendEncoded(first, data.size(), stamped);
        return first;
    }

    /**
     * Before a txn writes anything: finishes an earlier batch's paddings a full disk cut short and
     * claims room for a staged batch of {@code excerptBytes} and {@code count} entries, as
     * {@link #append} does, so the txn is refused ({@code storage_full}) rather than cut short after
     * its commit record.
     */
    void prepareStaged(int excerptBytes, int count) {
        writeMissingPaddings();
        claim(excerptBytes, count);
    }

    private void claim(long excerptBytes, int count) {
        long most = hot.queue.overlapSize() - HotLog.EXCERPT_OVERHEAD_BYTES;
        if (excerptBytes > most) { // Chronicle would fail the write part-way; refused before anything is written
            throw StrandException.tooLarge("the batch takes " + excerptBytes + " bytes stored (data, keys and headers);"
                    + " one append holds at most " + most);
        }
        long need = excerptBytes + (long) HotLog.EXCERPT_OVERHEAD_BYTES * count;
        if (hot.queue.cycle() != hot.index.lastCycle()) {
            need += HotLog.NEW_FILE_BYTES; // this append opens a new cycle file
        }
        disk.require(need, "appending " + count + " entries to log queue " + hot.dir);
    }

    /** The excerpt of the last {@link #append} as stored, after {@code key}: a write-ahead payload. */
    byte[] lastExcerptKeyed(String key) {
        int length = (int) encoded.readRemaining();
        return WriteAheadLog.keyed(key, length, (into, offset) -> encoded.read(encoded.readPosition(), into, offset, length));
    }

    /**
     * Appends a batch excerpt written by an earlier run (write-ahead replay), keeping its seqs and ts.
     * @return false when the queue already holds it, or holds nothing while the batch starts past seq 1
     *         (the log was deleted after it, and the delete's files went before its record could);
     *         any other batch that does not follow the head is corrupt
     */
    boolean replay(byte[] excerpt) {
        long lastSeq = hot.lastSeq();
        HotExcerptCodec.Header h;
        try {
            h = HotExcerptCodec.readHeader(Bytes.wrapForRead(excerpt));
        } catch (StrandException e) {
            throw e.code() == ErrorCode.CORRUPT ? hot.corrupt(lastSeq + 1, "write-ahead copy of the batch after the head: "
                    + e.getMessage()) : e;
        }
        if (h.kind() != HotExcerptCodec.ENTRIES) {
            throw hot.corrupt(h.firstSeq(), "write-ahead record is not a batch");
        }
        if (h.lastSeq() <= lastSeq) {
            hot.reader().checkStoredCopy(h.firstSeq());
            return false;
        }
        if (lastSeq == 0 && hot.firstSeq() == 0 && h.firstSeq() > 1) {
            return false;
        }
        if (h.firstSeq() != lastSeq + 1) {
            throw hot.corrupt(h.firstSeq(), "write-ahead batch does not follow the queue's head " + lastSeq);
        }
        encoded.clear();
        encoded.write(excerpt);
        appendEncoded(h.firstSeq(), h.count(), Math.max(h.ts(), hot.lastTs()));
        return true;
    }

    /**
     * Writes the batch's excerpt, then its paddings. A failed excerpt write is rolled back (nothing
     * committed, the state unchanged) and thrown, as {@code storage_full} when the disk is full. Once
     * the excerpt is committed the batch is stored: paddings a full disk refuses are left for
     * {@link #writeMissingPaddings} before the next excerpt, and the append counts as done.
     */
    private void appendEncoded(long first, int count, long ts) {
        Path prefill = prefillIfNewCycle(count);
        ExcerptAppender a = appender();
        try (DocumentContext dc = a.writingDocument()) {
            try {
                Bytes<?> into = dc.wire().bytes();
                prefault.before(into.bytesStore(), into.writePosition(),
                        encoded.readRemaining() + (long) HotLog.EXCERPT_OVERHEAD_BYTES * count);
                copy(encoded, into);
            } catch (RuntimeException | Error e) {
                dc.rollbackOnClose(); // Chronicle would otherwise commit the excerpt cut short
                throw e;
            }
        } catch (RuntimeException | Error e) {
            dropAppender();
            throw refused(disk, e, "appending to log queue " + hot.dir);
        } finally {
            QueueFilePrefill.discardUnused(prefill);
        }
        noteIndex(a.lastIndexAppended(), first);
        long last = first + count - 1;
        hot.appended(first, last, ts);
        if (count > 1) {
            paddingsFrom = first + 1;
            paddingsHead = first;
            try {
                writeMissingPaddings();
            } catch (StrandException e) {
                System.getLogger("strand.logtier").log(System.Logger.Level.WARNING, "log queue {0}: paddings of seqs {1}..{2}"
                        + " wait for disk space (reads from inside that batch wait too): {3}", hot.dir, paddingsFrom, last, e.getMessage());
            }
        }
    }

    /** At open: writes the paddings of seqs {@code fromSeq..lastSeq} that a crash cut short after their batch. */
    void completePaddings(long fromSeq, long headSeq) {
        for (long seq = fromSeq; seq <= hot.lastSeq(); seq++) {
            writePadding(seq, headSeq);
        }
    }

    /**
     * Writes {@code from}'s readable bytes at {@code to}'s write position as an array copy
     * ({@code write(byte[], int, int)}). Given the heap {@code Bytes} itself, Chronicle copies it into a
     * mapped file 8 bytes at a time, each a checked positional write ({@code BytesInternal.writeFully}):
     * a third of a follower's JFR execution samples and a fifth of the leader's in {@code strand bench
     * --cluster 3 append-batched} (2026-12-02). {@code strand bench --warmup 20 append-batched}, old and
     * new alternating: 9.74 and 8.46 → 5.58 and 5.88 µs of server CPU per entry. Both buffers here are
     * {@code allocateElasticOnHeap}, which wraps a {@code byte[]} at offset 0, so read positions are
     * array indexes.
     */
    private static void copy(Bytes<?> from, Bytes<?> to) {
        byte[] array = (byte[]) from.underlyingObject();
        to.write(array, Math.toIntExact(from.readPosition()), Math.toIntExact(from.readRemaining()));
    }

    /** Writes paddings a full disk cut short; throws {@code storage_full} while there is still no room. */
    private void writeMissingPaddings() {
        while (paddingsFrom != 0 && paddingsFrom <= hot.lastSeq()) {
            writePadding(paddingsFrom, paddingsHead);
            paddingsFrom++;
        }
        paddingsFrom = 0;
    }

    private void writePadding(long seq, long headSeq) {
        ExcerptAppender a = appender(); // no prefill: a padding opens a new cycle only when the hour turns inside a batch
        padding.clear();
        HotExcerptCodec.writePadding(padding, seq, headSeq);
        try (DocumentContext dc = a.writingDocument()) {
            try {
                copy(padding, dc.wire().bytes());
            } catch (RuntimeException | Error e) {
                dc.rollbackOnClose();
                throw e;
            }
        } catch (RuntimeException | Error e) {
            dropAppender();
            throw refused(disk, e, "writing padding " + seq + " to log queue " + hot.dir);
        }
        noteIndex(a.lastIndexAppended(), seq);
    }

    /**
     * Before a batch's excerpt that opens a new cycle file: the pages it and the batch's
     * {@code count - 1} paddings touch, cached ({@link QueueFilePrefill}); null otherwise. One clock
     * read and one index lookup per batch.
     */
    private Path prefillIfNewCycle(int count) {
        int cycle = hot.queue.cycle();
        return cycle == hot.index.lastCycle() ? null
                : QueueFilePrefill.prepare(hot.queue, cycle, encoded.readRemaining() + (long) HotLog.EXCERPT_OVERHEAD_BYTES * count);
    }

    /** The mapped chunk the last append wrote into, as advised ({@link NoReadAround}); tests. */
    BytesStore<?, ?> advisedChunk() {
        return prefault.chunk();
    }

    /** What {@link PrefaultAhead} did for the last append (tests). */
    PrefaultAhead prefault() {
        return prefault;
    }

    /** {@code storage_full} for a write the file system had no room for; anything else as it was. */
    static RuntimeException refused(DiskSpace disk, Throwable failure, String what) {
        StrandException full = disk.outOfSpace(failure, what);
        if (full != null) {
            return full;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        return (RuntimeException) failure;
    }

    private void noteIndex(long queueIndex, long seq) {
        int cycle = hot.rollCycle.toCycle(queueIndex);
        if (cycle != hot.index.lastCycle()) {
            hot.index.cycleStarted(cycle, seq, queueIndex);
        }
    }

    /** After a failed write the appender's context is not reusable ("a header inside a header"): the next write gets a new one. */
    private void dropAppender() {
        ExcerptAppender a = appender;
        appender = null;
        if (a != null) {
            try {
                a.close();
            } catch (RuntimeException | Error ignored) {
                // a new appender finds the queue's end by itself
            }
        }
    }

    private ExcerptAppender appender() {
        if (appender == null) {
            appender = hot.queue.createAppender();
            appender.singleThreadedCheckDisabled(true); // ownership is the writer thread, handed over by Log
        }
        return appender;
    }

    @Override
    public void close() {
        if (appender != null) {
            appender.close();
            appender = null;
        }
    }
}

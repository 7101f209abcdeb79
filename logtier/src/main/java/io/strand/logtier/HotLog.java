package io.strand.logtier;

import io.strand.core.DiskSpace;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.WriteAheadLog;
import java.io.File;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.TailerDirection;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The hot part of one log: its own Chronicle Queue directory. The appender is used only by the
 * log's writer (through {@link Log}); reads borrow a tailer from the log's {@link ReadCursors}, so
 * any thread may read and a sequential reader continues where its last read stopped.
 * The head is always recovered from the queue itself, never from a counter kept beside it.
 * The queue is never forced here: in {@code fsync} mode each append's excerpt is also logged to
 * the {@link io.strand.core.WriteAheadLog}, which replays it into the queue after a power loss.
 *
 * <p>Every excerpt read is checked against its checksum ({@link HotExcerptCodec}); a damaged one is a
 * {@code corrupt} error naming the workspace, log and seq, never data.
 *
 * <p>Disk space: the queue's files are mapped sparse, so an append claims its bytes from the
 * {@link DiskSpace} guard before it touches a page (a page the file system cannot back is a SIGBUS,
 * an {@link InternalError}, part way through the excerpt). A write that fails anyway is rolled back,
 * never committed short, and answered {@code storage_full}.
 */
final class HotLog implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HotLog.class.getName());
    /** Claimed per excerpt beyond its bytes: Chronicle's header, alignment and index slots. */
    static final int EXCERPT_OVERHEAD_BYTES = 64;
    /** Claimed for a new cycle file or a new queue: its header, first index pages and the metadata file (measured ≈16 KiB on tmpfs). */
    static final long NEW_FILE_BYTES = 256 << 10;
    /** Workspace and log this queue belongs to, named in errors; null in tests that open a bare queue. */
    private final String ws;
    private final String log;
    private final Path dir;
    private final DiskSpace disk;
    private final SingleChronicleQueue queue;
    private final RollCycle rollCycle;
    private final SeqIndex index = new SeqIndex();
    private final ReadCursors cursors;
    private ExcerptAppender appender;
    /** The last batch's excerpt as encoded; the writer's scratch (writer thread only). */
    private final Bytes<?> encoded = Bytes.allocateElasticOnHeap(1024);
    /** A padding excerpt as encoded; the writer's scratch (writer thread only). */
    private final Bytes<?> padding = Bytes.allocateElasticOnHeap(32);
    /** Last seq in the queue; written by the writer, read by anyone. */
    private volatile long lastSeq;
    /** First seq physically in the queue (0 when empty). */
    private volatile long firstSeq;
    private long lastTs;

    /** Entries of the last batch whose paddings a full disk cut short: written before anything else (writer thread). */
    private long paddingsFrom;
    private long paddingsHead;

    private HotLog(String ws, String log, Path dir, SingleChronicleQueue queue, DiskSpace disk) {
        this.ws = ws;
        this.log = log;
        this.dir = dir;
        this.disk = disk;
        this.queue = queue;
        this.rollCycle = queue.rollCycle();
        this.cursors = new ReadCursors(queue);
    }

    /** Opens the queue in {@code dir} of log {@code ws}/{@code log}. */
    static HotLog open(String ws, String log, Path dir, LogConfig config) {
        return open(ws, log, dir, config, null);
    }

    /** A bare queue for tests, with Chronicle's clock replaced (tests roll cycles at will); null = system time. */
    static HotLog open(Path dir, LogConfig config, TimeProvider time) {
        return open(null, null, dir, config, time, DiskSpace.unlimited(dir));
    }

    /** As {@link #open(String, String, Path, LogConfig)} with Chronicle's clock replaced; null = system time. */
    static HotLog open(String ws, String log, Path dir, LogConfig config, TimeProvider time) {
        return open(ws, log, dir, config, time, DiskSpace.unlimited(dir));
    }

    /** As above; a new queue's files are claimed from {@code disk} first, and so is every append. */
    static HotLog open(String ws, String log, Path dir, LogConfig config, TimeProvider time, DiskSpace disk) {
        if (!java.nio.file.Files.exists(dir.resolve("metadata.cq4t"))) {
            disk.require(NEW_FILE_BYTES, "creating log queue " + dir);
        }
        File file = dir.toFile();
        SingleChronicleQueueBuilder builder = SingleChronicleQueueBuilder.binary(file)
                .rollCycle(config.rollCycle())
                .blockSize(config.blockSize());
        if (time != null) {
            builder.timeProvider(time);
        }
        SingleChronicleQueue queue;
        try {
            queue = builder.build();
        } catch (RuntimeException | Error e) {
            throw refused(disk, e, "opening log queue " + dir);
        }
        HotLog hot = new HotLog(ws, log, dir, queue, disk);
        try {
            hot.recover();
        } catch (RuntimeException e) {
            queue.close();
            throw e;
        }
        return hot;
    }

    /** Rebuilds the per-cycle index and the head from the queue, and finishes a batch whose paddings a crash cut short. */
    private void recover() {
        if (queue.firstIndex() == Long.MAX_VALUE || queue.lastIndex() < 0) {
            return; // empty queue
        }
        try (ExcerptTailer tailer = queue.createTailer()) {
            int cycle = queue.firstCycle();
            int last = queue.lastCycle();
            while (cycle <= last && cycle != -1) {
                if (tailer.moveToCycle(cycle)) {
                    long startIndex = tailer.index();
                    HotExcerptCodec.Header h = readHeaderAt(tailer);
                    if (h != null) {
                        index.cycleStarted(cycle, h.firstSeq(), startIndex);
                    }
                }
                int next = queue.nextCycle(cycle, TailerDirection.FORWARD);
                if (next <= cycle) {
                    break;
                }
                cycle = next;
            }
        } catch (java.text.ParseException e) {
            throw new StrandException(ErrorCode.CORRUPT, "cannot list cycles of " + dir + ": " + e.getMessage());
        }
        HotExcerptCodec.Header tail = lastHeader();
        if (tail == null) {
            firstSeq = 0;
            return;
        }
        firstSeq = firstReadableSeq();
        if (tail.kind() == HotExcerptCodec.ENTRIES) {
            lastSeq = tail.firstSeq() + tail.count() - 1;
            lastTs = tail.ts();
            completePaddings(tail.firstSeq() + 1, tail.firstSeq());
        } else {
            HotExcerptCodec.Header head = headerAt(tail.headSeq());
            lastSeq = head.firstSeq() + head.count() - 1;
            lastTs = head.ts();
            completePaddings(tail.firstSeq() + 1, head.firstSeq());
        }
    }

    private void completePaddings(long fromSeq, long headSeq) {
        for (long seq = fromSeq; seq <= lastSeq; seq++) {
            writePadding(seq, headSeq);
        }
    }

    private HotExcerptCodec.Header lastHeader() {
        try (ExcerptTailer tailer = queue.createTailer()) {
            tailer.direction(TailerDirection.BACKWARD).toEnd();
            return readHeaderAt(tailer);
        }
    }

    private HotExcerptCodec.Header readHeaderAt(ExcerptTailer tailer) {
        try (DocumentContext dc = tailer.readingDocument()) {
            if (!dc.isPresent()) {
                return null;
            }
            return header(dc, 0);
        }
    }

    /**
     * The header of the excerpt {@code dc} holds, its checksum verified. A damaged excerpt is
     * {@code corrupt} naming the seq its queue index stands for, else {@code seqHint} (the seq the
     * caller was looking for; 0 = not known).
     */
    private HotExcerptCodec.Header header(DocumentContext dc, long seqHint) {
        try {
            return HotExcerptCodec.readHeader(dc.wire().bytes());
        } catch (StrandException e) {
            if (e.code() != ErrorCode.CORRUPT || e.extras().containsKey("seq")) {
                throw e;
            }
            long queueIndex = dc.index();
            long seq = index.seqOf(rollCycle.toCycle(queueIndex), queueIndex);
            throw corrupt(seq > 0 ? seq : seqHint, "excerpt at queue index 0x" + Long.toHexString(queueIndex)
                    + " is damaged: " + e.getMessage());
        }
    }

    /** The ENTRIES header holding {@code seq} (following a padding back to its batch). */
    private HotExcerptCodec.Header headerAt(long seq) {
        try (ExcerptTailer tailer = queue.createTailer()) {
            HotExcerptCodec.Header h = moveTo(tailer, seq);
            if (h == null) {
                throw corrupt(seq, "no excerpt at its index");
            }
            return h;
        }
    }

    /**
     * Positions {@code tailer} at the ENTRIES excerpt that holds {@code seq} and returns its header
     * without consuming the excerpt; null when the seq is not in the queue.
     */
    private HotExcerptCodec.Header moveTo(ExcerptTailer tailer, long seq) {
        for (int hop = 0; hop < 2; hop++) {
            long idx = index.indexOf(seq);
            if (idx < 0 || !tailer.moveToIndex(idx)) {
                return null;
            }
            HotExcerptCodec.Header h;
            try (DocumentContext dc = tailer.readingDocument()) {
                if (!dc.isPresent()) {
                    return null;
                }
                h = header(dc, seq);
                dc.rollbackOnClose();
            }
            if (h.kind() == HotExcerptCodec.ENTRIES) {
                if (seq < h.firstSeq() || seq > h.lastSeq()) {
                    throw corrupt(seq, "index points at seqs " + h.firstSeq() + ".." + h.lastSeq());
                }
                return h;
            }
            if (h.firstSeq() != seq) {
                throw corrupt(seq, "index points at padding for seq " + h.firstSeq());
            }
            seq = h.headSeq();
        }
        throw corrupt(seq, "padding points at another padding");
    }

    /** A {@code corrupt} error naming workspace, log and seq (0 = not known), like the cold tier's. */
    private StrandException corrupt(long seq, String why) {
        Map<String, Object> extras = new LinkedHashMap<>();
        if (ws != null) {
            extras.put("ws", ws);
            extras.put("log", log);
        }
        if (seq > 0) {
            extras.put("seq", seq);
        }
        // names the log, not the server's file path: the message goes to clients
        String name = ws == null ? "queue " + dir : "log " + ws + "/" + log;
        return new StrandException(ErrorCode.CORRUPT, name + " hot entry " + (seq > 0 ? "seq " + seq : "(seq not known)")
                + " is corrupt: " + why, extras);
    }

    long lastSeq() {
        return lastSeq;
    }

    long firstSeq() {
        return firstSeq;
    }

    long lastTs() {
        return lastTs;
    }

    /**
     * Appends one batch as one excerpt (plus paddings). Writer thread only.
     * @return the first seq assigned
     */
    long append(long ts, List<byte[]> data, List<String> keys, String producerId, long producerSeq) {
        writeMissingPaddings();
        long first = lastSeq + 1;
        long stamped = Math.max(ts, lastTs);
        encoded.clear();
        HotExcerptCodec.writeEntries(encoded, first, stamped, data, keys, producerId, producerSeq);
        long need = encoded.readRemaining() + (long) EXCERPT_OVERHEAD_BYTES * data.size();
        if (queue.cycle() != index.lastCycle()) {
            need += NEW_FILE_BYTES; // this append opens a new cycle file
        }
        disk.require(need, "appending " + data.size() + " entries to log queue " + dir);
        appendEncoded(first, data.size(), stamped);
        return first;
    }

    /**
     * Before a txn writes anything: finishes an earlier batch's paddings a full disk cut short and
     * claims room for a staged batch of {@code excerptBytes} and {@code count} entries, as
     * {@link #append} does, so the txn is refused ({@code storage_full}) rather than cut short after
     * its commit record. Writer thread only.
     */
    void prepareStaged(int excerptBytes, int count) {
        writeMissingPaddings();
        long need = excerptBytes + (long) EXCERPT_OVERHEAD_BYTES * count;
        if (queue.cycle() != index.lastCycle()) {
            need += NEW_FILE_BYTES;
        }
        disk.require(need, "appending " + count + " entries to log queue " + dir);
    }

    /** The excerpt of the last {@link #append} as stored, after {@code key}: a write-ahead payload. Writer thread only. */
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
        HotExcerptCodec.Header h;
        try {
            h = HotExcerptCodec.readHeader(Bytes.wrapForRead(excerpt));
        } catch (StrandException e) {
            throw e.code() == ErrorCode.CORRUPT ? corrupt(lastSeq + 1, "write-ahead copy of the batch after the head: "
                    + e.getMessage()) : e;
        }
        if (h.kind() != HotExcerptCodec.ENTRIES) {
            throw corrupt(h.firstSeq(), "write-ahead record is not a batch");
        }
        if (h.lastSeq() <= lastSeq) {
            checkStoredCopy(h.firstSeq());
            return false;
        }
        if (lastSeq == 0 && firstSeq == 0 && h.firstSeq() > 1) {
            return false;
        }
        if (h.firstSeq() != lastSeq + 1) {
            throw corrupt(h.firstSeq(), "write-ahead batch does not follow the queue's head " + lastSeq);
        }
        encoded.clear();
        encoded.write(excerpt);
        appendEncoded(h.firstSeq(), h.count(), Math.max(h.ts(), lastTs));
        return true;
    }

    /**
     * Write-ahead replay skips a batch the queue already holds; this checks that the held copy is
     * intact (checksum, seqs) rather than trusting it unread. A damaged copy cannot be rewritten in
     * place (Chronicle excerpts are immutable), so it is reported at start-up, naming ws, log and seq,
     * and start-up goes on: reads of those seqs answer {@code corrupt}, the rest of the log works.
     * @return false when the copy is damaged
     */
    boolean checkStoredCopy(long seq) {
        if (seq < firstSeq) {
            return true; // rolled to cold and dropped from the hot files
        }
        ReadCursors.Cursor cursor = cursors.borrow(seq); // pooled: replay checks one batch after another
        boolean known = false;
        try {
            cursor.nextSeq = -1;
            HotExcerptCodec.Header h = moveTo(cursor.tailer, seq);
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

    /**
     * Writes the batch's excerpt, then its paddings. A failed excerpt write is rolled back (nothing
     * committed, the state unchanged) and thrown, as {@code storage_full} when the disk is full. Once
     * the excerpt is committed the batch is stored: paddings a full disk refuses are left for
     * {@link #writeMissingPaddings} before the next excerpt, and the append counts as done.
     */
    private void appendEncoded(long first, int count, long ts) {
        ExcerptAppender a = appender();
        try (DocumentContext dc = a.writingDocument()) {
            try {
                dc.wire().bytes().write(encoded, encoded.readPosition(), encoded.readRemaining());
            } catch (RuntimeException | Error e) {
                dc.rollbackOnClose(); // Chronicle would otherwise commit the excerpt cut short
                throw e;
            }
        } catch (RuntimeException | Error e) {
            dropAppender();
            throw refused(disk, e, "appending to log queue " + dir);
        }
        noteIndex(a.lastIndexAppended(), first);
        lastTs = ts;
        if (firstSeq == 0) {
            firstSeq = first;
        }
        lastSeq = first + count - 1;
        if (count > 1) {
            paddingsFrom = first + 1;
            paddingsHead = first;
            try {
                writeMissingPaddings();
            } catch (StrandException e) {
                System.getLogger("strand.logtier").log(System.Logger.Level.WARNING, "log queue {0}: paddings of seqs {1}..{2}"
                        + " wait for disk space (reads from inside that batch wait too): {3}", dir, paddingsFrom, lastSeq, e.getMessage());
            }
        }
    }

    /** Writes paddings a full disk cut short (writer thread); throws {@code storage_full} while there is still no room. */
    private void writeMissingPaddings() {
        while (paddingsFrom != 0 && paddingsFrom <= lastSeq) {
            writePadding(paddingsFrom, paddingsHead);
            paddingsFrom++;
        }
        paddingsFrom = 0;
    }

    private void writePadding(long seq, long headSeq) {
        ExcerptAppender a = appender();
        padding.clear();
        HotExcerptCodec.writePadding(padding, seq, headSeq);
        try (DocumentContext dc = a.writingDocument()) {
            try {
                dc.wire().bytes().write(padding, padding.readPosition(), padding.readRemaining());
            } catch (RuntimeException | Error e) {
                dc.rollbackOnClose();
                throw e;
            }
        } catch (RuntimeException | Error e) {
            dropAppender();
            throw refused(disk, e, "writing padding " + seq + " to log queue " + dir);
        }
        noteIndex(a.lastIndexAppended(), seq);
    }

    /** {@code storage_full} for a write the file system had no room for; anything else as it was. */
    private static RuntimeException refused(DiskSpace disk, Throwable failure, String what) {
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
        int cycle = rollCycle.toCycle(queueIndex);
        if (cycle != index.lastCycle()) {
            index.cycleStarted(cycle, seq, queueIndex);
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
            appender = queue.createAppender();
            appender.singleThreadedCheckDisabled(true); // ownership is the writer thread, handed over by Log
        }
        return appender;
    }

    /**
     * Reads entries with {@code fromSeq ≤ seq ≤ toSeq} in order, at most {@code maxEntries} and, past
     * the first entry, at most {@code maxBytes} of weight, on a pooled cursor: one left exactly at
     * {@code fromSeq} by an earlier read continues without a seek. Any thread; {@code toSeq} must not
     * pass the last seq written. The first entry delivered is {@code fromSeq} or there is none: a seq
     * whose cycle file a roll dropped (below {@link #firstSeq()}, which may move during the call) is
     * not here any more, and the caller must read it from the cold tier rather than get later seqs.
     * @return the seq after the last entry delivered ({@code fromSeq} when none was)
     */
    long read(long fromSeq, long toSeq, int maxEntries, long maxBytes, EntrySink sink) {
        long from = fromSeq;
        long first = firstSeq;
        if (from > toSeq || first == 0 || from < first) {
            return fromSeq;
        }
        ReadCursors.Cursor cursor = cursors.borrow(from);
        boolean known = false;
        try {
            long next = read(cursor, from, toSeq, maxEntries, maxBytes, sink);
            known = true;
            return next;
        } finally {
            cursors.giveBack(cursor, known);
        }
    }

    /**
     * The read loop on one cursor. Keeps the cursor's invariant ({@link ReadCursors.Cursor}): a read
     * that stops inside a batch leaves that batch's excerpt unread ({@code rollbackOnClose}), so the
     * next read from {@code cursor.nextSeq} finds it again and skips the entries already delivered.
     */
    private long read(ReadCursors.Cursor cursor, long from, long toSeq, int maxEntries, long maxBytes, EntrySink sink) {
        ExcerptTailer tailer = cursor.tailer;
        if (cursor.nextSeq != from) {
            cursor.nextSeq = -1;
            cursors.sought();
            if (moveTo(tailer, from) == null) {
                return from;
            }
            cursor.nextSeq = from;
        }
        long next = from;
        int count = 0;
        long bytes = 0;
        boolean sought = false;
        reading:
        while (count < maxEntries && next <= toSeq && (count == 0 || bytes < maxBytes)) {
            boolean present;
            try (DocumentContext dc = tailer.readingDocument()) {
                present = dc.isPresent();
                if (present) {
                    Bytes<?> in = dc.wire().bytes();
                    HotExcerptCodec.Header h = header(dc, next);
                    if (h.kind() == HotExcerptCodec.PADDING || h.lastSeq() < next) {
                        continue; // a padding, or a batch delivered before
                    }
                    if (h.firstSeq() > next) {
                        // A roll dropped the cycle file under this tailer and Chronicle moved it on to a
                        // later one: seek the seq once through the index (below); after a seek, corrupt.
                        if (sought) {
                            throw corrupt(next, "a read found seqs " + h.firstSeq() + ".." + h.lastSeq() + " where this seq belongs");
                        }
                        dc.rollbackOnClose();
                        present = false;
                    }
                    for (int i = 0; present && i < h.count(); i++) {
                        long seq = h.firstSeq() + i;
                        if (seq < next) {
                            HotExcerptCodec.skipEntry(in);
                        } else if (seq > toSeq || count >= maxEntries || (count > 0 && bytes >= maxBytes)) {
                            dc.rollbackOnClose(); // the rest of this batch is for the next read
                            break reading;
                        } else {
                            bytes += HotExcerptCodec.readEntry(in, seq, h.ts(), cursor, sink);
                            count++;
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
                if (moveTo(tailer, next) == null) {
                    cursor.nextSeq = -1; // where a failed moveToIndex leaves the tailer is not known
                    return next;
                }
            }
        }
        cursor.nextSeq = next;
        return next;
    }

    /** As {@link #read(long, long, int, long, EntrySink)}, each entry as an {@link Entry}. */
    long read(long fromSeq, long toSeq, int maxEntries, long maxBytes, Consumer<Entry> sink) {
        return read(fromSeq, toSeq, maxEntries, maxBytes, EntrySink.of(sink));
    }

    /** The ts of {@code seq} (one random read), for time search. */
    long tsOf(long seq) {
        ReadCursors.Cursor cursor = cursors.borrow(seq);
        boolean known = false;
        try {
            cursor.nextSeq = -1;
            HotExcerptCodec.Header h = moveTo(cursor.tailer, seq);
            if (h == null) {
                throw corrupt(seq, "no excerpt at its index");
            }
            cursor.nextSeq = h.firstSeq(); // left at the batch's excerpt, unread: a read from its first seq continues here
            known = true;
            return h.ts();
        } finally {
            cursors.giveBack(cursor, known);
        }
    }

    /** True when {@code seq} lies in the newest cycle file, the one the writer holds open (or past the head). */
    boolean inNewestCycle(long seq) {
        int last = index.lastCycle();
        return last != Integer.MIN_VALUE && index.cycleOf(seq) == last;
    }

    ReadCursors cursors() {
        return cursors;
    }

    /** Visits every batch header with a seq ≥ {@code fromSeq}, with the data bytes it holds. Any thread. */
    void scanHeaders(long fromSeq, HeaderVisitor visitor) {
        long from = Math.max(fromSeq, firstSeq);
        if (firstSeq == 0 || from > lastSeq) {
            return;
        }
        try (ExcerptTailer tailer = queue.createTailer()) {
            if (moveTo(tailer, from) == null) {
                return;
            }
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        return;
                    }
                    Bytes<?> in = dc.wire().bytes();
                    HotExcerptCodec.Header h;
                    try {
                        h = header(dc, 0);
                    } catch (StrandException e) {
                        if (e.code() != ErrorCode.CORRUPT) {
                            throw e;
                        }
                        // counters only: reads of this excerpt fail with the same error, so it is not hidden
                        LOG.log(System.Logger.Level.ERROR, "skipping a damaged excerpt while counting: " + e.getMessage());
                        continue;
                    }
                    if (h.kind() == HotExcerptCodec.ENTRIES) {
                        visitor.visit(h, HotExcerptCodec.dataBytes(in, h.count()));
                    }
                }
            }
        }
    }

    interface HeaderVisitor {
        void visit(HotExcerptCodec.Header header, long dataBytes);
    }

    /**
     * Deletes whole cycle files whose every entry is below {@code keepFrom} (they are safely cold).
     * Writer thread only. The cycle holding the excerpt of {@code keepFrom}'s batch and all later
     * ones stay: a batch is one excerpt followed by paddings, and when a cycle rolls mid-batch its
     * paddings land in the next cycle while its entries stay in this one, so the cycle of
     * {@code keepFrom}'s own index may be one too late. When {@code keepFrom} is past the last seq,
     * the cycle of the last batch stays (the hot files always hold the newest entries).
     */
    int dropCyclesBefore(long keepFrom) {
        long keepSeq = Math.min(keepFrom, lastSeq);
        if (firstSeq == 0 || keepSeq < firstSeq) {
            return 0;
        }
        int keepCycle;
        try (ExcerptTailer tailer = queue.createTailer()) {
            if (moveTo(tailer, keepSeq) == null) {
                throw corrupt(keepSeq, "no excerpt at its index while dropping cold cycles");
            }
            keepCycle = rollCycle.toCycle(tailer.index());
        }
        int dropped = 0;
        try {
            int cycle = queue.firstCycle();
            while (cycle != -1 && cycle < keepCycle) {
                int next = queue.nextCycle(cycle, TailerDirection.FORWARD); // before the delete: Chronicle logs an error for a vanished cycle
                var store = queue.storeForCycle(cycle, queue.epoch(), false, null);
                if (store != null) {
                    File f = store.file();
                    queue.closeStore(store);
                    if (f != null && f.delete()) {
                        dropped++;
                    }
                }
                if (next <= cycle) {
                    break;
                }
                cycle = next;
            }
        } catch (java.text.ParseException e) {
            throw new StrandException(ErrorCode.CORRUPT, "cannot list cycles of " + dir + ": " + e.getMessage());
        }
        if (dropped > 0) {
            queue.refreshDirectoryListing();
            index.dropCyclesBefore(keepCycle);
            firstSeq = firstReadableSeq();
            cursors.invalidate(); // an idle tailer left on a deleted file would keep it mapped
        }
        return dropped;
    }

    /**
     * The first seq whose batch is still in the files, 0 when none: after older cycles were dropped,
     * the files may start with paddings of a batch whose excerpt went with them (those seqs are cold).
     */
    private long firstReadableSeq() {
        try (ExcerptTailer tailer = queue.createTailer()) {
            tailer.toStart();
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        return 0;
                    }
                    HotExcerptCodec.Header h = header(dc, 0);
                    if (h.kind() == HotExcerptCodec.ENTRIES) {
                        return h.firstSeq();
                    }
                }
            }
        }
    }

    Path dir() {
        return dir;
    }

    /** Bytes of the queue's cycle files on disk (what dropping cycles gives back). Any thread. */
    long diskBytes() {
        long total = 0;
        try (var files = java.nio.file.Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.getFileName().toString().endsWith(".cq4")) {
                    try {
                        total += java.nio.file.Files.size(f);
                    } catch (java.io.IOException gone) {
                        // dropped meanwhile
                    }
                }
            }
        } catch (java.io.IOException e) {
            return total;
        }
        return total;
    }

    @Override
    public void close() {
        if (appender != null) {
            appender.close();
            appender = null;
        }
        cursors.close(); // before the queue: tailers left open would keep its files mapped
        queue.close();
    }
}

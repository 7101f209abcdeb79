package io.strand.logtier;

import io.strand.core.DiskSpace;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.File;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.TailerDirection;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Thread-safe: written only by the log's writer thread (through its {@link HotAppender}), read by
 * any thread (through {@link HotReader}, whose cursors each serve one reader at a time); its seqs
 * are volatile. The hot part of one log: its own Chronicle Queue directory, the seq → queue index
 * map ({@link SeqIndex}) and the way from a seq to its excerpt ({@link #moveTo}).
 * The head is always recovered from the queue itself, never from a counter kept beside it.
 * The queue is never forced here: in {@code fsync} mode each append's excerpt is also logged to
 * the {@link io.strand.core.WriteAheadLog}, which replays it into the queue after a power loss.
 *
 * <p>Every excerpt read is checked against its checksum ({@link HotExcerptCodec}); a damaged one is
 * a {@code corrupt} error naming the workspace, log and seq, never data.
 *
 * <p>Parts: {@link HotAppender} (the writer side, disk space claims and paddings), {@link HotReader}
 * (reads on pooled cursors), {@link HotCycles} (the cycle files: listed at open, dropped once cold).
 */
final class HotLog implements AutoCloseable {
    static final System.Logger LOG = System.getLogger(HotLog.class.getName());
    /** Claimed per excerpt beyond its bytes: Chronicle's header, alignment and index slots. */
    static final int EXCERPT_OVERHEAD_BYTES = 64;
    /** Claimed for a new cycle file or a new queue: its header, first index pages and the metadata file (measured ≈16 KiB on tmpfs). */
    static final long NEW_FILE_BYTES = 256 << 10;
    /** Key of the creation time in the queue's metadata file (Chronicle's table store). */
    static final String CREATED_KEY = "strand.created";
    /** Workspace and log this queue belongs to, named in errors; null in tests that open a bare queue. */
    private final String ws;
    private final String log;
    final Path dir;
    final SingleChronicleQueue queue;
    final RollCycle rollCycle;
    final SeqIndex index = new SeqIndex();
    private final ReadCursors cursors;
    private final HotAppender appender;
    private final HotReader reader;
    private final HotCycles cycles;
    /** Last seq in the queue; written by the writer, read by anyone. */
    private volatile long lastSeq;
    /** First seq physically in the queue (0 when empty). */
    private volatile long firstSeq;
    /** The last batch's ts; writer thread (and open). */
    private long lastTs;
    /** When the log was created: the ts of its first batch (0 before it, or when unknown); written by the writer, read by anyone. */
    private volatile long created;

    private HotLog(String ws, String log, Path dir, SingleChronicleQueue queue, DiskSpace disk) {
        this.ws = ws;
        this.log = log;
        this.dir = dir;
        this.queue = queue;
        this.rollCycle = queue.rollCycle();
        this.cursors = new ReadCursors(queue);
        this.appender = new HotAppender(this, disk);
        this.reader = new HotReader(this, cursors);
        this.cycles = new HotCycles(this, cursors);
    }

    /** Opens the queue in {@code dir} of log {@code ws}/{@code log}. */
    static HotLog open(String ws, String log, Path dir, LogConfig config) {
        return open(ws, log, dir, config, null, DiskSpace.unlimited(dir));
    }

    /** A bare queue for tests, with Chronicle's clock replaced (tests roll cycles at will); null = system time. */
    static HotLog open(Path dir, LogConfig config, TimeProvider time) {
        return open(null, null, dir, config, time, DiskSpace.unlimited(dir));
    }

    /** As above; a new queue's files are claimed from {@code disk} first, and so is every append. */
    static HotLog open(String ws, String log, Path dir, LogConfig config, TimeProvider time, DiskSpace disk) {
        return open(ws, log, dir, config, time, disk, false);
    }

    /**
     * As above; {@code fresh} says {@code dir}'s parent was made empty just now by the caller, so
     * {@code dir} is known to be missing and is not looked up (two {@code stat}s fewer per new log).
     */
    static HotLog open(String ws, String log, Path dir, LogConfig config, TimeProvider time, DiskSpace disk,
                       boolean fresh) {
        if (fresh || !java.nio.file.Files.exists(dir.resolve(QueueFilePrefill.METADATA))) {
            disk.require(NEW_FILE_BYTES, "creating log queue " + dir);
            if (fresh || !java.nio.file.Files.exists(dir)) {
                QueueFilePrefill.prepareNewQueue(dir); // a new queue: its metadata file without the kernel's read-around
            }
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
            throw HotAppender.refused(disk, e, "opening log queue " + dir);
        }
        HotLog hot = new HotLog(ws, log, dir, queue, disk);
        try {
            hot.recover();
            hot.created = hot.storedCreated();
        } catch (RuntimeException e) {
            queue.close();
            throw e;
        }
        return hot;
    }

    /**
     * The log's creation time: the ts of its first batch, which is the same on every replica of a
     * cluster (the leader stamps it), kept in the queue's own metadata file ({@code metadata.cq4t},
     * key {@value #CREATED_KEY}; written when seq 1 is appended, not forced). When that value did not
     * survive a crash, the ts of seq 1 still in the queue; 0 when neither is there (seq 1 gone).
     */
    long created() {
        return created;
    }

    private long storedCreated() {
        long stored = queue.tableStoreGet(CREATED_KEY);
        if (stored > 0) {
            return stored;
        }
        if (firstSeq == 1) {
            try {
                return reader.tsOf(1);
            } catch (StrandException e) {
                return 0; // a damaged seq 1 answers corrupt when read; the creation time is just unknown
            }
        }
        return 0;
    }

    /** Rebuilds the per-cycle index and the head from the queue, and finishes a batch whose paddings a crash cut short. */
    private void recover() {
        if (queue.firstIndex() == Long.MAX_VALUE || queue.lastIndex() < 0) {
            return; // empty queue
        }
        cycles.indexAll();
        HotExcerptCodec.Header tail;
        try {
            tail = lastHeader();
        } catch (StrandException e) {
            long seq = damagedSeq(e);
            if (seq <= 0) {
                throw e;
            }
            // The newest excerpt is damaged, so its batch's size cannot be read. Its index still says
            // which seq it stands for (one index per seq): take that as the head, so appends go on after
            // it and reads of it answer corrupt, rather than refusing the whole log.
            LOG.log(System.Logger.Level.ERROR, "the newest excerpt of " + (ws == null ? dir : ws + "/" + log)
                    + " is damaged; taking its seq " + seq + " as the head (reads of it answer corrupt): " + e.getMessage());
            firstSeq = cycles.firstReadableSeq();
            lastSeq = seq;
            lastTs = lastIntactTs();
            return;
        }
        if (tail == null) {
            firstSeq = 0;
            return;
        }
        firstSeq = cycles.firstReadableSeq();
        HotExcerptCodec.Header head = tail.kind() == HotExcerptCodec.ENTRIES ? tail : headerAt(tail.headSeq());
        lastSeq = head.firstSeq() + head.count() - 1;
        lastTs = head.ts();
        appender.completePaddings(tail.firstSeq() + 1, head.firstSeq());
    }

    private HotExcerptCodec.Header lastHeader() {
        try (ExcerptTailer tailer = queue.createTailer()) {
            tailer.direction(TailerDirection.BACKWARD).toEnd();
            return readHeaderAt(tailer);
        }
    }

    /** The ts of the newest batch whose excerpt is intact, 0 when none is. */
    private long lastIntactTs() {
        try (ExcerptTailer tailer = queue.createTailer()) {
            tailer.direction(TailerDirection.BACKWARD).toEnd();
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        return 0;
                    }
                    HotExcerptCodec.Header h = header(dc, 0);
                    if (h.kind() == HotExcerptCodec.ENTRIES) {
                        return h.ts();
                    }
                } catch (StrandException e) {
                    if (damagedSeq(e) <= 0) {
                        throw e;
                    }
                }
            }
        }
    }

    /**
     * The seq a {@code corrupt} error from {@link #header} names (the seq the damaged excerpt's index
     * stands for), or 0 when {@code e} is another error or the seq is not known.
     */
    static long damagedSeq(StrandException e) {
        return e.code() == ErrorCode.CORRUPT && e.extras().get("seq") instanceof Number n ? n.longValue() : 0;
    }

    /** The header of the excerpt {@code tailer} is at, consuming it; null at the end. */
    HotExcerptCodec.Header readHeaderAt(ExcerptTailer tailer) {
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
    HotExcerptCodec.Header header(DocumentContext dc, long seqHint) {
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
    HotExcerptCodec.Header headerAt(long seq) {
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
    HotExcerptCodec.Header moveTo(ExcerptTailer tailer, long seq) {
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

    /**
     * For an error that says a hot read of {@code seq} found nothing: the hot part's first and last
     * seq, the index's answer for {@code seq} (queue index and cycle), the cycles indexed, and whether
     * a new tailer can move there. Opens a tailer: for error messages only.
     */
    String describe(long seq) {
        long idx = index.indexOf(seq);
        String moves;
        try (ExcerptTailer tailer = queue.createTailer()) {
            moves = idx < 0 ? "no index" : String.valueOf(tailer.moveToIndex(idx));
        } catch (RuntimeException e) {
            moves = e.toString();
        }
        return "hot first " + firstSeq + ", last " + lastSeq + "; seq " + seq + " at queue index " + idx + " of cycle "
                + index.cycleOf(seq) + ", " + index.cycles() + " cycles indexed up to " + index.lastCycle()
                + "; a new tailer moves there: " + moves;
    }

    /** A {@code corrupt} error naming workspace, log and seq (0 = not known), like the cold tier's. */
    StrandException corrupt(long seq, String why) {
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

    /** After the writer committed a batch's excerpt: its seqs are in the queue. Writer thread. */
    void appended(long first, long last, long ts) {
        lastTs = ts;
        if (first == 1 && created == 0) {
            created = ts;
            queue.tableStorePut(CREATED_KEY, ts);
        }
        if (firstSeq == 0) {
            firstSeq = first;
        }
        lastSeq = last;
    }

    /** After cycle files were dropped: where the stored seqs start now. Writer thread. */
    void storedFrom(long first) {
        firstSeq = first;
    }

    /** The writer side (writer thread only). */
    HotAppender appender() {
        return appender;
    }

    /** Reads on pooled cursors (any thread). */
    HotReader reader() {
        return reader;
    }

    /** The cycle files (dropping them: writer thread only). */
    HotCycles cycles() {
        return cycles;
    }

    ReadCursors cursors() {
        return cursors;
    }

    /** True when {@code seq} lies in the newest cycle file, the one the writer holds open (or past the head). */
    boolean inNewestCycle(long seq) {
        int last = index.lastCycle();
        return last != Integer.MIN_VALUE && index.cycleOf(seq) == last;
    }

    /** Visits every batch header with a seq ≥ {@code fromSeq}, with the data bytes it holds. Any thread. */
    void scanHeaders(long fromSeq, HeaderVisitor visitor) {
        long from = Math.max(fromSeq, firstSeq);
        if (firstSeq == 0 || from > lastSeq) {
            return;
        }
        try (ExcerptTailer tailer = queue.createTailer()) {
            while (true) { // a damaged excerpt at the start is skipped like one met later (found by BitFlipIT)
                try {
                    if (moveTo(tailer, from) == null) {
                        return;
                    }
                    break;
                } catch (StrandException e) {
                    if (damagedSeq(e) <= 0) {
                        throw e;
                    }
                    LOG.log(System.Logger.Level.ERROR, "skipping a damaged excerpt while counting: " + e.getMessage());
                    if (++from > lastSeq) {
                        return;
                    }
                }
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
                        LOG.log(System.Logger.Level.ERROR,
                                "skipping a damaged excerpt while counting: " + e.getMessage());
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

    @Override
    public void close() {
        appender.close();
        cursors.close(); // before the queue: tailers left open would keep its files mapped
        queue.close();
    }
}

package io.strand.logtier;

import io.strand.core.DiskSpace;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Thread-safe: changed only on its workspace's writer thread (appends through its
 * {@link LogAppender}, trims, dropping hot files); read by any thread up to the committed head,
 * through {@link LogReader}. One open log: its hot queue, its cold part, its retention state.
 * Opened and closed by its {@link LogSlot}.
 *
 * <p>Files in the log directory: {@code queue/} (Chronicle cycle files, see {@link HotExcerptCodec}),
 * {@code meta.json} (creation time, written by earlier versions only: the queue's metadata file now
 * holds it, see {@link HotLog#created}), {@code state.json}
 * (see {@link LogAppender}), {@code retention.json} (the trim point {@code first} and the retention
 * policy, see {@link RetentionFile}).
 */
final class Log implements Roller.RollableLog, AutoCloseable {
    private final String ws;
    private final String name;
    private final Path dir;
    private final HotLog hot;
    private final HeadSignal headSignal;
    private final LogAppender appender;
    /** Creation time from an older version's {@code meta.json}; 0 when the queue keeps it ({@link HotLog#created}). */
    private final long legacyCreated;
    private volatile ColdPart cold = ColdPart.NONE;
    /** Trim point and policy as stored in {@code retention.json}; replaced on the writer thread after the file is durable. */
    private volatile RetentionFile.State retention = RetentionFile.State.NONE;

    private Log(String ws, String name, Path dir, HotLog hot, HeadSignal headSignal, long created) {
        this.ws = ws;
        this.name = name;
        this.dir = dir;
        this.hot = hot;
        this.headSignal = headSignal;
        this.legacyCreated = created;
        this.appender = new LogAppender(ws, name, dir, hot, headSignal);
    }

    static boolean exists(Path dir) {
        return Files.isRegularFile(dir.resolve("meta.json")) || Files.isDirectory(dir.resolve("queue"));
    }

    /**
     * Opens (creating when asked and missing) the log in {@code dir}; null when absent and not
     * creating. Creating the log's files and every append claim their space from {@code disk} first.
     */
    static Log open(String ws, String name, Path dir, LogConfig config, HeadSignal headSignal, boolean create,
                    DiskSpace disk) {
        try {
            long created = 0;
            boolean fresh = false;
            if (exists(dir)) {
                Path meta = dir.resolve("meta.json"); // written by versions before the queue kept "created" itself
                if (Files.isRegularFile(meta)) {
                    created = Json.MAPPER.readTree(meta.toFile()).path("created").asLong();
                }
            } else if (create) {
                disk.require(HotLog.NEW_FILE_BYTES, "creating log " + ws + "/" + name);
                fresh = makeDirectory(dir);
            } else {
                return null;
            }
            HotLog hot = HotLog.open(ws, name, dir.resolve("queue"), config, null, disk, fresh);
            Log log = new Log(ws, name, dir, hot, headSignal, created);
            if (!fresh) { // a directory made just now holds no retention.json, no state.json and no entries
                try {
                    log.retention = RetentionFile.read(dir);
                } catch (RuntimeException e) {
                    hot.close();
                    throw e;
                }
                log.appender.restore();
            }
            headSignal.publish(hot.lastSeq());
            return log;
        } catch (IOException e) {
            StrandException full = disk.outOfSpace(e, "creating log " + ws + "/" + name);
            if (full != null) {
                throw full;
            }
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot open log " + ws + "/" + name + ": " + e.getMessage(),
                    Map.of(), e);
        }
    }

    /** Makes the log's directory; true when this call made it (so it is empty), false when it was there. */
    private static boolean makeDirectory(Path dir) throws IOException {
        try {
            Files.createDirectory(dir);
            return true;
        } catch (FileAlreadyExistsException e) {
            Files.createDirectories(dir); // fails unless it is a directory
            return false;
        } catch (NoSuchFileException e) {
            Files.createDirectories(dir.getParent()); // the workspace's first log
            Files.createDirectory(dir);
            return true;
        }
    }

    /** The writer side; writer thread only. */
    LogAppender appender() {
        return appender;
    }

    /**
     * The last seq written, durable or not: writer thread only. What a change made in a turn must
     * go by (a trim's {@code head+1} bound), since appends earlier in the same group are written but
     * their head is published only once the group is durable, and where groups end is timing, not
     * log order (replicas of a shard group differently).
     */
    long writtenHead() {
        return hot.lastSeq();
    }

    /** The committed head: what readers may see. */
    @Override
    public long head() {
        return headSignal.head();
    }

    /** First readable seq: the trim point, or where the stored entries start when that is later. */
    long first() {
        return Math.max(floor(), storedFirst());
    }

    private long storedFirst() {
        long hotFirst = hot.firstSeq();
        if (hotFirst == 1 || hotFirst == 0) {
            return hotFirst == 1 ? 1 : head() + 1; // nothing can be cold below seq 1
        }
        long coldFirst = cold.firstSeq();
        return coldFirst > 0 ? coldFirst : hotFirst;
    }

    /** The trim point: entries below it are never served (≥ 1; only moves forward). */
    @Override
    public long floor() {
        return retention.first();
    }

    /** The policy set on this log, null when the server's defaults apply. */
    RetentionPolicy policy() {
        return retention.policy();
    }

    /**
     * Replaces the trim point and policy: {@code retention.json} durably first, then what readers
     * see. Writer thread. A write that failed before its rename changed nothing ({@code unavailable});
     * one that failed after it (the directory fsync) may survive a crash, so readers see the new
     * state from now on and the answer is {@code outcome_unknown} (retryable: a retry is a no-op).
     */
    void retention(RetentionFile.State next) {
        try {
            RetentionFile.write(dir, next);
        } catch (IOException e) {
            boolean renamed;
            try {
                renamed = RetentionFile.read(dir).equals(next);
            } catch (RuntimeException unreadable) {
                renamed = false;
            }
            if (renamed) {
                retention = next;
                throw new StrandException(ErrorCode.OUTCOME_UNKNOWN, "the retention state of log " + ws + "/" + name
                        + " was written but may not be durable: " + e.getMessage(), Map.of("retryable", true), e);
            }
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot store the retention state of log " + ws + "/" + name
                    + ": " + e.getMessage(), Map.of(), e);
        }
        retention = next;
    }

    RetentionFile.State retention() {
        return retention;
    }

    /** Data bytes appended over the log's life (trims do not lower it): the basis of its average entry size. */
    @Override
    public long dataBytes() {
        return appender.dataBytes();
    }

    /** First seq still stored in the hot queue, 0 when it holds none (rolled seqs stay there until their cycle file goes). */
    long hotStoredFirst() {
        return hot.firstSeq();
    }

    /** First seq not yet in the cold tier (entries before it may still be physically hot until their cycle file goes). */
    long hotFirst() {
        long f = hot.firstSeq();
        if (f == 0) {
            return head() + 1;
        }
        return Math.max(Math.max(f, safeColdLast() + 1), floor());
    }

    private long safeColdLast() {
        try {
            return cold.lastSeq();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    @Override
    public long readHot(long from, long to, LogReader.Limit limit) {
        return hot.reader().read(from, to, limit);
    }

    @Override
    public String describeHot(long seq) {
        return hot.describe(seq);
    }

    /**
     * Deletes the hot cycle files wholly below {@code keepFrom} (rolled to cold, or trimmed), after
     * a snapshot of the producer window so duplicates of retained windows are still answered after
     * a restart. Writer thread only.
     */
    @Override
    public int dropHotBefore(long keepFrom) {
        appender.snapshot();
        return hot.cycles().dropBefore(keepFrom);
    }

    /** The first retained seq with ts ≥ {@code ts} (binary search: ts never decreases within a log), or head+1. */
    @Override
    public long seqAtOrAfter(long ts) {
        return Math.max(storedSeqAtOrAfter(ts), first());
    }

    private long storedSeqAtOrAfter(long ts) {
        long head = head();
        long hotStart = hot.firstSeq();
        HotReader reader = hot.reader();
        if (hotStart > 1 && (head < hotStart || reader.tsOf(hotStart) > ts)) {
            long coldHit = cold.seqAtOrAfter(ts); // only when the answer may lie before the hot part
            if (coldHit > 0) {
                return coldHit;
            }
        }
        long lo = Math.max(hot.firstSeq(), 1);
        long hi = head;
        if (hot.firstSeq() == 0 || lo > hi) {
            return head + 1;
        }
        long found = head + 1;
        while (lo <= hi) {
            long mid = (lo + hi) >>> 1;
            if (reader.tsOf(mid) >= ts) {
                found = mid;
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        return found;
    }

    /** @param defaults the server's retention defaults, shown when the log has no policy of its own */
    LogInfo info(RetentionPolicy defaults) {
        long head = head();
        long first = first();
        RetentionPolicy policy = policy();
        return new LogInfo(name, first, head, hotFirst(), Math.max(0, head - first + 1), dataBytes(), cold.segments(), legacyCreated > 0 ? legacyCreated : hot.created(),
                policy != null ? policy : defaults, policy == null, hot.cycles().diskBytes(), cold.bytes());
    }

    HotLog hot() {
        return hot;
    }

    void cold(ColdPart part) {
        this.cold = part;
    }

    ColdPart cold() {
        return cold;
    }

    /** Closes the queue after a snapshot of the producer window (idle close, shutdown). */
    @Override
    public void close() {
        appender.snapshotOnClose();
        hot.close();
    }

    /** Closes the queue without a snapshot: its files are about to be deleted. Writer thread. */
    void discard() {
        hot.close();
    }
}

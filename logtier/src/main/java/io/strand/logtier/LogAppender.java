package io.strand.logtier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.DurableFiles;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import io.strand.core.WriteAheadLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import net.openhft.chronicle.bytes.Bytes;

/**
 * Owned by the log's workspace writer thread ({@link Writers}); only {@link #dataBytes} is read by
 * other threads. The writer side of one open log: checks a request against the log (producer
 * window, {@code expectedLastSeq}), appends its batch to the hot queue ({@link HotAppender}),
 * logs the write-ahead record, and publishes the new head once the group is durable, so readers
 * never see an entry before it is.
 *
 * <p>The size limits of a request are checked once, before its turn is queued ({@link #check}).
 *
 * <p>{@code state.json} beside the queue is written here: {@code {"coveredSeq":N,"bytes":B,
 * "producers":[[producerId, producerSeq, firstSeq, lastSeq], …]}}, the producer window and byte
 * count up to {@code coveredSeq}, every {@value #SNAPSHOT_EVERY} entries and on close. It is
 * advisory (written atomically, never forced): entries after {@code coveredSeq} are rescanned on
 * open, so a stale, missing or unreadable snapshot costs time, never correctness.
 */
final class LogAppender {
    private static final int SNAPSHOT_EVERY = 50_000;
    private static final int CLOSE_SNAPSHOT_MIN = 1_000;
    private static final int MAX_PRODUCERS = 10_000;

    private final String name;
    /** {@code ws/name}: how write-ahead records name this log. */
    private final String walKey;
    private final Path dir;
    private final HotLog hot;
    private final HotAppender appender;
    private final HeadSignal headSignal;
    private final ProducerWindow producers = new ProducerWindow(MAX_PRODUCERS);
    /** Data bytes appended over the log's life; written here, read by any thread. */
    private volatile long bytes;
    private long appendedSinceSnapshot;

    LogAppender(String ws, String name, Path dir, HotLog hot, HeadSignal headSignal) {
        this.name = name;
        this.walKey = ws + '/' + name;
        this.dir = dir;
        this.hot = hot;
        this.appender = hot.appender();
        this.headSignal = headSignal;
    }

    /** Refuses a request over the entry, batch-entries or batch-bytes limit; any thread, before its turn. */
    static void check(AppendRequest req, LogConfig config) {
        int n = req.data().size();
        if (n == 0) {
            throw StrandException.badRequest("an append needs at least one entry");
        }
        if (n > config.maxBatchEntries()) {
            throw StrandException.tooLarge("a batch holds at most " + config.maxBatchEntries() + " entries, got " + n);
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            int size = req.data().get(i).length;
            if (size > config.maxEntryBytes()) {
                throw new StrandException(ErrorCode.TOO_LARGE, "entry " + i + " data is " + size
                        + " bytes; the limit is " + config.maxEntryBytes(), Map.of("index", i));
            }
            total += size;
        }
        if (total > config.maxBatchBytes()) {
            throw StrandException.tooLarge("batch is " + total + " bytes; the limit is " + config.maxBatchBytes());
        }
    }

    /** At open: the producer window and byte count from {@code state.json}, then from the entries after it. */
    void restore() {
        long covered = 0;
        Path state = dir.resolve("state.json");
        if (Files.isRegularFile(state)) {
            try {
                JsonNode s = Json.MAPPER.readTree(state.toFile());
                covered = s.path("coveredSeq").asLong();
                bytes = s.path("bytes").asLong();
                for (JsonNode row : s.path("producers")) {
                    producers.record(row.get(0).asText(), row.get(1).asLong(), row.get(2).asLong(), row.get(3).asLong());
                }
            } catch (IOException | RuntimeException e) {
                covered = 0; // unreadable snapshot: rebuild from the queue
                bytes = 0;
            }
        }
        if (covered > hot.lastSeq()) {
            covered = 0; // snapshot ahead of the queue cannot be trusted
            bytes = 0;
        }
        hot.scanHeaders(covered + 1, (h, dataBytes) -> {
            bytes += dataBytes;
            if (h.producerId() != null) {
                producers.record(h.producerId(), h.producerSeq(), h.firstSeq(), h.lastSeq());
            }
        });
    }

    /**
     * On close: a snapshot only when at least {@value #CLOSE_SNAPSHOT_MIN} entries came after the last
     * one. Below that, the next open rebuilds the same state by reading those few headers
     * ({@link #restore}), which costs less than the file this would write: on a server creating logs,
     * the idle close of each new one-entry log spent more kernel time making {@code state.json} (a new
     * inode, then a rename) than anything else the reaper did (perf, 2026-12-02).
     */
    void snapshotOnClose() {
        if (appendedSinceSnapshot >= CLOSE_SNAPSHOT_MIN) {
            snapshot();
        }
    }

    /** Writes {@code state.json} (the producer window and byte count): before hot files are dropped, every {@value #SNAPSHOT_EVERY} entries, and on close ({@link #snapshotOnClose}). */
    void snapshot() {
        ObjectNode s = Json.MAPPER.createObjectNode();
        s.put("coveredSeq", hot.lastSeq());
        s.put("bytes", bytes);
        ArrayNode rows = s.putArray("producers");
        for (Object[] row : producers.rows()) {
            rows.addArray().add((String) row[0]).add((Long) row[1]).add((Long) row[2]).add((Long) row[3]);
        }
        try {
            DurableFiles.writeAtomically(dir.resolve("state.json"), Json.bytes(s), false); // advisory: never worth a flush on idle close
            appendedSinceSnapshot = 0;
        } catch (IOException e) {
            // The snapshot only saves start-up time; the queue stays the truth.
        }
    }

    /** Appends a batch; the caller's commit syncs the queue (or the write-ahead log) and then publishes the head. */
    AppendResult append(AppendRequest req, Writers.Commit commit, String durable) {
        if (req.producerId() != null) {
            ProducerWindow.Applied seen = producers.find(req.producerId(), req.producerSeq());
            if (seen != null) {
                return new AppendResult(seen.firstSeq(), seen.lastSeq(), hot.lastTs(), durable, true);
            }
            requireNotStale(req);
        }
        // The hot queue always holds the newest entries (its last cycle file is never dropped), so the
        // head never needs the object store: appends keep working while it is down.
        requireHead(name, req, hot.lastSeq());
        long first = appender.append(req.stampOr(System.currentTimeMillis()), req.data(), req.keys(),
                req.producerId(), req.producerSeq() == null ? 0 : req.producerSeq());
        long last = hot.lastSeq();
        long added = 0;
        for (byte[] d : req.data()) {
            added += d.length;
        }
        applied(req.producerId(), req.producerSeq() == null ? 0 : req.producerSeq(), first, last, added);
        snapshotEvery(req.data().size());
        if (commit.logging()) {
            commit.log(LogStore.WAL_APPEND, appender.lastExcerptKeyed(walKey));
        }
        commit.afterDurable(() -> headSignal.publish(last));
        return new AppendResult(first, last, hot.lastTs(), durable, false);
    }

    /**
     * Checks {@code req} against this log as {@link #append} would and encodes its batch excerpt
     * with the seqs and ts it will get, writing nothing (the first half of a txn's append). A repeat
     * of an applied (producerId, producerSeq) is refused with {@code duplicate} and the original seqs.
     * Nothing may append to this log before {@link #applyStaged}.
     */
    byte[] stage(AppendRequest req) {
        if (req.producerId() != null) {
            ProducerWindow.Applied seen = producers.find(req.producerId(), req.producerSeq());
            if (seen != null) {
                throw new StrandException(ErrorCode.DUPLICATE, "producerSeq " + req.producerSeq() + " of producer '"
                        + req.producerId() + "' was applied to log " + name + " already (seqs " + seen.firstSeq() + ".."
                        + seen.lastSeq() + "): the txn it came with was applied before, nothing changed",
                        Map.of("firstSeq", seen.firstSeq(), "lastSeq", seen.lastSeq()));
            }
            requireNotStale(req);
        }
        long head = hot.lastSeq();
        requireHead(name, req, head);
        byte[] excerpt = encode(req, head + 1, Math.max(req.stampOr(System.currentTimeMillis()), hot.lastTs()));
        appender.prepareStaged(excerpt.length, req.data().size());
        return excerpt;
    }

    /**
     * As {@link #stage} for a log that does not exist yet (it ends at seq 0 and has seen no producer),
     * so a refused txn creates no log: the log is created when the txn applies.
     */
    static byte[] stageFirst(String name, AppendRequest req) {
        requireHead(name, req, 0);
        return encode(req, 1, req.stampOr(System.currentTimeMillis()));
    }

    /** Appends an excerpt made by {@link #stage} (the second half); the caller's commit publishes the head once durable. */
    AppendResult applyStaged(byte[] excerpt, Writers.Commit commit, String durable) {
        HotExcerptCodec.Header h = HotExcerptCodec.readHeader(Bytes.wrapForRead(excerpt));
        if (h.firstSeq() != hot.lastSeq() + 1) {
            throw new IllegalStateException("log " + walKey + " moved between stage and apply");
        }
        appender.replay(excerpt);
        appliedExcerpt(excerpt);
        snapshotEvery(h.count());
        if (commit.logging()) {
            commit.log(LogStore.WAL_APPEND, WriteAheadLog.keyed(walKey, excerpt));
        }
        long last = h.lastSeq();
        commit.afterDurable(() -> headSignal.publish(last));
        return new AppendResult(h.firstSeq(), last, h.ts(), durable, false);
    }

    /** Re-applies a batch an earlier run logged ahead (at start-up); a batch already here is skipped. */
    void replay(byte[] excerpt) {
        if (!appender.replay(excerpt)) {
            return;
        }
        appliedExcerpt(excerpt);
        headSignal.publish(hot.lastSeq());
    }

    /** Data bytes appended over the log's life (trims do not lower it). Any thread. */
    long dataBytes() {
        return bytes;
    }

    /** Counts a stored excerpt's bytes and producer, as {@link #append} counts its batch. */
    private void appliedExcerpt(byte[] excerpt) {
        var in = Bytes.wrapForRead(excerpt);
        HotExcerptCodec.Header h = HotExcerptCodec.readHeader(in);
        applied(h.producerId(), h.producerSeq(), h.firstSeq(), h.lastSeq(), HotExcerptCodec.dataBytes(in, h.count()));
    }

    private void applied(String producerId, long producerSeq, long first, long last, long dataBytes) {
        bytes += dataBytes;
        if (producerId != null) {
            producers.record(producerId, producerSeq, first, last);
        }
    }

    /** After {@code entries} more were appended: a snapshot every {@value #SNAPSHOT_EVERY} (not during replay). */
    private void snapshotEvery(int entries) {
        appendedSinceSnapshot += entries;
        if (appendedSinceSnapshot >= SNAPSHOT_EVERY) {
            snapshot();
        }
    }

    /** Refuses a producerSeq older than this log's retry window (append and stage alike). */
    private void requireNotStale(AppendRequest req) {
        if (producers.isStale(req.producerId(), req.producerSeq())) {
            throw new StrandException(ErrorCode.PRODUCER_SEQ_STALE, "producerSeq " + req.producerSeq()
                    + " of producer '" + req.producerId() + "' is older than the retry window of log " + name);
        }
    }

    /** Refuses {@code req} when it names an {@code expectedLastSeq} other than the log's {@code head}. */
    private static void requireHead(String name, AppendRequest req, long head) {
        if (req.expectedLastSeq() != null && req.expectedLastSeq() != head) {
            throw seqMismatch(name, req, head);
        }
    }

    /** The {@code 409 seq_mismatch} of {@code req} against a log that ends at {@code head}. */
    static StrandException seqMismatch(String name, AppendRequest req, long head) {
        return new StrandException(ErrorCode.SEQ_MISMATCH, "log " + name + " ends at seq " + head
                + ", not " + req.expectedLastSeq(), Map.of("head", head));
    }

    private static byte[] encode(AppendRequest req, long firstSeq, long ts) {
        var out = Bytes.allocateElasticOnHeap(1024);
        try {
            HotExcerptCodec.writeEntries(out, firstSeq, ts, req.data(), req.keys(),
                    req.producerId(), req.producerSeq() == null ? 0 : req.producerSeq());
            return out.toByteArray();
        } finally {
            out.releaseLast();
        }
    }
}

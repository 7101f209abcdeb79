package io.strand.logtier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.DurableFiles;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * One open log: its hot queue, its cold part, its idempotent-producer window and counters.
 * Appends run only on the workspace's writer thread ({@link Writers}); reads run on any thread
 * and see entries up to the committed head only, so nothing undurable is ever served.
 *
 * <p>Files in the log directory: {@code queue/} (Chronicle cycle files), {@code meta.json}
 * (creation time; written once, before the first entry), {@code state.json} (a snapshot of the
 * producer window and byte count up to {@code coveredSeq}; entries after it are rescanned on open,
 * so a stale or missing snapshot costs time, never correctness), {@code retention.json} (the trim
 * point {@code first} and the retention policy, see {@link RetentionFile}).
 */
final class Log implements AutoCloseable {
    private static final int SNAPSHOT_EVERY = 50_000;
    private static final int MAX_PRODUCERS = 10_000;

    private final String ws;
    private final String name;
    /** {@code ws/name}: how write-ahead records name this log. */
    private final String walKey;
    private final Path dir;
    private final HotLog hot;
    private final HeadSignal headSignal;
    private final ProducerWindow producers = new ProducerWindow(MAX_PRODUCERS);
    private final long created;
    private volatile ColdPart cold = ColdPart.NONE;
    private volatile long bytes;
    /** Trim point and policy as stored in {@code retention.json}; replaced on the writer thread after the file is durable. */
    private volatile RetentionFile.State retention = RetentionFile.State.NONE;
    private long appendedSinceSnapshot;

    private Log(String ws, String name, Path dir, HotLog hot, HeadSignal headSignal, long created) {
        this.ws = ws;
        this.name = name;
        this.walKey = ws + '/' + name;
        this.dir = dir;
        this.hot = hot;
        this.headSignal = headSignal;
        this.created = created;
    }

    static boolean exists(Path dir) {
        return Files.isRegularFile(dir.resolve("meta.json")) || Files.isDirectory(dir.resolve("queue"));
    }

    /** Opens (creating when asked and missing) the log in {@code dir}; null when absent and not creating. */
    static Log open(String ws, String name, Path dir, LogConfig config, HeadSignal headSignal, boolean create) {
        return open(ws, name, dir, config, headSignal, create, io.strand.core.DiskSpace.unlimited(dir));
    }

    /** As above; creating the log's files and every append claim their space from {@code disk} first. */
    static Log open(String ws, String name, Path dir, LogConfig config, HeadSignal headSignal, boolean create,
                    io.strand.core.DiskSpace disk) {
        try {
            long created;
            if (exists(dir)) {
                Path meta = dir.resolve("meta.json");
                created = Files.isRegularFile(meta) ? Json.MAPPER.readTree(meta.toFile()).path("created").asLong() : 0;
            } else if (create) {
                disk.require(HotLog.NEW_FILE_BYTES, "creating log " + ws + "/" + name);
                Files.createDirectories(dir);
                created = System.currentTimeMillis();
                ObjectNode meta = Json.MAPPER.createObjectNode().put("created", created).put("format", 1);
                // not forced: the queue is the log's truth and is synced with the first ack; meta only adds "created"
                writeAtomically(dir.resolve("meta.json"), Json.bytes(meta), false);
            } else {
                return null;
            }
            HotLog hot = HotLog.open(ws, name, dir.resolve("queue"), config, null, disk);
            Log log = new Log(ws, name, dir, hot, headSignal, created);
            try {
                log.retention = RetentionFile.read(dir);
            } catch (RuntimeException e) {
                hot.close();
                throw e;
            }
            log.restoreState();
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

    private void restoreState() throws IOException {
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

    /** Writes the producer window and byte count; writer thread (or close). */
    void snapshot() {
        ObjectNode s = Json.MAPPER.createObjectNode();
        s.put("coveredSeq", hot.lastSeq());
        s.put("bytes", bytes);
        ArrayNode rows = s.putArray("producers");
        for (Object[] row : producers.rows()) {
            rows.addArray().add((String) row[0]).add((Long) row[1]).add((Long) row[2]).add((Long) row[3]);
        }
        try {
            writeAtomically(dir.resolve("state.json"), Json.bytes(s), false); // advisory: never worth a flush on idle close
            appendedSinceSnapshot = 0;
        } catch (IOException e) {
            // The snapshot only saves start-up time; the queue stays the truth.
        }
    }

    static void writeAtomically(Path target, byte[] content, boolean force) throws IOException {
        DurableFiles.writeAtomically(target, content, force);
    }

    /** Appends on the writer thread; the caller's commit syncs the queue and publishes the head. */
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
        long head = hot.lastSeq();
        requireHead(name, req, head);
        long first = hot.append(req.stampOr(System.currentTimeMillis()), req.data(), req.keys(),
                req.producerId(), req.producerSeq() == null ? 0 : req.producerSeq());
        long last = hot.lastSeq();
        for (byte[] d : req.data()) {
            bytes += d.length;
        }
        if (req.producerId() != null) {
            producers.record(req.producerId(), req.producerSeq(), first, last);
        }
        appendedSinceSnapshot += req.data().size();
        if (appendedSinceSnapshot >= SNAPSHOT_EVERY) {
            snapshot();
        }
        if (commit.logging()) {
            commit.log(LogStore.WAL_APPEND, hot.lastExcerptKeyed(walKey));
        }
        commit.afterDurable(() -> headSignal.publish(last));
        return new AppendResult(first, last, hot.lastTs(), durable, false);
    }

    /**
     * Validates {@code req} against this log as {@link #append} would and encodes its batch excerpt
     * with the seqs and ts it will get, writing nothing (the first half of a txn's append). A repeat
     * of an applied (producerId, producerSeq) is refused with {@code duplicate} and the original seqs.
     * Writer thread only; nothing may append to this log before {@link #applyStaged}.
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
        hot.prepareStaged(excerpt.length, req.data().size());
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
            throw new StrandException(ErrorCode.SEQ_MISMATCH, "log " + name + " ends at seq " + head
                    + ", not " + req.expectedLastSeq(), Map.of("head", head));
        }
    }

    private static byte[] encode(AppendRequest req, long firstSeq, long ts) {
        var out = net.openhft.chronicle.bytes.Bytes.allocateElasticOnHeap(1024);
        try {
            HotExcerptCodec.writeEntries(out, firstSeq, ts, req.data(), req.keys(),
                    req.producerId(), req.producerSeq() == null ? 0 : req.producerSeq());
            return out.toByteArray();
        } finally {
            out.releaseLast();
        }
    }

    /** This log's write-ahead payload for a staged excerpt: what replay applies. */
    byte[] keyed(byte[] excerpt) {
        return io.strand.core.WriteAheadLog.keyed(walKey, excerpt);
    }

    /** Appends an excerpt made by {@link #stage} (the second half); the caller's commit publishes the head once durable. */
    AppendResult applyStaged(byte[] excerpt, Writers.Commit commit, String durable) {
        HotExcerptCodec.Header h = HotExcerptCodec.readHeader(net.openhft.chronicle.bytes.Bytes.wrapForRead(excerpt));
        if (h.firstSeq() != hot.lastSeq() + 1) {
            throw new IllegalStateException("log " + walKey + " moved between stage and apply");
        }
        hot.replay(excerpt);
        var in = net.openhft.chronicle.bytes.Bytes.wrapForRead(excerpt);
        HotExcerptCodec.readHeader(in);
        bytes += HotExcerptCodec.dataBytes(in, h.count());
        if (h.producerId() != null) {
            producers.record(h.producerId(), h.producerSeq(), h.firstSeq(), h.lastSeq());
        }
        appendedSinceSnapshot += h.count();
        if (appendedSinceSnapshot >= SNAPSHOT_EVERY) {
            snapshot();
        }
        if (commit.logging()) {
            commit.log(LogStore.WAL_APPEND, keyed(excerpt));
        }
        long last = h.lastSeq();
        commit.afterDurable(() -> headSignal.publish(last));
        return new AppendResult(h.firstSeq(), last, h.ts(), durable, false);
    }

    /** Re-applies a batch an earlier run logged ahead (writer thread, at start-up); a batch already here is skipped. */
    void replay(byte[] excerpt) {
        if (!hot.replay(excerpt)) {
            return;
        }
        var in = net.openhft.chronicle.bytes.Bytes.wrapForRead(excerpt);
        HotExcerptCodec.Header h = HotExcerptCodec.readHeader(in);
        bytes += HotExcerptCodec.dataBytes(in, h.count());
        if (h.producerId() != null) {
            producers.record(h.producerId(), h.producerSeq(), h.firstSeq(), h.lastSeq());
        }
        headSignal.publish(hot.lastSeq());
    }

    /** The committed head: what readers may see. */
    long head() {
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
    long floor() {
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
    long dataBytes() {
        return bytes;
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

    /**
     * Entries {@code from ≤ seq ≤ min(toSeq, head)} across cold and hot, in order, into {@code sink};
     * returns the next seq. The first entry delivered is always {@code from} itself (or nothing is):
     * each step reads the hot/cold boundary once and asks the side that holds the next seq, and the
     * hot side never serves a later seq instead (see {@link HotLog#read}). When a roll drops the hot
     * files of the next seq in between, that side delivers nothing and the next step finds the seq
     * cold: rolls commit the manifest before they drop hot files, so one side always has it.
     */
    long read(long from, long toSeq, int maxEntries, long maxBytes, EntrySink sink) {
        Counter counter = new Counter(sink);
        long upTo = Math.min(toSeq, head());
        long next = from;
        int stalls = 0;
        while (next <= upTo && counter.count < maxEntries && (counter.count == 0 || counter.weight < maxBytes)) {
            long before = next;
            long hotFirst = hot.firstSeq();
            int entries = maxEntries - counter.count;
            long weight = counter.count == 0 ? maxBytes : Math.max(1, maxBytes - counter.weight);
            if (hotFirst == 0 || next < hotFirst) {
                long coldLast = cold.lastSeq();
                if (coldLast < next) {
                    break; // on neither side: not written, or trimmed (the caller's first and gap say so)
                }
                next = cold.read(next, Math.min(upTo, coldLast), entries, weight,
                        e -> counter.entry(e.seq(), e.ts(), e.key(), e.data(), 0, e.data().length));
            } else {
                next = hot.read(next, upTo, entries, weight, counter);
            }
            if (next == before && ++stalls > 2) {
                break; // neither side moved: a short page, never a skipped seq
            }
        }
        return next;
    }

    /** Counts what passes to the sink, so the hot part of a read continues the cold part's limits. */
    private static final class Counter implements EntrySink {
        private final EntrySink sink;
        int count;
        long weight;

        Counter(EntrySink sink) {
            this.sink = sink;
        }

        @Override
        public void entry(long seq, long ts, String key, byte[] data, int offset, int length) {
            count++;
            weight += Entry.weight(length, key);
            sink.entry(seq, ts, key, data, offset, length);
        }
    }

    /**
     * True when a forward read from {@code from} needs nothing but this open log's newest hot cycle
     * file (which the writer holds mapped) and cold bounds already in memory: no file to open, no
     * object-store round trip. Such a read may run on a socket's own thread.
     */
    boolean readsInPlace(long from) {
        long hotFirst = hot.firstSeq();
        return hotFirst > 0 && from >= hotFirst && (hotFirst == 1 || cold.inMemory()) && hot.inNewestCycle(from);
    }

    /** The first retained seq with ts ≥ {@code ts} (binary search: ts never decreases within a log), or head+1. */
    long seqAtOrAfter(long ts) {
        return Math.max(storedSeqAtOrAfter(ts), first());
    }

    private long storedSeqAtOrAfter(long ts) {
        long head = head();
        long hotStart = hot.firstSeq();
        if (hotStart > 1 && (head < hotStart || hot.tsOf(hotStart) > ts)) {
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
            if (hot.tsOf(mid) >= ts) {
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
        return new LogInfo(name, first, head, hotFirst(), Math.max(0, head - first + 1), bytes, cold.segments(), created,
                policy != null ? policy : defaults, policy == null, hot.diskBytes(), cold.bytes());
    }

    LogInfo info() {
        return info(RetentionPolicy.UNLIMITED);
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

    @Override
    public void close() {
        snapshot();
        hot.close();
    }
}

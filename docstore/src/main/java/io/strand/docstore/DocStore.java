package io.strand.docstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.DiskSpace;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Thread-safe facade: reads run on the caller's thread against the durable view; every change runs as a turn on
 * its workspace's writer thread ({@link Writers}, owner = workspace name), so each doc has exactly one writer at a
 * time. Docs: small JSON objects with single-writer, atomic updates (SPEC §5, §6).
 *
 * <p>This class is the public API and the wiring; one class per role does the work: {@link DocRecovery} opens the
 * store, {@link TurnSubmitter} hands each op's turn to its writer, {@link DocWriter} runs the turn (through the
 * {@link DocOverlay} of unpublished changes, {@link DocCapacity} and the thread's {@link JournalLanes journal
 * lane}), {@link DocPublisher} shows a change to readers once its group is durable, and {@link DocCheckpointer}
 * bounds replay and journal size in the background. Readers therefore never see a change that is not durable,
 * and a later turn in the same batch sees earlier turns' results. Names are validated once, into a
 * {@link DocId}; paths are parsed once, into the ops' {@link DocPath}s.
 *
 * <p>Close this store after the {@link Writers} have stopped submitting doc turns; {@link #close()} waits for
 * turns it submitted and then writes the clean-shutdown marker.
 */
public final class DocStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DocStore.class.getName());
    static final String JOURNAL_DIR = "journal";
    /**
     * The map view: derived state, rebuilt from {@link #SNAPSHOT_FILE} and the journal when it (or the
     * checkpoint) is missing, and sized by capacity, not content, so a copy of the store may leave it out.
     */
    public static final String MAP_FILE = "docs.cm3";
    static final String SNAPSHOT_FILE = "docs.snapshot";
    /** Says how far the map reflects the journal; without it (or the map) start-up rebuilds the map. */
    public static final String CHECKPOINT_FILE = "docs.checkpoint";
    /** Write-ahead record type ({@link io.strand.core.WalRecordType}): one {@link DocJournal} record (a doc's whole new value, or a tombstone). */
    static final byte WAL_CHANGE = io.strand.core.WalRecordType.DOC_CHANGE;
    public static final String LOCK_FILE = "docstore.lock";
    /** Largest page of {@link #list}. */
    public static final int MAX_LIST_LIMIT = 1000;
    /**
     * Deepest a doc may nest (the root object is level 1; each object or array inside adds one), checked on
     * the doc a write would produce, inside its turn. Below {@link Json#MAX_INPUT_DEPTH} with room for the
     * envelopes that carry a doc one or two levels down (a reply {@code {"value":doc}}, an error's
     * {@code {"error":{"value":doc}}}), so every doc the store accepts can be sent back and parsed by a
     * client with the same input limit.
     */
    public static final int MAX_DEPTH = Json.MAX_INPUT_DEPTH - 8;

    private final DocStoreConfig config;
    private final Path dir;
    private final DocMetrics metrics = new DocMetrics();
    private final DocIndex index = new DocIndex();
    private final DocCapacity capacity;
    private final FileChannel lockChannel;
    private final DocJournal journal;
    private final DocView view;
    private final DocPublisher publisher;
    private final JournalLanes lanes;
    private final DocCheckpointer checkpointer;
    private final DocWriter writer;
    private final TurnSubmitter turns;

    public DocStore(DocStoreConfig config, Writers writers) {
        this(config, writers, DiskSpace.of(config.dataDir(), DiskSpace.DEFAULT_RESERVE_BYTES));
    }

    /** As above, doc writes claiming their space from {@code disk} (the guard the log store and write-ahead log share). */
    public DocStore(DocStoreConfig config, Writers writers, DiskSpace disk) {
        this.config = config;
        this.dir = config.dataDir();
        this.capacity = new DocCapacity(config, disk);
        DocRecovery.Started started = new DocRecovery(config).open(index, capacity, metrics);
        this.lockChannel = started.lock();
        this.journal = started.journal();
        this.view = started.view();
        this.publisher = new DocPublisher(view, index, metrics);
        DocOverlay overlay = new DocOverlay(publisher);
        this.lanes = new JournalLanes(journal, started.lastIndex(), capacity, p -> {
            publisher.publish(p);
            overlay.remove(p);
        });
        this.checkpointer = new DocCheckpointer(config, view, journal, lanes::appliedThrough, metrics,
                started.lastIndex(), started.snapshotIndex(), started.replayed());
        this.writer = new DocWriter(writers, config, capacity, overlay, publisher, lanes, checkpointer, metrics);
        this.turns = new TurnSubmitter(writers, metrics);
        checkpointer.start();
        writers.onReplay(WAL_CHANGE, payload -> replay(io.strand.core.WriteAheadLog.rest(payload)));
    }

    /** Re-applies a change an earlier run logged ahead ({@link DocWriter#replay}). */
    private CompletableFuture<Void> replay(byte[] encoded) {
        return writer.replay(encoded);
    }

    // ---------------------------------------------------------------- reads

    /** The doc's durable version and value; empty when it does not exist. */
    public Optional<DocValue> get(String ws, String doc) {
        return get(DocId.of(ws, doc));
    }

    /** {@link #get(String, String)} of a validated doc id. */
    public Optional<DocValue> get(DocId id) {
        metrics.op(DocMetrics.Kind.GET);
        StoredDoc s = publisher.durable(id.key());
        return s == null ? Optional.empty() : Optional.of(new DocValue(s.version(), s.parse()));
    }

    /** Doc names of {@code ws} in ascending order, strictly after {@code after} (null = from the start). */
    public DocPage list(String ws, String after, int limit) {
        Names.workspace(ws);
        metrics.op(DocMetrics.Kind.LIST);
        if (limit < 1 || limit > MAX_LIST_LIMIT) {
            throw StrandException.badRequest("limit must be 1.." + MAX_LIST_LIMIT + ", not " + limit);
        }
        return index.page(ws, after, limit);
    }

    /** Workspaces holding at least one doc, in name order. */
    public List<String> workspaces() {
        return index.workspaces();
    }

    /**
     * How many docs {@code ws} holds and their stored JSON bytes, read doc by doc (cost grows with the
     * workspace's doc count; for the inventory, not for a hot path).
     */
    public DocUsage usage(String ws) {
        Names.workspace(ws);
        long docs = 0;
        long bytes = 0;
        for (String doc : index.docs(ws)) {
            StoredDoc s = publisher.durable(DocId.known(ws, doc).key());
            if (s != null) {
                docs++;
                bytes += s.json().length;
            }
        }
        return new DocUsage(docs, bytes);
    }

    /** A workspace's doc count and stored JSON bytes. */
    public record DocUsage(long docs, long bytes) {
    }

    // ---------------------------------------------------------------- writes

    /**
     * Replaces the doc with {@code value}. {@code expectVersion}: null = any, 0 = must not exist, v = must be
     * at v; otherwise {@code version_conflict} with {@code version} and {@code value} (current, null if missing).
     *
     * @return the new version, once durable
     */
    public CompletableFuture<Long> put(String ws, String doc, ObjectNode value, Long expectVersion) {
        return turns.submit(DocMetrics.Kind.PUT, () -> DocId.of(ws, doc), writer.put(value, expectVersion));
    }

    /** {@link #put(String, String, ObjectNode, Long)} of a validated doc id. */
    public CompletableFuture<Long> put(DocId id, ObjectNode value, Long expectVersion) {
        return turns.submit(DocMetrics.Kind.PUT, () -> id, writer.put(value, expectVersion));
    }

    /** {@link Op.Cas}: sets {@code path} to {@code value} iff it equals {@code expect} (missing = null). */
    public CompletableFuture<DocValue> cas(String ws, String doc, String path, JsonNode expect, JsonNode value) {
        return turns.submit(DocMetrics.Kind.CAS, () -> DocId.of(ws, doc),
                writer.one(() -> new Op.Cas(DocPath.parse(path), expect, value), DocStore::casReply));
    }

    /** {@link #cas(String, String, String, JsonNode, JsonNode)} with a parsed op ({@link DocOps#parseCas}). */
    public CompletableFuture<DocValue> cas(String ws, String doc, Op.Cas op) {
        return turns.submit(DocMetrics.Kind.CAS, () -> DocId.of(ws, doc), writer.one(() -> op, DocStore::casReply));
    }

    /** {@link #cas(String, String, Op.Cas)} of a validated doc id. */
    public CompletableFuture<DocValue> cas(DocId id, Op.Cas op) {
        return turns.submit(DocMetrics.Kind.CAS, () -> id, writer.one(() -> op, DocStore::casReply));
    }

    private static DocValue casReply(Prepared p) {
        return new DocValue(p.version, p.value);
    }

    /** {@link Op.Incr}: 64-bit add at {@code path}, refused (never clamped) past {@code floor}/{@code ceiling}. */
    public CompletableFuture<IncrResult> incr(String ws, String doc, String path, long delta, Long floor, Long ceiling) {
        return turns.submit(DocMetrics.Kind.INCR, () -> DocId.of(ws, doc),
                writer.one(() -> new Op.Incr(DocPath.parse(path), delta, floor, ceiling), DocStore::incrReply));
    }

    /** {@link #incr(String, String, String, long, Long, Long)} with a parsed op ({@link DocOps#parseIncr}). */
    public CompletableFuture<IncrResult> incr(String ws, String doc, Op.Incr op) {
        return turns.submit(DocMetrics.Kind.INCR, () -> DocId.of(ws, doc), writer.one(() -> op, DocStore::incrReply));
    }

    /** {@link #incr(String, String, Op.Incr)} of a validated doc id. */
    public CompletableFuture<IncrResult> incr(DocId id, Op.Incr op) {
        return turns.submit(DocMetrics.Kind.INCR, () -> id, writer.one(() -> op, DocStore::incrReply));
    }

    private static IncrResult incrReply(Prepared p) {
        return new IncrResult(p.results.getFirst().longValue(), p.version);
    }

    /**
     * Applies {@code ops} in order in one turn, all or nothing. A missing doc starts as {@code {}}. The
     * failing op's error carries {@code index}; a wrong {@code expectVersion} is {@code version_conflict}.
     */
    public CompletableFuture<DocValue> apply(String ws, String doc, List<Op> ops, Long expectVersion) {
        return turns.submit(DocMetrics.Kind.APPLY, () -> DocId.of(ws, doc), writer.apply(ops, expectVersion));
    }

    /** {@link #apply(String, String, List, Long)} of a validated doc id. */
    public CompletableFuture<DocValue> apply(DocId id, List<Op> ops, Long expectVersion) {
        return turns.submit(DocMetrics.Kind.APPLY, () -> id, writer.apply(ops, expectVersion));
    }

    /**
     * Deletes the doc. Missing doc: {@code not_found} (or {@code version_conflict} when a version ≥ 1 was
     * expected). Versions restart at 1 if the doc is created again.
     *
     * @return the version that was deleted
     */
    public CompletableFuture<Long> delete(String ws, String doc, Long expectVersion) {
        return turns.submit(DocMetrics.Kind.DELETE, () -> DocId.of(ws, doc), writer.delete(expectVersion));
    }

    /** {@link #delete(String, String, Long)} of a validated doc id. */
    public CompletableFuture<Long> delete(DocId id, Long expectVersion) {
        return turns.submit(DocMetrics.Kind.DELETE, () -> id, writer.delete(expectVersion));
    }

    // ---------------------------------------------------------------- turn-level API (for txn)

    /**
     * A validated change to one doc, computed inside a writer turn but not yet written. Holds a capacity
     * reservation until {@link #commit} or {@link #abandon}. Owned by the turn that prepared it.
     */
    public static final class Prepared {
        final DocId id;
        final long version;
        final StoredDoc state;
        final ObjectNode value;
        final List<JsonNode> results;
        final long docDelta;
        final long byteDelta;
        boolean finished;

        Prepared(DocId id, long version, StoredDoc state, ObjectNode value, List<JsonNode> results, long docDelta,
                 long byteDelta) {
            this.id = id;
            this.version = version;
            this.state = state;
            this.value = value;
            this.results = results;
            this.docDelta = docDelta;
            this.byteDelta = byteDelta;
        }

        /** The doc's version after the change (for a delete: the version deleted). */
        public long version() {
            return version;
        }

        /** The doc's value after the change, or null for a delete. */
        public JsonNode value() {
            return value;
        }

        /** Each op's own result (the new number for incr, else null), in op order. */
        public List<JsonNode> results() {
            return results;
        }
    }

    /**
     * Validates {@code ops} against the doc's current value (including changes earlier in this batch) and
     * reserves capacity, writing nothing. Writer thread of {@code ws} only. A txn prepares every doc and
     * log append first, then commits them all in the same turn; prepare a doc at most once per turn.
     */
    public Prepared prepare(String ws, String doc, List<Op> ops, Long expectVersion) {
        JournalLanes.requireWriterThread();
        return prepare(DocId.of(ws, doc), ops, expectVersion);
    }

    /** {@link #prepare(String, String, List, Long)} of a validated doc id. */
    public Prepared prepare(DocId id, List<Op> ops, Long expectVersion) {
        JournalLanes.requireWriterThread();
        return writer.prepareOps(id, List.copyOf(ops), expectVersion, true);
    }

    /** Appends a prepared change to the journal and schedules its publication after the group sync. */
    public void commit(Writers.Commit commit, Prepared p) {
        writer.commit(commit, p, true);
    }

    /** The write-ahead record type of {@link #record}. */
    public static byte recordType() {
        return WAL_CHANGE;
    }

    /**
     * A prepared change as the record write-ahead replay applies idempotently (a doc at a lower
     * version takes it): what a txn writes to its commit record before committing the change.
     */
    public byte[] record(Prepared p) {
        return DocWriter.record(p);
    }

    /** Releases a prepared change that will not be committed. */
    public void abandon(Prepared p) {
        writer.abandon(p);
    }

    // ---------------------------------------------------------------- checkpoints, tools

    /** Records how far the fsynced map reflects the journal now ({@link DocCheckpointer}); returns that index. */
    public long checkpointNow() throws IOException {
        return checkpointer.checkpointNow();
    }

    /** Snapshots every doc now, then deletes the journal cycles it covers; returns how many cycle files. */
    public int snapshotNow() throws IOException {
        return checkpointer.snapshotNow();
    }

    /** State for tools and logs: capacity use, journal and checkpoint positions, start-up mode. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dir", dir.toString());
        m.put("docs", capacity.docs());
        m.put("bytes", capacity.bytes());
        m.put("maxEntries", config.maxEntries());
        m.put("byteBudget", config.byteBudget());
        m.put("journalLastIndex", journal.lastIndex());
        m.put("journalCycleFiles", journal.cycleFiles());
        m.put("appliedThrough", lanes.appliedThrough());
        m.put("checkpointIndex", checkpointer.checkpointIndex());
        m.put("snapshotIndex", checkpointer.snapshotIndex());
        m.put("startMode", metrics.startMode());
        m.put("viewFailure", publisher.failure());
        return m;
    }

    public DocMetrics metrics() {
        return metrics;
    }

    public DocStoreConfig config() {
        return config;
    }

    /** Live docs in the store (durable or pending). */
    public long size() {
        return capacity.docs();
    }

    /**
     * Refuses new writes, waits (up to 30 s) for the turns this store submitted, stops the checkpointer,
     * closes journal and map, syncs both, and only then writes the clean-shutdown marker.
     */
    @Override
    public void close() {
        if (!turns.closeAndDrain()) {
            return;
        }
        checkpointer.close();
        boolean allPublished = turns.idle() && publisher.allPublished() && lanes.idle();
        long y = lanes.appliedThrough();
        lanes.close();
        journal.close();
        view.close();
        try {
            if (allPublished) {
                checkpointer.writeClean(y);
            } else {
                LOG.log(System.Logger.Level.WARNING, "doc store {0} closed with unpublished changes: the next start"
                        + " rebuilds the map from the journal", dir);
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot write the clean-shutdown marker of " + dir
                    + "; the next start rebuilds the map", e);
        } finally {
            try {
                lockChannel.close();
            } catch (IOException e) {
                // released by the OS anyway
            }
        }
    }
}

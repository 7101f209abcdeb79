package io.strand.docstore;

import io.strand.core.DurableFiles;
import io.strand.core.FileSystemSync;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Docs: small JSON objects with single-writer, atomic updates (SPEC §5, §6). Thread-safe facade: reads run
 * on the caller's thread against the map view; every change runs as a turn on its workspace's writer thread
 * ({@link Writers}, owner = workspace name), so each doc has exactly one writer at a time.
 *
 * <p>Write path: the turn reads the doc (the writer's pending overlay first, then the map view), applies the
 * change to a private copy, validates size and capacity, appends the whole new value to the
 * {@link DocJournal} and logs the same record to the group's write-ahead records. Once the group is
 * durable ({@link Writers.Commit#afterDurable}) the lane publishes the change to the {@link DocView} and the
 * name index; then the future completes. Readers therefore never see a change that is not durable, and a
 * later turn in the same batch sees earlier turns' results through the overlay.
 *
 * <p>Start-up: if {@code docs.checkpoint} says the last stop was clean, the map file is opened as it is;
 * otherwise it is rebuilt from {@code docs.snapshot} + the journal ({@link DocStoreConfig.Recovery#REBUILD})
 * or recovered in place with {@code recoverPersistedTo} ({@code RECOVER_IN_PLACE}). Either way the journal is
 * then replayed from the checkpoint, so every acknowledged change is present, and no step waits on a lock a
 * dead process held. A checkpointer thread records how far the map reflects the journal, writes snapshots,
 * and deletes journal cycles a snapshot covers.
 *
 * <p>Close this store after the {@link Writers} have stopped submitting doc turns; {@link #close()} waits for
 * turns it submitted and then writes the clean-shutdown marker.
 */
public final class DocStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DocStore.class.getName());
    static final String JOURNAL_DIR = "journal";
    static final String MAP_FILE = "docs.cm3";
    static final String SNAPSHOT_FILE = "docs.snapshot";
    static final String CHECKPOINT_FILE = "docs.checkpoint";
    /** Write-ahead record type: one {@link DocJournal} record (a doc's whole new value, or a tombstone). */
    static final byte WAL_CHANGE = 3;
    static final String LOCK_FILE = "docstore.lock";
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
    private final Writers writers;
    private final DocMetrics metrics = new DocMetrics();
    private final Path dir;
    private final FileChannel lockChannel;
    private final DocJournal journal;
    private final DocView view;
    private final DocIndex index = new DocIndex();
    private final Usage usage;
    /** The data directory's free-space guard, shared with the other stores; asked before each change is written. */
    private final io.strand.core.DiskSpace disk;

    /** Changes appended but not yet published to the view; each key is touched only by its writer thread. */
    private final ConcurrentHashMap<String, Pending> overlay = new ConcurrentHashMap<>();
    /** Durable changes the view refused (normally empty); reads consult it first so none is hidden. */
    private final ConcurrentHashMap<String, Pending> unpublished = new ConcurrentHashMap<>();
    private volatile String viewFailure;

    /** One lane per writer thread that has written docs; each lane is used only by its thread. */
    private final ConcurrentHashMap<Thread, Lane> lanes = new ConcurrentHashMap<>();
    /** Highest journal index appended (or replayed); a lower bound for indexes not yet appended. */
    private final AtomicLong lastAppended;
    private final AtomicLong recordsSinceSnapshot = new AtomicLong();

    private final Object checkpointLock = new Object();
    private volatile long checkpointIndex;
    private volatile long snapshotIndex;
    private final ScheduledExecutorService checkpointer;

    private final ReentrantReadWriteLock closeLock = new ReentrantReadWriteLock();
    private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public DocStore(DocStoreConfig config, Writers writers) {
        this(config, writers, io.strand.core.DiskSpace.of(config.dataDir(), io.strand.core.DiskSpace.DEFAULT_RESERVE_BYTES));
    }

    /** As above, doc writes claiming their space from {@code disk} (the guard the log store and write-ahead log share). */
    public DocStore(DocStoreConfig config, Writers writers, io.strand.core.DiskSpace disk) {
        this.config = config;
        this.disk = disk;
        this.writers = writers;
        this.dir = config.dataDir();
        this.usage = new Usage(config.maxEntries(), config.byteBudget());
        long start = System.nanoTime();
        FileChannel lockCh = null;
        DocJournal j = null;
        DocView v = null;
        try {
            Files.createDirectories(dir);
            lockCh = DocRecovery.lock(dir.resolve(LOCK_FILE));
            Files.deleteIfExists(DurableFiles.temp(dir.resolve(SNAPSHOT_FILE)));
            Files.deleteIfExists(DurableFiles.temp(dir.resolve(CHECKPOINT_FILE)));
            j = new DocJournal(dir.resolve(JOURNAL_DIR), config);
            DocRecovery.Opened opened = new DocRecovery(config).openView();
            v = opened.view();
            long replayed = DocRecovery.replay(j, v, opened.replayFrom());
            long last = Math.max(opened.replayFrom(), j.lastIndex());
            v.force();
            new DocCheckpoint(false, last, DocView.fingerprint(config)).write(dir.resolve(CHECKPOINT_FILE));
            this.checkpointIndex = last;
            this.snapshotIndex = opened.snapshotIndex();
            this.lastAppended = new AtomicLong(last);
            this.recordsSinceSnapshot.set(replayed);
            loadIndex(v);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            metrics.started(opened.mode(), millis, replayed);
            LOG.log(System.Logger.Level.INFO, "doc store {0} opened ({1}, {2} journal records replayed, {3} docs) in {4} ms",
                    dir, opened.mode(), replayed, usage.docs(), millis);
        } catch (IOException e) {
            closeQuietly(v, j, lockCh);
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot open doc store " + dir + ": " + e, Map.of(), e);
        } catch (RuntimeException e) {
            closeQuietly(v, j, lockCh);
            throw e;
        }
        this.lockChannel = lockCh;
        this.journal = j;
        this.view = v;
        this.checkpointer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "docstore-checkpointer");
            t.setDaemon(true);
            return t;
        });
        long every = config.checkpointInterval().toMillis();
        checkpointer.scheduleWithFixedDelay(this::backgroundTick, every, every, TimeUnit.MILLISECONDS);
        writers.onReplay(WAL_CHANGE, payload -> replay(io.strand.core.WriteAheadLog.rest(payload)));
    }

    /**
     * Re-applies a change an earlier run logged ahead, as a turn on its workspace's writer. Records come in
     * write order, so a doc at a lower version takes the value, a doc at the same or a higher version keeps
     * its own, and a tombstone removes whatever is there (a later record re-creates it).
     */
    private CompletableFuture<Void> replay(byte[] encoded) {
        DocJournal.Record r = DocJournal.decode(encoded, -1);
        int slash = r.key().indexOf('/');
        String ws = r.key().substring(0, slash);
        String doc = r.key().substring(slash + 1);
        return writers.submit(ws, commit -> {
            Current cur = current(r.key());
            Prepared p;
            if (r.isDelete()) {
                if (cur.stored == null) {
                    return null;
                }
                p = prepareState(r.key(), ws, doc, cur, cur.version, null, null, List.of());
            } else {
                if (r.version() <= cur.version) {
                    return null;
                }
                ObjectNode value = (ObjectNode) Json.parseStored(r.json());
                p = prepareState(r.key(), ws, doc, cur, r.version(), value, r.json(), List.of());
            }
            commit(commit, p, false);
            return null;
        });
    }

    // ---------------------------------------------------------------- reads

    /** The doc's durable version and value; empty when it does not exist. */
    public Optional<DocValue> get(String ws, String doc) {
        String key = key(ws, doc);
        metrics.op(DocMetrics.Kind.GET);
        StoredDoc s = durable(key);
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
            StoredDoc s = durable(key(ws, doc));
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
        return write(ws, doc, DocMetrics.Kind.PUT, key -> {
            ObjectNode copy = value.deepCopy();
            byte[] json = Json.bytes(copy);
            checkLimits(key, copy, json);
            return commit -> {
                Current cur = current(key);
                checkExpect(key, cur, expectVersion);
                Prepared p = prepareState(key, ws, doc, cur, cur.version + 1, copy, json, List.of());
                commit(commit, p);
                return p.version;
            };
        });
    }

    /** {@link Op.Cas}: sets {@code path} to {@code value} iff it equals {@code expect} (missing = null). */
    public CompletableFuture<DocValue> cas(String ws, String doc, String path, JsonNode expect, JsonNode value) {
        return write(ws, doc, DocMetrics.Kind.CAS, key -> {
            Op.Cas op = new Op.Cas(DocPath.parse(path), expect, value);
            return commit -> {
                Prepared p = prepareOps(key, ws, doc, List.of(op), null, false);
                commit(commit, p);
                return new DocValue(p.version, p.value);
            };
        });
    }

    /** {@link Op.Incr}: 64-bit add at {@code path}, refused (never clamped) past {@code floor}/{@code ceiling}. */
    public CompletableFuture<IncrResult> incr(String ws, String doc, String path, long delta, Long floor, Long ceiling) {
        return write(ws, doc, DocMetrics.Kind.INCR, key -> {
            Op.Incr op = new Op.Incr(DocPath.parse(path), delta, floor, ceiling);
            return commit -> {
                Prepared p = prepareOps(key, ws, doc, List.of(op), null, false);
                commit(commit, p);
                return new IncrResult(p.results.getFirst().longValue(), p.version);
            };
        });
    }

    /** {@link #incr(String, String, String, long, Long, Long)} with a parsed op ({@link DocOps#parseIncr}). */
    public CompletableFuture<IncrResult> incr(String ws, String doc, Op.Incr op) {
        return incr(ws, doc, op.path().toString(), op.delta(), op.floor(), op.ceiling());
    }

    /** {@link #cas(String, String, String, JsonNode, JsonNode)} with a parsed op ({@link DocOps#parseCas}). */
    public CompletableFuture<DocValue> cas(String ws, String doc, Op.Cas op) {
        return cas(ws, doc, op.path().toString(), op.expect(), op.value());
    }

    /**
     * Applies {@code ops} in order in one turn, all or nothing. A missing doc starts as {@code {}}. The
     * failing op's error carries {@code index}; a wrong {@code expectVersion} is {@code version_conflict}.
     */
    public CompletableFuture<DocValue> apply(String ws, String doc, List<Op> ops, Long expectVersion) {
        return write(ws, doc, DocMetrics.Kind.APPLY, key -> {
            if (ops == null || ops.isEmpty()) {
                throw StrandException.badRequest("ops must not be empty");
            }
            List<Op> copy = List.copyOf(ops);
            return commit -> {
                Prepared p = prepareOps(key, ws, doc, copy, expectVersion, true);
                commit(commit, p);
                return new DocValue(p.version, p.value);
            };
        });
    }

    /**
     * Deletes the doc. Missing doc: {@code not_found} (or {@code version_conflict} when a version ≥ 1 was
     * expected). Versions restart at 1 if the doc is created again.
     *
     * @return the version that was deleted
     */
    public CompletableFuture<Long> delete(String ws, String doc, Long expectVersion) {
        return write(ws, doc, DocMetrics.Kind.DELETE, key -> commit -> {
            Current cur = current(key);
            if (cur.stored == null && (expectVersion == null || expectVersion == 0)) {
                throw StrandException.notFound("doc '" + doc + "' not found in workspace '" + ws + "'");
            }
            checkExpect(key, cur, expectVersion);
            Prepared p = prepareState(key, ws, doc, cur, cur.version, null, null, List.of());
            commit(commit, p);
            return cur.version;
        });
    }

    // ---------------------------------------------------------------- turn-level API (for txn)

    /**
     * A validated change to one doc, computed inside a writer turn but not yet written. Holds a capacity
     * reservation until {@link #commit} or {@link #abandon}. Owned by the turn that prepared it.
     */
    public static final class Prepared {
        private final String key;
        private final String ws;
        private final String doc;
        private final long version;
        private final StoredDoc state;
        private final ObjectNode value;
        private final List<JsonNode> results;
        private final long docDelta;
        private final long byteDelta;
        private boolean finished;

        private Prepared(String key, String ws, String doc, long version, StoredDoc state, ObjectNode value,
                         List<JsonNode> results, long docDelta, long byteDelta) {
            this.key = key;
            this.ws = ws;
            this.doc = doc;
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
        requireWriterThread();
        return prepareOps(key(ws, doc), ws, doc, List.copyOf(ops), expectVersion, true);
    }

    /** Appends a prepared change to the journal and schedules its publication after the group sync. */
    public void commit(Writers.Commit commit, Prepared p) {
        commit(commit, p, true);
    }

    private void commit(Writers.Commit commit, Prepared p, boolean logAhead) {
        requireWriterThread();
        if (p.finished) {
            throw new IllegalStateException("change to " + p.key + " already committed or abandoned");
        }
        Lane l = lane();
        Pending pending = new Pending(p.key, p.ws, p.doc, p.state, p.value);
        DocJournal.Record record = p.state == null
                ? new DocJournal.Record(DocJournal.DELETE, p.version, p.key, null)
                : new DocJournal.Record(DocJournal.PUT, p.version, p.key, p.state.json());
        byte[] encoded = DocJournal.encode(record);
        try {
            l.append(pending, encoded);
        } catch (RuntimeException e) {
            abandon(p);
            throw e;
        }
        p.finished = true;
        overlay.put(p.key, pending);
        metrics.journalRecord();
        recordsSinceSnapshot.incrementAndGet();
        if (logAhead) {
            commit.log(WAL_CHANGE, encoded);
        }
        commit.afterDurable(() -> l.publishThrough(pending));
    }

    /** Releases a prepared change that will not be committed. */
    public void abandon(Prepared p) {
        if (!p.finished) {
            p.finished = true;
            usage.release(p.docDelta, p.byteDelta);
        }
    }

    // ---------------------------------------------------------------- turn internals

    /** A doc as a turn sees it: {@code stored} null when missing (version 0). */
    private record Current(long version, StoredDoc stored, ObjectNode tree) {
        static final Current MISSING = new Current(0, null, null);

        /** A private copy of the value to change: from the tree a pending change kept, else parsed. */
        ObjectNode mutableValue() {
            return stored == null ? Json.MAPPER.createObjectNode() : tree != null ? tree.deepCopy() : stored.parse();
        }

        JsonNode valueOrNull() {
            return stored == null ? NullNode.getInstance() : stored.parse();
        }
    }

    /**
     * A change appended to the journal, waiting for its group sync; {@code state} null = deleted. A class,
     * not a record: the overlay removes it by identity once published.
     */
    private static final class Pending {
        final String key;
        final String ws;
        final String doc;
        final StoredDoc state;
        /** {@code state}'s value as the turn built it; never changed, so the next turn copies it instead of parsing. */
        final ObjectNode tree;
        /** Where the lane appended it; set once, on the writer thread, before it is pending. */
        long journalIndex;

        Pending(String key, String ws, String doc, StoredDoc state, ObjectNode tree) {
            this.key = key;
            this.ws = ws;
            this.doc = doc;
            this.state = state;
            this.tree = tree;
        }
    }

    private interface TurnFactory<T> {
        /** Validates what can be checked off the writer thread, then returns the turn. */
        Writers.Turn<T> prepare(String key);
    }

    private <T> CompletableFuture<T> write(String ws, String doc, DocMetrics.Kind kind, TurnFactory<T> factory) {
        metrics.op(kind);
        Writers.Turn<T> turn;
        try {
            turn = factory.prepare(key(ws, doc));
        } catch (StrandException e) {
            metrics.rejected(e.code());
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<T> future;
        closeLock.readLock().lock();
        try {
            if (closed) {
                return CompletableFuture.failedFuture(new StrandException(ErrorCode.UNAVAILABLE, "doc store is closed"));
            }
            future = writers.submit(ws, commit -> {
                try {
                    return turn.run(commit);
                } catch (StrandException e) {
                    metrics.rejected(e.code());
                    throw e;
                }
            });
            inFlight.add(future);
        } finally {
            closeLock.readLock().unlock();
        }
        future.whenComplete((r, e) -> inFlight.remove(future));
        return future;
    }

    private Prepared prepareOps(String key, String ws, String doc, List<Op> ops, Long expectVersion, boolean indexed) {
        Current cur = current(key);
        checkExpect(key, cur, expectVersion);
        ObjectNode value = cur.mutableValue();
        List<JsonNode> results = new ArrayList<>(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            try {
                results.add(ops.get(i).applyTo(value, cur.version));
            } catch (StrandException e) {
                throw indexed && !e.extras().containsKey("index") ? e.with("index", i) : e;
            }
        }
        byte[] json = Json.bytes(value);
        checkLimits(key, value, json);
        return prepareState(key, ws, doc, cur, cur.version + 1, value, json, results);
    }

    /** Reserves capacity for the new state ({@code value} null = delete) and packages the change. */
    private Prepared prepareState(String key, String ws, String doc, Current cur, long version, ObjectNode value,
                                  byte[] json, List<JsonNode> results) {
        String failure = viewFailure;
        if (failure != null) {
            throw new StrandException(ErrorCode.STORAGE_FULL, failure);
        }
        lane(); // a writer thread, before anything is claimed
        // the journal record and the map entry: both are mapped files, where a page the disk cannot back is a SIGBUS
        disk.require(2L * (json == null ? 0 : json.length) + 2L * key.length() + 256, "writing doc '" + key + "'");
        long oldWeight = cur.stored == null ? 0 : StoredDoc.weight(key, cur.stored.json());
        long newWeight = value == null ? 0 : StoredDoc.weight(key, json);
        long docDelta = (value == null ? 0 : 1) - (cur.stored == null ? 0 : 1);
        usage.reserve(docDelta, newWeight - oldWeight);
        StoredDoc state = value == null ? null : new StoredDoc(version, json);
        return new Prepared(key, ws, doc, version, state, value, java.util.Collections.unmodifiableList(results),
                docDelta, newWeight - oldWeight);
    }

    private Current current(String key) {
        Pending p = overlay.get(key);
        if (p == null && !unpublished.isEmpty()) {
            p = unpublished.get(key);
        }
        StoredDoc s = p != null ? p.state : view.get(key);
        return s == null ? Current.MISSING : new Current(s.version(), s, p != null ? p.tree : null);
    }

    private StoredDoc durable(String key) {
        if (!unpublished.isEmpty()) {
            Pending u = unpublished.get(key);
            if (u != null) {
                return u.state;
            }
        }
        return view.get(key);
    }

    private void checkExpect(String key, Current cur, Long expectVersion) {
        if (expectVersion != null && expectVersion != cur.version) {
            String what = cur.stored == null ? "does not exist" : "is at version " + cur.version;
            Map<String, Object> extras = new LinkedHashMap<>();
            extras.put("version", cur.version);
            extras.put("value", cur.valueOrNull());
            throw new StrandException(ErrorCode.VERSION_CONFLICT, "doc '" + key + "' " + what + ", not at the expected "
                    + (expectVersion == 0 ? "0 (must not exist)" : "version " + expectVersion), extras);
        }
    }

    /**
     * Refuses a doc a write would produce if it is too large or nests deeper than {@link #MAX_DEPTH}. Runs on
     * the whole resulting doc, so a path and a value that pass on their own cannot add up to a doc that
     * could not be sent back.
     */
    private void checkLimits(String key, ObjectNode value, byte[] json) {
        if (json.length > config.maxDocBytes()) {
            throw StrandException.tooLarge("doc '" + key + "' would be " + json.length + " bytes as JSON; the limit is "
                    + config.maxDocBytes());
        }
        int depth = depth(value);
        if (depth > MAX_DEPTH) {
            throw StrandException.badRequest("doc '" + key + "' would nest " + depth + " levels deep; the limit is "
                    + MAX_DEPTH + " (the root object is level 1, each object or array inside adds one)");
        }
    }

    /** {@code node}'s nesting depth: a scalar 0, {@code {}} 1. A doc is at most {@code maxDocBytes}, so the walk is short. */
    static int depth(JsonNode node) {
        if (!node.isContainerNode()) {
            return 0;
        }
        int deepest = 0;
        for (JsonNode child : node) {
            if (child.isContainerNode()) {
                deepest = Math.max(deepest, depth(child));
            }
        }
        return deepest + 1;
    }

    /** Writes a durable change into the view and the name index. Writer thread, after the group sync. */
    private void publish(Pending p) {
        try {
            if (p.state == null) {
                view.remove(p.key);
            } else {
                view.put(p.key, p.state);
            }
            if (!unpublished.isEmpty()) {
                unpublished.remove(p.key);
            }
        } catch (RuntimeException | InternalError e) { // InternalError: a map page the disk could not back
            metrics.viewError();
            unpublished.put(p.key, p);
            viewFailure = "the doc map view could not store a durable change to '" + p.key + "' (" + e.getMessage()
                    + "); doc writes are refused until a restart rebuilds the map (raise the doc capacity settings)";
            LOG.log(System.Logger.Level.ERROR, viewFailure, e);
        }
        if (p.state == null) {
            index.remove(p.ws, p.doc);
        } else {
            index.add(p.ws, p.doc);
        }
        overlay.remove(p.key, p);
    }

    private Lane lane() {
        requireWriterThread();
        return lanes.computeIfAbsent(Thread.currentThread(), t -> new Lane(journal.appender()));
    }

    private static void requireWriterThread() {
        if (!Writers.onWriterThread()) {
            throw new IllegalStateException("doc turns run on a Writers thread only");
        }
    }

    static String key(String ws, String doc) {
        return Names.workspace(ws) + "/" + Names.object("doc", doc);
    }

    /**
     * One writer thread's journal appender and the changes it appended that are not yet published.
     * Owned by that writer thread; the checkpointer only reads {@link #marker}.
     */
    private final class Lane {
        /** Replaced after a failed append: a Chronicle appender whose write faulted is not reusable. */
        private DocJournal.Appender appender;
        private final ArrayDeque<Pending> pending = new ArrayDeque<>();
        /** Lower bound of (the oldest pending record's index − 1); MAX_VALUE when nothing is pending. */
        private volatile long marker = Long.MAX_VALUE;

        Lane(DocJournal.Appender appender) {
            this.appender = appender;
        }

        void append(Pending p, byte[] record) {
            boolean first = pending.isEmpty();
            if (first) {
                marker = lastAppended.get();
            }
            long idx;
            try {
                idx = appender.append(record);
            } catch (RuntimeException | Error e) { // a SIGBUS on a mapped page the disk cannot back is an InternalError
                if (first) {
                    marker = Long.MAX_VALUE;
                }
                try {
                    appender.close();
                } catch (RuntimeException | Error ignored) {
                    // a new appender finds the journal's end by itself
                }
                appender = journal.appender();
                throw classify(e);
            }
            p.journalIndex = idx;
            pending.add(p);
            lastAppended.accumulateAndGet(idx, Math::max);
        }

        /**
         * After-durable hook: publishes this lane's changes up to and including {@code last}, oldest first.
         * A group's hooks run in turn order once the group is durable, so what is published is exactly
         * what is durable; the changes of a group whose write failed are never published.
         */
        void publishThrough(Pending last) {
            Pending p;
            do {
                p = pending.poll();
                if (p == null) {
                    break;
                }
                DocStore.this.publish(p);
            } while (p != last);
            Pending oldest = pending.peek();
            marker = oldest == null ? Long.MAX_VALUE : oldest.journalIndex - 1;
        }

        boolean idle() {
            return pending.isEmpty();
        }

    }

    private RuntimeException classify(Throwable e) {
        if (e instanceof StrandException se) {
            return se;
        }
        StrandException full = disk.outOfSpace(e, "doc journal append");
        if (full != null) {
            return full;
        }
        return new StrandException(ErrorCode.UNAVAILABLE, "doc journal append failed: " + e, Map.of(), e);
    }

    /** Live docs and stored bytes against the configured capacity. Thread-safe (synchronized). */
    private static final class Usage {
        private final long maxDocs;
        private final long maxBytes;
        private long docs;
        private long bytes;

        Usage(long maxDocs, long maxBytes) {
            this.maxDocs = maxDocs;
            this.maxBytes = maxBytes;
        }

        synchronized void reserve(long docDelta, long byteDelta) {
            if (docDelta > 0 && docs + docDelta > maxDocs) {
                throw new StrandException(ErrorCode.STORAGE_FULL, "doc store is full: " + docs + " of " + maxDocs
                        + " docs (maxEntries); delete docs or raise the capacity");
            }
            if (byteDelta > 0 && bytes + byteDelta > maxBytes) {
                throw new StrandException(ErrorCode.STORAGE_FULL, "doc store is full: storing " + byteDelta
                        + " more bytes would pass the " + maxBytes + "-byte budget (maxEntries × (averageKeyBytes"
                        + " + averageValueBytes + 8)); delete docs or raise the capacity");
            }
            docs += docDelta;
            bytes += byteDelta;
        }

        synchronized void release(long docDelta, long byteDelta) {
            docs -= docDelta;
            bytes -= byteDelta;
        }

        synchronized void load(long docBytes) {
            docs++;
            bytes += docBytes;
        }

        synchronized long docs() {
            return docs;
        }

        synchronized long bytes() {
            return bytes;
        }
    }

    // ---------------------------------------------------------------- start-up

    private void loadIndex(DocView v) {
        v.forEach((key, encoded) -> {
            int slash = key.indexOf('/');
            index.add(key.substring(0, slash), key.substring(slash + 1));
            usage.load(key.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + (long) encoded.length);
        });
        if (usage.docs() > config.maxEntries() || usage.bytes() > config.byteBudget()) {
            LOG.log(System.Logger.Level.WARNING, "doc store {0} holds {1} docs / {2} bytes, over its configured capacity"
                    + " ({3} docs / {4} bytes): new docs are refused", dir, usage.docs(), usage.bytes(),
                    config.maxEntries(), config.byteBudget());
        }
    }

    // ---------------------------------------------------------------- checkpoints and snapshots

    /** Highest journal index such that every record at or below it is in the map view. */
    private long appliedThrough() {
        long y = lastAppended.get();
        for (Lane l : lanes.values()) {
            y = Math.min(y, l.marker);
        }
        return y;
    }

    private void backgroundTick() {
        try {
            checkpointNow();
            if (recordsSinceSnapshot.get() >= config.snapshotEveryRecords()) {
                snapshotNow();
            }
        } catch (Throwable t) {
            metrics.backgroundError();
            LOG.log(System.Logger.Level.ERROR, "doc store checkpoint failed (will retry): " + t, t);
        }
    }

    /**
     * Fsyncs the map view and records how far it reflects the journal, bounding replay after an unclean
     * stop with {@code RECOVER_IN_PLACE}. Any thread; runs periodically on {@code docstore-checkpointer}.
     *
     * @return the journal index recorded
     */
    public long checkpointNow() throws IOException {
        synchronized (checkpointLock) {
            long y = appliedThrough();
            if (y > checkpointIndex) {
                // the journal too: its records are left to the write-ahead log's checkpoints, and after a
                // power loss the journal must not end before the index recorded here
                FileSystemSync.syncfs(dir);
                new DocCheckpoint(false, y, DocView.fingerprint(config)).write(dir.resolve(CHECKPOINT_FILE));
                checkpointIndex = y;
                metrics.checkpoint();
            }
            return checkpointIndex;
        }
    }

    /**
     * Writes a snapshot of every doc, then deletes the journal cycles it covers. Any thread; runs on
     * {@code docstore-checkpointer} every {@link DocStoreConfig#snapshotEveryRecords()} records.
     *
     * @return the number of journal cycle files deleted
     */
    public int snapshotNow() throws IOException {
        synchronized (checkpointLock) {
            long counted = recordsSinceSnapshot.get();
            long y = checkpointNow();
            DocSnapshot.write(dir.resolve(SNAPSHOT_FILE), y, view);
            snapshotIndex = y;
            recordsSinceSnapshot.addAndGet(-counted);
            metrics.snapshot();
            return journal.deleteCyclesBefore(y);
        }
    }

    // ---------------------------------------------------------------- tools

    /** State for tools and logs: capacity use, journal and checkpoint positions, start-up mode. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dir", dir.toString());
        m.put("docs", usage.docs());
        m.put("bytes", usage.bytes());
        m.put("maxEntries", config.maxEntries());
        m.put("byteBudget", config.byteBudget());
        m.put("journalLastIndex", journal.lastIndex());
        m.put("journalCycleFiles", journal.cycleFiles());
        m.put("appliedThrough", appliedThrough());
        m.put("checkpointIndex", checkpointIndex);
        m.put("snapshotIndex", snapshotIndex);
        m.put("startMode", metrics.startMode());
        m.put("viewFailure", viewFailure);
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
        return usage.docs();
    }

    // ---------------------------------------------------------------- close

    /**
     * Refuses new writes, waits (up to 30 s) for the turns this store submitted, stops the checkpointer,
     * closes journal and map, syncs both, and only then writes the clean-shutdown marker.
     */
    @Override
    public void close() {
        closeLock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            closeLock.writeLock().unlock();
        }
        try {
            CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new))
                    .exceptionally(e -> null).get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            LOG.log(System.Logger.Level.WARNING, "doc store closing with {0} turns still running", inFlight.size());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            // failures were reported to their callers
        }
        checkpointer.shutdownNow();
        try {
            checkpointer.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boolean allPublished = inFlight.isEmpty() && unpublished.isEmpty() && lanes.values().stream().allMatch(Lane::idle);
        long y = appliedThrough();
        for (Lane l : lanes.values()) {
            l.appender.close();
        }
        lanes.clear();
        journal.close();
        view.close();
        try {
            if (allPublished) {
                FileSystemSync.syncfs(dir); // the map and the journal
                new DocCheckpoint(true, y, DocView.fingerprint(config)).write(dir.resolve(CHECKPOINT_FILE));
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

    private static void closeQuietly(DocView v, DocJournal j, FileChannel lock) {
        try {
            if (v != null) {
                v.close();
            }
        } catch (RuntimeException ignored) {
            // best effort on a failed open
        }
        try {
            if (j != null) {
                j.close();
            }
        } catch (RuntimeException ignored) {
            // best effort on a failed open
        }
        try {
            if (lock != null) {
                lock.close();
            }
        } catch (IOException ignored) {
            // best effort on a failed open
        }
    }
}

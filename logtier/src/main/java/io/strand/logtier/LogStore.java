package io.strand.logtier;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Thread-safe: every log of this node, the log tier's one entry point for the HTTP and socket
 * layers and the tools. It checks names, then wires the parts: the {@link LogRegistry} (slots,
 * lazy open, idle close), {@link LogAppender} (the writer side, as turns on the workspace's writer,
 * {@link Writers}), {@link LogReader} (every read, on the caller's thread, up to the committed head),
 * {@link LogWatch}/{@link LogCursor} (subscriptions), the {@link Roller} and the {@link ColdTier}.
 *
 * <p>The append path: {@link #append} → {@link LogRegistry#whenOpen} (the log opened off the writer)
 * → a turn on the workspace's writer → {@link LogAppender#append} → {@link HotAppender} (the hot
 * queue) and the write-ahead record → the group's commit → the head published → the ack.
 */
public final class LogStore implements AutoCloseable {
    /** Write-ahead record types and their payloads: {@link io.strand.core.WalRecordType}. */
    static final byte WAL_APPEND = io.strand.core.WalRecordType.LOG_APPEND;
    static final byte WAL_DELETE = io.strand.core.WalRecordType.LOG_DELETE;
    /** A closed, unused log's slot is forgotten only this long after its last lookup. */
    static final Duration FORGET_SLOTS_AFTER = LogRegistry.FORGET_SLOTS_AFTER;
    private final LogConfig config;
    private final Writers writers;
    /** Claimed from before a log's files are created and before each append touches its queue. */
    private final io.strand.core.DiskSpace disk;
    private final LogRegistry registry;
    private volatile ColdTier coldTier;
    private volatile Roller roller;
    /** A cluster replica's shared cold tier: step 6 of a roll goes through the shard's log; null on a single node. */
    private volatile ReplicatedRolls replicated;
    /** A cluster replica's deleted logs whose shared cold part the leader has not emptied yet; null on a single node. */
    private volatile ColdDeletes coldDeletes;
    private final java.util.concurrent.atomic.AtomicLong coveredDrops = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong coveredDropFailures = new java.util.concurrent.atomic.AtomicLong();
    /**
     * A cluster replica's stores: every append is submitted to the workspace's writer at once and opens
     * its log in the turn, never off the writer first (see {@link #applyInLogOrder}).
     */
    private volatile boolean inLogOrder;
    /** The server's retention defaults, shown in the info of logs without a policy of their own ({@link Retention}). */
    private volatile RetentionPolicy retentionDefaults = RetentionPolicy.UNLIMITED;

    public LogStore(LogConfig config, Writers writers) {
        this(config, writers, io.strand.core.DiskSpace.of(config.dataDir(), io.strand.core.DiskSpace.DEFAULT_RESERVE_BYTES));
    }

    /** As above, with the data directory's free-space guard shared with the other stores. */
    public LogStore(LogConfig config, Writers writers, io.strand.core.DiskSpace disk) {
        this.config = config;
        this.disk = disk;
        this.writers = writers;
        try {
            Files.createDirectories(config.logsDir());
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot create " + config.logsDir() + ": " + e.getMessage());
        }
        this.registry = new LogRegistry(config, disk, this::attachCold);
        writers.onReplay(WAL_APPEND, payload -> replayed(payload, (ws, name, body) ->
                registry.withLog(ws, name, LogSlot.Open.CREATE, log -> {
                    log.appender().replay(body);
                    return null;
                }, null)));
        writers.onReplay(WAL_DELETE, payload -> replayed(payload, (ws, name, body) -> registry.delete(ws, name)));
    }

    /** A write-ahead record's change, applied as a turn on its log's workspace writer. */
    private interface Replayed {
        void apply(String ws, String name, byte[] body);
    }

    /** Runs a write-ahead record's change as a turn on its workspace's writer, in record order. */
    private CompletableFuture<Void> replayed(java.nio.ByteBuffer payload, Replayed change) {
        String key = io.strand.core.WriteAheadLog.key(payload);
        byte[] body = io.strand.core.WriteAheadLog.rest(payload);
        int slash = key.indexOf('/');
        String ws = key.substring(0, slash);
        String name = key.substring(slash + 1);
        return writers.submit(ws, commit -> {
            change.apply(ws, name, body);
            return null;
        });
    }

    /** Gives a log the registry just opened its cold part, and loads its manifest now so reads need no object-store round trip. */
    private void attachCold(String ws, String name, Log log) {
        ColdTier tier = coldTier;
        log.cold(tier == null ? ColdPart.NONE : tier.part(ws, name));
        try {
            log.cold().lastSeq();
            Roller r = roller;
            if (r != null && log.head() > 0) {
                r.afterAppend(ws, name, log.head());
            }
        } catch (RuntimeException e) {
            // a store that is down only delays it: cold reads will report cold_unavailable; appends do not need the cold part
        }
    }

    /** Tiers old entries of every log into {@code tier} past the configured hot threshold. Call once, before traffic. */
    public void enableColdTier(ColdTier tier) {
        this.coldTier = tier;
        this.roller = new Roller(new RollerLogs(), tier, config.hot());
    }

    /**
     * A cluster replica's cold tier (SPEC §13), shared by every replica of the shard: every replica
     * reads it; the roller rolls only while {@code tier}'s writer term says this replica leads, and
     * hands step 6 to {@code rolls}, so each replica drops its hot files when it applies
     * {@link #dropCovered}. Call once, before the replica applies anything.
     */
    public void enableColdTier(ColdTier tier, ReplicatedRolls rolls) {
        this.coldDeletes = new ColdDeletes(config.dataDir());
        this.replicated = rolls;
        enableColdTier(tier);
    }

    /**
     * Step 6 of a roll as a cluster replica applies it, in its shard's log order: the leader
     * committed a manifest of {@code ws/name} holding every entry ≤ {@code coldLast}. As a turn on
     * the workspace's writer, this replica re-reads the manifest when its own view is older (one
     * object-store read, on the writer), then drops the hot cycle files wholly below what both
     * cover. Never fails: a store it cannot read, or a drop that fails, keeps the files (counted,
     * logged) until the next one; the log's content is the same either way.
     *
     * @return hot cycle files dropped
     */
    public CompletableFuture<Integer> dropCovered(String ws, String name, long coldLast) {
        checkNames(ws, name);
        return writers.submit(ws, commit -> registry.withLog(ws, name, LogSlot.Open.IF_EXISTS, log -> {
            ColdTier tier = coldTier;
            ColdDeletes deleted = coldDeletes;
            if (tier == null || deleted != null && deleted.contains(ws, name)) {
                return 0; // a step 6 of a deleted log: the log of this name now is another one
            }
            try {
                io.strand.coldtier.ColdLog cold = tier.log(ws, name);
                long seen = cold.lastSeq();
                if (seen < coldLast) {
                    seen = cold.refresh().lastSeq();
                }
                long upTo = Math.min(seen, coldLast);
                int dropped = upTo < 1 ? 0 : log.dropHotBefore(upTo + 1);
                coveredDrops.addAndGet(dropped);
                return dropped;
            } catch (RuntimeException e) {
                coveredDropFailures.incrementAndGet();
                System.getLogger("strand.cold").log(System.Logger.Level.WARNING, "log " + ws + "/" + name
                        + ": hot files up to seq " + coldLast + " stay for now (the cold tier holds them): " + e.getMessage());
                return 0;
            }
        }, 0));
    }

    /**
     * A cluster replica applies "the leader emptied the deleted {@code ws/name}'s manifest at
     * {@code generation}" (see {@link ColdDeletes}), as a turn on the workspace's writer so it stays
     * ordered with the step 6s before it: this replica's view of the manifest moves to that empty
     * generation (no store I/O) and the name is no longer pending.
     */
    public CompletableFuture<Void> coldDeleted(String ws, String name, long generation) {
        checkNames(ws, name);
        return writers.submit(ws, commit -> {
            ColdTier tier = coldTier;
            if (tier != null) {
                tier.log(ws, name).adoptEmptied(generation);
            }
            ColdDeletes deleted = coldDeletes;
            if (deleted != null) {
                deleted.remove(ws, name);
            }
            Roller r = roller;
            if (r != null) {
                r.forget(ws, name);
            }
            return null;
        });
    }

    /** Completes once the shard's leader has emptied the deleted {@code ws/name}'s cold part and this replica applied it (at once when none is pending). */
    public CompletableFuture<Void> whenColdDeleted(String ws, String name) {
        ColdDeletes deleted = coldDeletes;
        return deleted == null ? CompletableFuture.completedFuture(null) : deleted.whenCleared(ws, name);
    }

    /** The log tier as the roller sees it. */
    private final class RollerLogs implements Roller.Logs {
        @Override
        public long withLog(String ws, String name, ToLongFunction<Roller.RollableLog> roll) {
            return registry.withLog(ws, name, LogSlot.Open.IF_EXISTS, roll::applyAsLong, 0L);
        }

        @Override
        public <T> T onWriter(String ws, Supplier<T> change) {
            return LogStore.onWriter(writers, ws, change);
        }

        @Override
        public void covered(String ws, String name, Roller.RollableLog log, long coldLast) {
            ReplicatedRolls rolls = replicated;
            if (rolls == null) {
                onWriter(ws, () -> log.dropHotBefore(coldLast + 1));
                return;
            }
            join(rolls.proposeCovered(ws, name, coldLast));
        }

        @Override
        public java.util.List<String> pendingColdDeletes() {
            ColdDeletes deleted = coldDeletes;
            return deleted == null ? java.util.List.of() : deleted.pending();
        }

        @Override
        public void coldDeleted(String ws, String name, long generation) {
            join(replicated.proposeColdDeleted(ws, name, generation));
        }
    }

    /** Runs {@code change} as a turn on the writer of {@code ws} and waits for it, its failure unwrapped. */
    static <T> T onWriter(Writers writers, String ws, Supplier<T> change) {
        return join(writers.submit(ws, commit -> change.get()));
    }

    /** Waits for {@code f}; its failure is thrown unwrapped. */
    static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    /** Rolls every committed entry of a log to cold now (the {@code cold roll} tool); returns entries rolled. */
    public long rollNow(String ws, String name) {
        checkNames(ws, name);
        if (roller == null) {
            throw StrandException.badRequest("this server has no cold tier");
        }
        return roller.rollNow(ws, name, true);
    }

    /** Cold-tier counters for status and metrics: rolls, entries rolled, failures, pending checks, last error. */
    public Map<String, Object> coldStats() {
        Roller r = roller;
        if (r == null) {
            return Map.of();
        }
        return Map.of("rolls", r.rolls.get(), "rolledEntries", r.rolledEntries.get(), "rollFailures", r.rollFailures.get(),
                "pending", r.backlog(), "lastError", r.lastError,
                "cacheHits", coldTier.cache().hits(), "cacheMisses", coldTier.cache().misses(),
                "coveredDrops", coveredDrops.get(), "coveredDropFailures", coveredDropFailures.get());
    }

    public ColdTier coldTier() {
        return coldTier;
    }

    /** The roller, null without a cold tier. */
    Roller roller() {
        return roller;
    }

    void retentionDefaults(RetentionPolicy defaults) {
        this.retentionDefaults = defaults;
    }

    public LogConfig config() {
        return config;
    }

    public Writers writers() {
        return writers;
    }

    // ---------------------------------------------------------------- writes

    /**
     * For a cluster replica, whose changes must take effect in the order its shard's log gives them:
     * from now on an append is a turn on the workspace's writer from the moment it is called, like
     * every other change (trims, deletes, txns, step 6s), and opens a closed log inside that turn.
     * Without this, an append to a log that is not open waits for the open off the writer (so the
     * writer never stalls on a queue open, which suits a single node, whose concurrent requests have
     * no order), and a later change of the same log submitted meanwhile ran first: on a replica
     * whose copy of the log was closed (idle, or rebuilt after a restart) a trim saw the log without
     * those appends and a txn could take their seqs, so replicas could diverge ({@code ClusterRetentionIT}
     * found a restarted node's {@code first} at 101 against the others' 111; the trim's bound is also
     * the written head now, {@link Log#writtenHead}). Costs a queue open (about 1.5 ms) on the
     * writer for each append that finds its log closed. Call once, before the replica applies anything.
     */
    public void applyInLogOrder() {
        this.inLogOrder = true;
    }

    /** Validates, then appends on the workspace's writer; completes after durability. */
    public CompletableFuture<AppendResult> append(String ws, String name, AppendRequest req) {
        checkNames(ws, name);
        LogAppender.check(req, config);
        // An append that expects entries (expectedLastSeq > 0) must find the log: judged in its turn, after
        // every append queued before it on this log (a pipelined first append may be creating it), and a
        // refused one creates nothing: neither the turn nor the open off the writer makes the log's files.
        boolean mayCreate = req.expectedLastSeq() == null || req.expectedLastSeq() == 0;
        String durable = config.durability().wire();
        java.util.function.Supplier<CompletableFuture<AppendResult>> turn = () -> writers.submit(ws, commit -> {
            if (!mayCreate && !registry.exists(ws, name)) {
                throw LogAppender.seqMismatch(name, req, 0);
            }
            return registry.withLog(ws, name, LogSlot.Open.CREATE, log -> log.appender().append(req, commit, durable), null);
        });
        CompletableFuture<AppendResult> ack = inLogOrder ? turn.get() : registry.whenOpen(ws, name, mayCreate, turn);
        Roller r = roller;
        if (r != null) {
            ack.thenAccept(result -> {
                if (result.firstSeq() == 1 && !result.duplicate()) { // a producer's retry of it may come to a log far past it
                    r.afterFirstBatch(ws, name, result.lastSeq(), req.dataBytes());
                } else {
                    r.afterAppend(ws, name, result.lastSeq());
                }
            });
        }
        return ack;
    }

    /**
     * The first half of a txn's append to {@code ws/name}: validates {@code req} (sizes, producer
     * window, {@code expectedLastSeq}) and encodes its batch, writing nothing. Writer thread of
     * {@code ws} only; every staged append must be {@link StagedAppend#apply applied} or
     * {@link StagedAppend#abandon abandoned} in the same turn.
     */
    public StagedAppend stage(String ws, String name, AppendRequest req) {
        checkNames(ws, name);
        LogAppender.check(req, config);
        LogSlot held = registry.hold(ws, name);
        try {
            Log log = held.log(LogSlot.Open.IF_EXISTS); // a missing log is created only when the txn applies: a refused txn creates nothing
            if (log != null) {
                return new StagedAppend(this, ws, name, held, log, log.appender().stage(req), req.data().size());
            }
            byte[] excerpt = LogAppender.stageFirst(name, req);
            // room for the new log's files and the batch, claimed now: creating it cannot fail once the txn is committed
            disk.require(2 * HotLog.NEW_FILE_BYTES + excerpt.length + (long) HotLog.EXCERPT_OVERHEAD_BYTES * req.data().size(),
                    "creating log " + ws + "/" + name);
            return new StagedAppend(this, ws, name, held, null, excerpt, req.data().size());
        } catch (RuntimeException e) {
            held.release();
            throw e;
        }
    }

    /** After a txn's append: the roller checks the log once the group is durable, as after an append. */
    void afterTxnAppend(String ws, String name, long lastSeq, Writers.Commit commit) {
        Roller r = roller;
        if (r != null) {
            commit.afterDurable(() -> r.afterAppend(ws, name, lastSeq));
        }
    }

    /**
     * Deletes a log so that an error answer leaves it whole and a retry finishes it; false when it did
     * not exist. With a cold tier, while no roll runs: (1) the cold manifest is deleted on the calling
     * thread (object-store I/O never runs on a writer) — if the store fails, this throws
     * {@code cold_unavailable} with nothing deleted; (2) the hot data and the name go on the writer;
     * (3) the segment objects are deleted, best effort: leftovers are orphans that no manifest names,
     * so neither a reader nor a log re-created under the name ever sees them.
     */
    public boolean delete(String ws, String name) {
        checkNames(ws, name);
        ColdTier tier = coldTier;
        if (tier == null) {
            return deleteHot(ws, name);
        }
        if (replicated != null) {
            // a cluster replica applies a delete with no object-store I/O (a replay must never touch the
            // shared store): the name waits in ColdDeletes until the shard's leader has emptied its manifest
            roller.forget(ws, name);
            boolean existed = deleteHot(ws, name);
            if (existed) {
                coldDeletes.add(ws, name);
                roller.request(ws, name); // wakes the roller: on the leader it empties the manifest first
            }
            return existed;
        }
        return roller.withoutRolls(() -> {
            tier.dropManifest(ws, name);
            boolean existed = deleteHot(ws, name);
            tier.deleteObjects(ws, name);
            roller.forget(ws, name);
            return existed;
        });
    }

    /** Removes the log's hot files and name on its workspace's writer (logged ahead, so a restart replays it). */
    private boolean deleteHot(String ws, String name) {
        return writers.submit(ws, commit -> {
            commit.log(WAL_DELETE, io.strand.core.WriteAheadLog.keyed(ws + '/' + name, new byte[0]));
            return registry.delete(ws, name);
        }).join();
    }

    // ---------------------------------------------------------------- reads

    /** Forward page from {@code from} (0 means 1). */
    public Page readForward(String ws, String name, long from, int limit) {
        List<Entry> entries = new ArrayList<>(Math.min(limit, 1024));
        return Page.of(readForward(ws, name, from, limit, EntrySink.of(entries::add)), entries);
    }

    /** As {@link #readForward(String, String, long, int)}, the entries streamed into {@code sink}. */
    public PageInfo readForward(String ws, String name, long from, int limit, EntrySink sink) {
        return withLog(ws, name, log -> LogReader.forward(log, Math.max(from, 1), limit, Long.MAX_VALUE, sink),
                LogReader.emptyPage(from));
    }

    /**
     * As {@link #readForward(String, String, long, int, EntrySink)} when the page can be served from
     * memory and already open files (the log is open, the page starts in its newest hot cycle file,
     * no cold bound needs the object store), so a caller may serve it on its own thread; null when
     * not, having read nothing.
     */
    public PageInfo readForwardInPlace(String ws, String name, long from, int limit, EntrySink sink) {
        checkNames(ws, name);
        if (!registry.isOpen(ws, name)) {
            return null; // not open, or being opened by another thread: whose lock this caller must not wait for
        }
        long start = Math.max(from, 1);
        return registry.withLog(ws, name, LogSlot.Open.IF_OPEN, log -> LogReader.readsInPlace(log, start)
                ? LogReader.forward(log, start, limit, Long.MAX_VALUE, sink) : null, null);
    }

    /** Up to {@code limit} entries, ending before {@code before} (Long.MAX_VALUE = after the head), ascending. */
    public Page readBackward(String ws, String name, long before, int limit) {
        List<Entry> entries = new ArrayList<>(Math.min(limit, 1024));
        return Page.of(readBackward(ws, name, before, limit, EntrySink.of(entries::add)), entries);
    }

    /** As {@link #readBackward(String, String, long, int)}, the entries streamed into {@code sink}. */
    public PageInfo readBackward(String ws, String name, long before, int limit, EntrySink sink) {
        return withLog(ws, name, log -> LogReader.backward(log, before, limit, sink), new PageInfo(0, 1, 1, 1, 0, null));
    }

    /** Forward page from the first entry with ts ≥ {@code ts}. */
    public Page readFromTime(String ws, String name, long ts, int limit) {
        List<Entry> entries = new ArrayList<>(Math.min(limit, 1024));
        return Page.of(readFromTime(ws, name, ts, limit, EntrySink.of(entries::add)), entries);
    }

    /** As {@link #readFromTime(String, String, long, int)}, the entries streamed into {@code sink}. */
    public PageInfo readFromTime(String ws, String name, long ts, int limit, EntrySink sink) {
        return withLog(ws, name, log -> LogReader.fromTime(log, ts, limit, sink), LogReader.emptyPage(1));
    }

    /** A chunk for a subscription, streamed into {@code sink}: at most {@code maxEntries} and about {@code maxBytes} ({@link LogReader.Limit}). */
    public PageInfo readChunk(String ws, String name, long from, int maxEntries, long maxBytes, EntrySink sink) {
        return withLog(ws, name, log -> LogReader.forward(log, Math.max(from, 1), maxEntries, maxBytes, sink),
                LogReader.emptyPage(from));
    }

    public Optional<LogInfo> info(String ws, String name) {
        // the server defaults never apply to _system (its audit log is kept whole), so its info shows none
        RetentionPolicy defaults = Names.SYSTEM_WORKSPACE.equals(ws) ? RetentionPolicy.UNLIMITED : retentionDefaults;
        return Optional.ofNullable(withLog(ws, name, log -> log.info(defaults), null));
    }

    /**
     * First seq still stored in the log's hot queue, 0 when it holds none (or the log does not exist).
     * Seqs below it are read from the cold tier only; rolled seqs at or above it are still read from
     * hot files until their cycle file is dropped.
     */
    public long hotStoredFirst(String ws, String name) {
        return withLog(ws, name, Log::hotStoredFirst, 0L);
    }

    /** Log names of a workspace in name order, after {@code after} (exclusive, may be null). */
    public List<String> list(String ws, String after, int limit) {
        Names.workspace(ws);
        return registry.list(ws, after, limit);
    }

    /** Workspaces holding at least one log, in name order (their directories under the logs dir, and any created since). */
    public List<String> workspaces() {
        return registry.workspaces();
    }

    /** Runs {@code body} on the open log ({@code absent} when it does not exist); for {@link Retention}. */
    <T> T withLog(String ws, String name, Function<Log, T> body, T absent) {
        checkNames(ws, name);
        return registry.withLog(ws, name, LogSlot.Open.IF_EXISTS, body, absent);
    }

    private static void checkNames(String ws, String name) {
        Names.workspace(ws);
        Names.object("log", name);
    }

    // ---------------------------------------------------------------- subscriptions

    /**
     * True while the log is open, so reading it opens no files and reaches no object store; it does not
     * wait for an open in progress. A hint for where to run a first read (an idle log may close right after).
     */
    public boolean isOpen(String ws, String name) {
        checkNames(ws, name);
        return registry.isOpen(ws, name);
    }

    /** A handle that keeps a log's head signal while a subscription follows it; close when done. */
    public LogWatch watch(String ws, String name) {
        checkNames(ws, name);
        return new LogWatch(registry.watch(ws, name));
    }

    /** A cursor at {@code from} on a new watch of the log, for a subscription; close when done. */
    public LogCursor cursor(String ws, String name, long from) {
        return watch(ws, name).cursor(from);
    }

    /** How many {@link LogWatch}es of a log are open now (0 for a log the registry does not hold). */
    public int watchers(String ws, String name) {
        return registry.watchers(ws, name);
    }

    // ---------------------------------------------------------------- registry

    public int openLogs() {
        return registry.openLogs();
    }

    /** The reaper's pass, run now (tests race it against readers). */
    int closeIdle() {
        return registry.closeIdle();
    }

    /** Replaces {@link #FORGET_SLOTS_AFTER}: tests shorten it to race the reaper forgetting slots. */
    void forgetSlotsAfter(Duration after) {
        registry.forgetSlotsAfter(after);
    }

    /** Reaper passes that failed (each logged); a failed pass leaves logs open past the cap. */
    long reaperFailures() {
        return registry.reaperFailures();
    }

    @Override
    public void close() {
        Roller r = roller;
        if (r != null) {
            r.close();
        }
        registry.close();
    }
}

package io.strand.logtier;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Every log of this node. Logs are opened lazily on first touch and closed when idle (by the
 * {@code log-reaper} thread), so 100,000 logs cost a directory each, not a mapped queue each.
 * Appends and deletes run as turns on the workspace's writer ({@link Writers}); reads run on the
 * caller's thread against the committed head.
 */
public final class LogStore implements AutoCloseable {
    /** Write-ahead record types: a batch excerpt as stored, keyed by {@code ws/name}; a log delete. */
    static final byte WAL_APPEND = 1;
    static final byte WAL_DELETE = 2;
    private final LogConfig config;
    private final Writers writers;
    /** Claimed from before a log's files are created and before each append touches its queue. */
    private final io.strand.core.DiskSpace disk;
    /** A closed, unused log's slot is forgotten only this long after its last lookup (see {@link LogSlot#forgettable}). */
    static final Duration FORGET_SLOTS_AFTER = Duration.ofSeconds(60);
    private volatile long forgetAfterNanos = FORGET_SLOTS_AFTER.toNanos();
    private final ConcurrentHashMap<String, LogSlot> slots = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, NavigableSet<String>> namesByWorkspace = new ConcurrentHashMap<>();
    private final AtomicInteger openLogs = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong reaperFailures = new java.util.concurrent.atomic.AtomicLong();
    private final ScheduledExecutorService reaper;
    private volatile ColdTier coldTier;
    private volatile Roller roller;
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
        this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "log-reaper");
            t.setDaemon(true);
            return t;
        });
        reaper.scheduleWithFixedDelay(this::closeIdle, 1, 1, TimeUnit.SECONDS);
        writers.onReplay(WAL_APPEND, payload -> replayed(payload, (slot, body) -> {
            Log log = slot.acquire(true);
            try {
                log.replay(body);
            } finally {
                slot.release();
            }
        }));
        writers.onReplay(WAL_DELETE, payload -> replayed(payload, (slot, body) -> forget(slot)));
    }

    /** Runs a write-ahead record's change as a turn on its workspace's writer, in record order. */
    private CompletableFuture<Void> replayed(java.nio.ByteBuffer payload, java.util.function.BiConsumer<LogSlot, byte[]> change) {
        String key = io.strand.core.WriteAheadLog.key(payload);
        byte[] body = io.strand.core.WriteAheadLog.rest(payload);
        int slash = key.indexOf('/');
        String ws = key.substring(0, slash);
        LogSlot slot = slot(ws, key.substring(slash + 1));
        return writers.submit(ws, commit -> {
            change.accept(slot, body);
            return null;
        });
    }

    /** Removes a log's hot files and its name; writer thread. */
    private boolean forget(LogSlot slot) {
        try {
            boolean hot = slot.deleteAll();
            NavigableSet<String> names = namesByWorkspace.get(slot.ws);
            if (names != null) {
                names.remove(slot.name);
            }
            return hot;
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot delete log " + slot.ws + "/" + slot.name + ": " + e.getMessage());
        }
    }

    /** Tiers old entries of every log into {@code tier} past the configured hot threshold. Call once, before traffic. */
    public void enableColdTier(ColdTier tier) {
        this.coldTier = tier;
        this.roller = new Roller(this, tier, config.hot());
    }

    /** Rolls every committed entry of a log to cold now (the {@code cold roll} tool); returns entries rolled. */
    public long rollNow(String ws, String name) {
        Names.workspace(ws);
        Names.object("log", name);
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
                "cacheHits", coldTier.cache().hits(), "cacheMisses", coldTier.cache().misses());
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

    LogSlot slotFor(String ws, String name) {
        return slot(ws, name);
    }

    public LogConfig config() {
        return config;
    }

    public Writers writers() {
        return writers;
    }

    // ---------------------------------------------------------------- writes

    /** Validates, then appends on the workspace's writer; completes after durability. */
    public CompletableFuture<AppendResult> append(String ws, String name, AppendRequest req) {
        Names.workspace(ws);
        Names.object("log", name);
        validate(req);
        LogSlot slot = slot(ws, name);
        String durable = config.durability().wire();
        CompletableFuture<AppendResult> ack = slot.whenOpen(() -> writers.submit(ws, commit -> {
            LogSlot held = slot;
            Log log = held.acquire(true);
            while (!registered(held)) { // forgotten while the turn was queued: never append through a second open queue
                letGo(held);
                held = slot(ws, name);
                log = held.acquire(true);
            }
            try {
                return log.append(req, commit, durable);
            } finally {
                held.release();
            }
        }));
        Roller r = roller;
        if (r != null) {
            ack.thenAccept(result -> r.afterAppend(ws, name, result.lastSeq()));
        }
        return ack;
    }

    private void validate(AppendRequest req) {
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

    /**
     * Deletes a log so that an error answer leaves it whole and a retry finishes it; false when it did
     * not exist. With a cold tier, while no roll runs: (1) the cold manifest is deleted on the calling
     * thread (object-store I/O never runs on a writer) — if the store fails, this throws
     * {@code cold_unavailable} with nothing deleted; (2) the hot data and the name go on the writer;
     * (3) the segment objects are deleted, best effort: leftovers are orphans that no manifest names,
     * so neither a reader nor a log re-created under the name ever sees them.
     */
    public boolean delete(String ws, String name) {
        Names.workspace(ws);
        Names.object("log", name);
        ColdTier tier = coldTier;
        if (tier == null) {
            return deleteHot(ws, name);
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
        LogSlot slot = slot(ws, name);
        return writers.submit(ws, commit -> {
            commit.log(WAL_DELETE, io.strand.core.WriteAheadLog.keyed(ws + '/' + name, new byte[0]));
            return forget(slot);
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
        return withLog(ws, name, log -> forward(log, Math.max(from, 1), limit, Long.MAX_VALUE, sink), emptyPage(from));
    }

    /**
     * As {@link #readForward(String, String, long, int, EntrySink)} when the page can be served from
     * memory and already open files (the log is open, the page starts in its newest hot cycle file,
     * no cold bound needs the object store), so a caller may serve it on its own thread; null when
     * not, having read nothing.
     */
    public PageInfo readForwardInPlace(String ws, String name, long from, int limit, EntrySink sink) {
        long start = Math.max(from, 1);
        return withLog(ws, name, false, log -> log.readsInPlace(start) ? forward(log, start, limit, Long.MAX_VALUE, sink) : null, null);
    }


    /** Up to {@code limit} entries, ending before {@code before} (Long.MAX_VALUE = after the head), ascending. */
    public Page readBackward(String ws, String name, long before, int limit) {
        List<Entry> entries = new ArrayList<>(Math.min(limit, 1024));
        return Page.of(readBackward(ws, name, before, limit, EntrySink.of(entries::add)), entries);
    }

    /** As {@link #readBackward(String, String, long, int)}, the entries streamed into {@code sink}. */
    public PageInfo readBackward(String ws, String name, long before, int limit, EntrySink sink) {
        return withLog(ws, name, log -> {
            long head = log.head();
            long end = Math.min(before, head + 1);
            long first = log.first();
            long start = Math.max(first, end - limit);
            long[] firstRead = {-1};
            int[] count = {0};
            long next = end;
            if (start < end) {
                long after = log.read(start, end - 1, limit, Long.MAX_VALUE, (seq, ts, key, data, offset, length) -> {
                    if (count[0]++ == 0) {
                        firstRead[0] = seq;
                    }
                    sink.entry(seq, ts, key, data, offset, length);
                });
                if (count[0] > 0) {
                    next = after;
                }
            }
            long prev = count[0] == 0 ? Math.min(start, end) : firstRead[0];
            return new PageInfo(count[0], next, prev, first, head, null);
        }, new PageInfo(0, 1, 1, 1, 0, null));
    }

    /** Forward page from the first entry with ts ≥ {@code ts}. */
    public Page readFromTime(String ws, String name, long ts, int limit) {
        List<Entry> entries = new ArrayList<>(Math.min(limit, 1024));
        return Page.of(readFromTime(ws, name, ts, limit, EntrySink.of(entries::add)), entries);
    }

    /** As {@link #readFromTime(String, String, long, int)}, the entries streamed into {@code sink}. */
    public PageInfo readFromTime(String ws, String name, long ts, int limit, EntrySink sink) {
        return withLog(ws, name, log -> forward(log, log.seqAtOrAfter(ts), limit, Long.MAX_VALUE, sink), emptyPage(1));
    }

    /** A chunk for a subscription, streamed into {@code sink}: at most {@code maxEntries} and about {@code maxBytes}. */
    public PageInfo readChunk(String ws, String name, long from, int maxEntries, long maxBytes, EntrySink sink) {
        return withLog(ws, name, log -> forward(log, Math.max(from, 1), maxEntries, maxBytes, sink), emptyPage(from));
    }

    private static PageInfo emptyPage(long from) {
        long f = Math.max(from, 1);
        return new PageInfo(0, f, 0, 1, 0, null);
    }

    private PageInfo forward(Log log, long from, int limit, long maxBytes, EntrySink sink) {
        long first = log.first();
        long head = log.head();
        Page.Gap gap = null;
        long start = from;
        if (from < first && first > 1) {
            gap = new Page.Gap(from, first - 1);
            start = first;
        }
        int[] count = {0};
        long next = log.read(start, head, limit, maxBytes, (seq, ts, key, data, offset, length) -> {
            count[0]++;
            sink.entry(seq, ts, key, data, offset, length);
        });
        return new PageInfo(count[0], Math.max(next, start), 0, first, head, gap);
    }

    public Optional<LogInfo> info(String ws, String name) {
        return Optional.ofNullable(withLog(ws, name, log -> log.info(retentionDefaults), null));
    }

    /**
     * First seq still stored in the log's hot queue, 0 when it holds none (or the log does not exist).
     * Seqs below it are read from the cold tier only; rolled seqs at or above it are still read from
     * hot files until their cycle file is dropped.
     */
    public long hotStoredFirst(String ws, String name) {
        return withLog(ws, name, log -> log.hot().firstSeq(), 0L);
    }

    /** Log names of a workspace in name order, after {@code after} (exclusive, may be null). */
    public List<String> list(String ws, String after, int limit) {
        Names.workspace(ws);
        NavigableSet<String> names = names(ws);
        NavigableSet<String> tail = after == null || after.isEmpty() ? names : names.tailSet(after, false);
        List<String> out = new ArrayList<>(Math.min(limit, 1024));
        for (String n : tail) {
            if (out.size() >= limit) {
                break;
            }
            out.add(n);
        }
        return out;
    }

    /** Workspaces holding at least one log, in name order (their directories under the logs dir, and any created since). */
    public List<String> workspaces() {
        java.util.TreeSet<String> out = new java.util.TreeSet<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(config.logsDir())) {
            for (Path p : stream) {
                String w = p.getFileName().toString();
                if (Files.isDirectory(p) && (Names.isWorkspace(w) || Names.SYSTEM_WORKSPACE.equals(w))) {
                    out.add(w);
                }
            }
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot list workspaces in " + config.logsDir() + ": " + e.getMessage());
        }
        out.addAll(namesByWorkspace.keySet());
        out.removeIf(w -> names(w).isEmpty());
        return List.copyOf(out);
    }

    private NavigableSet<String> names(String ws) {
        return namesByWorkspace.computeIfAbsent(ws, w -> {
            NavigableSet<String> set = new ConcurrentSkipListSet<>();
            Path dir = config.logsDir().resolve(w);
            if (Files.isDirectory(dir)) {
                try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
                    for (Path p : stream) {
                        String n = p.getFileName().toString();
                        if (Names.isObject(n) && Log.exists(p)) {
                            set.add(n);
                        }
                    }
                } catch (IOException e) {
                    throw new StrandException(ErrorCode.UNAVAILABLE, "cannot list logs of " + w + ": " + e.getMessage());
                }
            }
            return set;
        });
    }

    <T> T withLog(String ws, String name, java.util.function.Function<Log, T> body, T absent) {
        return withLog(ws, name, true, body, absent);
    }

    /** Runs {@code body} on the open log ({@code absent} when it does not exist, or is closed and {@code open} is false). */
    private <T> T withLog(String ws, String name, boolean open, java.util.function.Function<Log, T> body, T absent) {
        Names.workspace(ws);
        Names.object("log", name);
        while (true) {
            LogSlot slot = slot(ws, name);
            Log log = open ? slot.acquire(false) : slot.acquireIfOpen();
            if (log == null) {
                return absent;
            }
            if (!registered(slot)) {
                letGo(slot); // forgotten between the lookup and the acquire: never read through a second open queue
                continue;
            }
            try {
                return body.apply(log);
            } finally {
                slot.release();
            }
        }
    }

    /** True while {@code slot} is the one the registry holds for its log (held, it stays so). */
    private boolean registered(LogSlot slot) {
        return slots.get(slot.ws + '/' + slot.name) == slot;
    }

    /** Releases an acquire made on a slot the reaper forgot meanwhile, closing the log it opened there. */
    private static void letGo(LogSlot orphan) {
        orphan.release();
        orphan.closeIfIdle(Long.MAX_VALUE, 0); // its last user closes it
    }

    // ---------------------------------------------------------------- subscriptions

    /** A handle that keeps a log's head signal while a subscription follows it; close when done. */
    public LogWatch watch(String ws, String name) {
        Names.workspace(ws);
        Names.object("log", name);
        while (true) {
            LogSlot slot = slot(ws, name);
            slot.addWatcher();
            if (registered(slot)) { // watched, it is never forgotten; a forgotten one would never see the head move
                return new LogWatch(this, ws, name, slot);
            }
            slot.removeWatcher();
        }
    }

    /** Current committed head of a log (opening it if it exists). */
    long headOf(String ws, String name, LogSlot slot) {
        Log log = slot.acquire(false);
        if (log == null) {
            return slot.signal.head();
        }
        try {
            return log.head();
        } finally {
            slot.release();
        }
    }

    // ---------------------------------------------------------------- slots

    /**
     * The registry's slot for a log, created on first touch. Each lookup is stamped under the map's
     * lock for that key, atomically with the reaper forgetting the slot ({@link #closeIdle}), so a
     * slot just looked up is never forgotten before its caller uses it.
     */
    private LogSlot slot(String ws, String name) {
        return slots.compute(ws + '/' + name, (key, found) -> {
            LogSlot slot = found != null ? found : new LogSlot(ws, name, config.logsDir().resolve(ws).resolve(name));
            slot.lookedUp = System.nanoTime();
            return slot;
        });
    }

    /** Replaces {@link #FORGET_SLOTS_AFTER}: tests shorten it to race the reaper forgetting slots. */
    void forgetSlotsAfter(Duration after) {
        forgetAfterNanos = after.toNanos();
    }

    /**
     * Closes idle logs, least recently used first when too many are open, and forgets unused slots
     * (the reaper's turn); returns how many it closed.
     */
    int closeIdle() {
        int closed = 0;
        try {
            long now = System.nanoTime();
            long idleNanos = config.idleClose().toNanos();
            int over = openLogs.get() - config.maxOpenLogs();
            List<LogSlot> candidates = new ArrayList<>(slots.values());
            if (over > 0) {
                candidates = leastRecentlyUsedFirst(candidates);
            }
            for (LogSlot slot : candidates) {
                boolean force = over > 0;
                if (slot.closeIfIdle(now, force ? 0 : idleNanos)) {
                    over--;
                    closed++;
                }
                slots.computeIfPresent(slot.ws + '/' + slot.name, (key, found) -> found == slot && slot.forgettable() ? null : found);
            }
        } catch (RuntimeException e) {
            reaperFailures.incrementAndGet();
            System.getLogger("strand.logs").log(System.Logger.Level.WARNING, "idle close failed", e);
        }
        return closed;
    }

    /**
     * {@code slots} ordered by their last use as read once here: readers move {@code lastUsed} while
     * the reaper sorts, and a sort whose keys change under it fails ("Comparison method violates its
     * general contract!"), which used to leave the open-logs cap unenforced.
     */
    private static List<LogSlot> leastRecentlyUsedFirst(List<LogSlot> slots) {
        record Seen(LogSlot slot, long lastUsed) {
        }
        List<Seen> seen = new ArrayList<>(slots.size());
        for (LogSlot slot : slots) {
            seen.add(new Seen(slot, slot.lastUsed()));
        }
        seen.sort(Comparator.comparingLong(Seen::lastUsed));
        return seen.stream().map(Seen::slot).toList();
    }

    /** Reaper turns that failed (each logged); a failed turn leaves logs open past the cap. */
    long reaperFailures() {
        return reaperFailures.get();
    }

    public int openLogs() {
        return openLogs.get();
    }

    /** How many {@link LogWatch}es of a log are open now (0 for a log the registry does not hold). */
    public int watchers(String ws, String name) {
        LogSlot slot = slots.get(ws + '/' + name);
        return slot == null ? 0 : slot.watchers();
    }

    @Override
    public void close() {
        Roller r = roller;
        if (r != null) {
            r.close();
        }
        reaper.shutdownNow();
        for (LogSlot slot : slots.values()) {
            slot.closeIfIdle(Long.MAX_VALUE, 0);
        }
    }

    /** One log's place in the registry: its head signal and, while in use, its open {@link Log}. */
    final class LogSlot {
        final String ws;
        final String name;
        final Path dir;
        final HeadSignal signal = new HeadSignal();
        private Log log;
        private int active;
        private int watchers;
        private long lastUsed = System.nanoTime();
        /** When {@link LogStore#slot} last returned this slot (stamped under the registry's lock for its key). */
        volatile long lookedUp = System.nanoTime();

        LogSlot(String ws, String name, Path dir) {
            this.ws = ws;
            this.name = name;
            this.dir = dir;
        }

        /** Appends that arrived while the log was being opened off the writer thread, in arrival order. */
        private List<Runnable> waitingForOpen;

        /**
         * Runs {@code submit} once the log is open. Opening (creating files, mapping the queue) takes
         * milliseconds, so it happens on a virtual thread rather than the workspace's writer; appends
         * that arrive meanwhile queue here and are submitted in arrival order, so order is kept.
         */
        <T> CompletableFuture<T> whenOpen(java.util.function.Supplier<CompletableFuture<T>> submit) {
            synchronized (this) {
                if (log != null) {
                    return submit.get();
                }
                CompletableFuture<T> result = new CompletableFuture<>();
                Runnable start = () -> submit.get().whenComplete((v, t) -> {
                    if (t != null) {
                        result.completeExceptionally(t);
                    } else {
                        result.complete(v);
                    }
                });
                if (waitingForOpen == null) {
                    waitingForOpen = new ArrayList<>();
                    waitingForOpen.add(start);
                    Thread.ofVirtual().name("log-open-" + ws + "/" + name).start(this::openThenSubmitWaiting);
                } else {
                    waitingForOpen.add(start);
                }
                return result;
            }
        }

        private synchronized void openThenSubmitWaiting() {
            List<Runnable> waiting = waitingForOpen;
            waitingForOpen = null;
            try {
                acquire(true);
                release();
            } catch (RuntimeException e) {
                // the turns will reopen on the writer and report the failure to each caller
            }
            waiting.forEach(Runnable::run);
        }

        synchronized Log acquire(boolean create) {
            if (log == null) {
                log = Log.open(ws, name, dir, config, signal, create, disk);
                if (log == null) {
                    return null;
                }
                openLogs.incrementAndGet();
                ColdTier tier = coldTier;
                log.cold(tier == null ? ColdPart.NONE : tier.part(ws, name));
                warmCold(log);
                if (create) {
                    names(ws).add(name);
                }
            }
            active++;
            lastUsed = System.nanoTime();
            return log;
        }

        /** Loads the cold manifest now so reads need no object-store round trip; a store that is down only delays it. */
        private void warmCold(Log log) {
            try {
                log.cold().lastSeq();
                Roller r = roller;
                if (r != null && log.head() > 0) {
                    r.afterAppend(ws, name, log.head());
                }
            } catch (RuntimeException e) {
                // cold reads will report cold_unavailable; appends do not need the cold part
            }
        }

        /** The log when it is open already (counted as in use, like {@link #acquire}); null when opening it would touch files. */
        synchronized Log acquireIfOpen() {
            if (log == null) {
                return null;
            }
            active++;
            lastUsed = System.nanoTime();
            return log;
        }

        synchronized void release() {
            active--;
            lastUsed = System.nanoTime();
        }

        synchronized void addWatcher() {
            watchers++;
        }

        synchronized void removeWatcher() {
            watchers--;
        }

        synchronized int watchers() {
            return watchers;
        }

        synchronized long lastUsed() {
            return lastUsed;
        }

        synchronized boolean closeIfIdle(long now, long idleNanos) {
            if (log == null || active > 0 || now - lastUsed < idleNanos) {
                return false;
            }
            log.close();
            log = null;
            openLogs.decrementAndGet();
            return true;
        }

        /**
         * True when the registry may drop this slot: its log is closed, unused and unwatched, nothing
         * waits for it to open, and it was not looked up for {@link #FORGET_SLOTS_AFTER} (a lookup is
         * followed by its acquire, watch or writer turn well within that; reads also check, see withLog).
         */
        synchronized boolean forgettable() {
            return log == null && active == 0 && watchers == 0 && waitingForOpen == null
                    && System.nanoTime() - lookedUp >= forgetAfterNanos;
        }

        /** Closes and removes the log's files; writer thread. */
        synchronized boolean deleteAll() throws IOException {
            boolean existed = log != null || Log.exists(dir);
            if (log != null) {
                log.hot().close();
                log = null;
                openLogs.decrementAndGet();
            }
            if (Files.exists(dir)) {
                try (Stream<Path> walk = Files.walk(dir)) {
                    for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                }
            }
            signal.reset(0);
            return existed;
        }
    }
}

package io.strand.logtier;

import io.strand.core.Agent;
import io.strand.core.DiskSpace;
import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Thread-safe: every log of this node, by name — its {@link LogSlot}, the names of each workspace,
 * and the {@code log-reaper} {@link Agent} that closes idle logs and forgets unused slots. Logs are
 * opened lazily on first touch and closed when idle, so 100,000 logs cost a directory each, not a
 * mapped queue each.
 *
 * <p>One way in: append, read, watch, delete, roll and replay all reach a log through
 * {@link #hold} (or {@link #watch}, {@link #whenOpen}), which retries when the slot it found was
 * forgotten meanwhile. A forgotten slot refuses every caller, so no caller ever opens, appends to,
 * reads or deletes a log through a slot the registry no longer holds.
 */
final class LogRegistry implements AutoCloseable {
    /** A closed, unused log's slot is forgotten only this long after its last lookup (a cache policy: correctness does not need it). */
    static final Duration FORGET_SLOTS_AFTER = Duration.ofSeconds(60);
    /** How often the reaper walks every slot (idle close, forgetting); cap passes run whenever woken. */
    static final Duration FULL_PASS_EVERY = Duration.ofSeconds(1);
    private static final System.Logger LOG = System.getLogger("strand.logs");

    /** Told of each log the registry opens (to attach its cold part). */
    interface Opened {
        void opened(String ws, String name, Log log);
    }

    private final LogConfig config;
    /** Claimed from before a log's files are created and before each append touches its queue. */
    private final DiskSpace disk;
    private final Opened opened;
    private final ConcurrentHashMap<String, LogSlot> slots = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, NavigableSet<String>> namesByWorkspace = new ConcurrentHashMap<>();
    private final AtomicInteger openLogs = new AtomicInteger();
    /** The slots whose log is open: the cap pass sorts these, never every slot. */
    private final Set<LogSlot> openSlots = ConcurrentHashMap.newKeySet();
    /** Set by {@link #close}: no log opens after it (a request still running must not leave one open). */
    private volatile boolean closed;
    /** When the last full pass (idle close and forgetting, over every slot) began; the reaper's (and tests') thread. */
    private volatile long lastFullPass = System.nanoTime();
    private final AtomicLong reaperFailures = new AtomicLong();
    private volatile long forgetAfterNanos = FORGET_SLOTS_AFTER.toNanos();
    private final Agent reaper;

    LogRegistry(LogConfig config, DiskSpace disk, Opened opened) {
        this.config = config;
        this.disk = disk;
        this.opened = opened;
        this.reaper = Agent.start("log-reaper", FULL_PASS_EVERY, this::reap);
    }

    /** The slot of {@code ws/name}, held: release it when done. The one way every caller reaches a log. */
    LogSlot hold(String ws, String name) {
        while (true) {
            LogSlot slot = lookUp(ws, name);
            if (slot.hold()) {
                return slot;
            }
            Thread.onSpinWait(); // forgotten: the map drops it at once, and the next lookup makes a new slot
        }
    }

    /** Runs {@code body} on the log {@code ws/name}, held open meanwhile; {@code absent} when there is none as {@code how} asks. */
    <T> T withLog(String ws, String name, LogSlot.Open how, Function<Log, T> body, T absent) {
        LogSlot slot = hold(ws, name);
        try {
            Log log = slot.log(how);
            return log == null ? absent : body.apply(log);
        } finally {
            slot.release();
        }
    }

    /** The slot of {@code ws/name} with a watcher added: never forgotten until the watcher is removed. */
    LogSlot watch(String ws, String name) {
        while (true) {
            LogSlot slot = lookUp(ws, name);
            if (slot.addWatcher()) {
                return slot;
            }
            Thread.onSpinWait();
        }
    }

    /** As {@link LogSlot#whenOpen}, on the slot the registry holds for {@code ws/name}. */
    <T> CompletableFuture<T> whenOpen(String ws, String name, boolean create, Supplier<CompletableFuture<T>> submit) {
        while (true) {
            CompletableFuture<T> result = lookUp(ws, name).whenOpen(create, submit);
            if (result != null) {
                return result;
            }
            Thread.onSpinWait();
        }
    }

    /** Closes the log {@code ws/name}, removes its files and its name; its workspace's writer thread. */
    boolean delete(String ws, String name) {
        LogSlot slot = hold(ws, name);
        try {
            boolean hot = slot.deleteAll();
            NavigableSet<String> names = namesByWorkspace.get(ws);
            if (names != null) {
                names.remove(name);
            }
            return hot;
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot delete log " + ws + "/" + name + ": " + e.getMessage());
        } finally {
            slot.release();
        }
    }

    /**
     * True when {@code ws/name} has been created (open now, or its files are on disk). Any thread; a
     * hint for refusing early what a turn would refuse, since a log may be created right after.
     */
    boolean exists(String ws, String name) {
        LogSlot slot = slots.get(key(ws, name));
        return slot != null && slot.isOpen() || Log.exists(config.logsDir().resolve(ws).resolve(name));
    }

    /** The registry's slot for a log, created on first touch. */
    private LogSlot lookUp(String ws, String name) {
        String key = key(ws, name);
        LogSlot slot = slots.get(key);
        if (slot == null) {
            slot = slots.computeIfAbsent(key, k -> new LogSlot(this, ws, name, config.logsDir().resolve(ws).resolve(name)));
        }
        slot.lookedUp = System.nanoTime();
        return slot;
    }

    /** Opens the log of {@code slot} (from {@link LogSlot#log}, under its lock); null when absent and not creating. */
    Log open(LogSlot slot, boolean create) {
        if (closed) {
            throw StrandException.stopping();
        }
        Log log = Log.open(slot.ws, slot.name, slot.dir, config, slot.signal, create, disk);
        if (log == null) {
            return null;
        }
        if (closed) { // closed while this one opened: close() may have passed this slot already
            log.close();
            throw StrandException.stopping();
        }
        openSlots.add(slot);
        if (openLogs.incrementAndGet() > config.maxOpenLogs()) {
            reaper.wake(); // a cap pass now, not at the next tick: logs may be opened far faster than one per tick
        }
        opened.opened(slot.ws, slot.name, log);
        if (create) {
            names(slot.ws).add(slot.name);
        }
        return log;
    }

    /** A slot closed its log. */
    void closed(LogSlot slot) {
        openSlots.remove(slot);
        openLogs.decrementAndGet();
    }

    /** Log names of a workspace in name order, after {@code after} (exclusive, may be null). */
    List<String> list(String ws, String after, int limit) {
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
    List<String> workspaces() {
        TreeSet<String> out = new TreeSet<>();
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

    /** Replaces {@link #FORGET_SLOTS_AFTER}: tests shorten it to race the reaper forgetting slots. */
    void forgetSlotsAfter(Duration after) {
        forgetAfterNanos = after.toNanos();
    }

    /**
     * The reaper's pass: closes idle logs, least recently used first when too many are open, and
     * forgets unused slots; returns how many logs it closed.
     */
    int closeIdle() {
        long now = System.nanoTime();
        lastFullPass = now;
        return guarded(() -> closeOverCap() + closeIdleAndForget(now));
    }

    /** The reaper thread's work: a cap pass each time it runs (woken or on its tick), a full pass once per {@link #FULL_PASS_EVERY}. */
    private void reap() {
        if (System.nanoTime() - lastFullPass >= FULL_PASS_EVERY.toNanos()) {
            closeIdle();
        } else {
            guarded(this::closeOverCap);
        }
    }

    private int guarded(IntSupplier pass) {
        try {
            return pass.getAsInt();
        } catch (RuntimeException e) {
            reaperFailures.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "idle close failed", e);
            return 0;
        }
    }

    /**
     * Above {@code maxOpenLogs}, closes the least recently used open logs nobody holds until the count
     * is down to 7/8 of the cap, so that a stream of new logs wakes this pass once per eighth of the cap
     * rather than once per log. Sorts the open slots only.
     */
    private synchronized int closeOverCap() { // passes never overlap, so together they close no more than the excess
        int max = config.maxOpenLogs();
        if (openLogs.get() <= max) {
            return 0;
        }
        int over = openLogs.get() - (max - max / 8);
        int closed = 0;
        for (LogSlot slot : leastRecentlyUsedFirst(new ArrayList<>(openSlots))) {
            if (over <= 0) {
                break;
            }
            if (slot.closeIfIdle(System.nanoTime(), 0)) {
                over--;
                closed++;
            }
        }
        return closed;
    }

    /**
     * Closes the open logs idle for {@code idleClose}, then forgets the unused slots. Only the open
     * slots are looked at for the first; for the second every slot is, but the map is touched only for
     * one that may go: with 100,000 recently used logs, a key built and looked up per slot every second
     * was 5–6 % of the server's Java samples under {@code many-logs} (JFR, 2026-12-05).
     */
    private int closeIdleAndForget(long now) {
        int closed = 0;
        long idleNanos = config.idleClose().toNanos();
        for (LogSlot slot : openSlots) { // a closed log leaves the set as the loop goes: the set's iterator allows it
            if (slot.closeIfIdle(now, idleNanos)) {
                closed++;
            }
        }
        long forgetAfter = forgetAfterNanos;
        for (Map.Entry<String, LogSlot> e : slots.entrySet()) {
            LogSlot slot = e.getValue();
            if (slot.forgettable(now, forgetAfter)) {
                slots.computeIfPresent(e.getKey(),
                        (key, found) -> found == slot && slot.forget(System.nanoTime(), forgetAfter) ? null : found);
            }
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

    /** Reaper passes that failed (each logged); a failed pass leaves logs open past the cap. */
    long reaperFailures() {
        return reaperFailures.get();
    }

    int openLogs() {
        return openLogs.get();
    }

    /** How many watches of a log are open now (0 for a log the registry does not hold). */
    int watchers(String ws, String name) {
        LogSlot slot = slots.get(key(ws, name));
        return slot == null ? 0 : slot.watchers();
    }

    /** True while the log {@code ws/name} is open, without waiting for an open in progress ({@link LogSlot#isOpen}). */
    boolean isOpen(String ws, String name) {
        LogSlot slot = slots.get(key(ws, name));
        return slot != null && slot.isOpen();
    }

    /** The key of {@link #slots}: {@code ws/name}. */
    private static String key(String ws, String name) {
        return ws + '/' + name;
    }

    /** Stops the reaper and closes every log nobody holds; no log opens after it. */
    @Override
    public void close() {
        closed = true;
        reaper.close();
        for (LogSlot slot : slots.values()) {
            slot.closeIfIdle(Long.MAX_VALUE, 0);
        }
    }
}

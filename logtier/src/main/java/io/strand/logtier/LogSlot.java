package io.strand.logtier;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Thread-safe (its monitor guards its state; the head signal is thread-safe itself): one log's
 * place in the {@link LogRegistry}. It keeps the log's {@link HeadSignal} and, while in use, its
 * open {@link Log}, and counts who holds it. Callers reach it only through the registry
 * ({@link LogRegistry#hold}, {@link LogRegistry#watch}, {@link LogRegistry#whenOpen}).
 *
 * <p>Once the registry has forgotten a slot ({@link #forget}) the slot refuses every caller:
 * {@link #hold}, {@link #addWatcher} and {@link #whenOpen} say so, and the caller looks the log up
 * again and gets its new slot. A slot is forgotten only while its log is closed and nobody holds,
 * watches or waits on it, so a log is open in at most one slot, and nothing that looked a slot up
 * before the reaper forgot it can open, append to, read or delete the log through it.
 */
final class LogSlot {
    final String ws;
    final String name;
    final Path dir;
    final HeadSignal signal = new HeadSignal();
    private final LogRegistry registry;
    /** Written under this slot's lock; volatile so {@link #isOpen} can look without waiting for an open in progress. */
    private volatile Log log;
    private int holds;
    private int watchers;
    private boolean forgotten;
    private long lastUsed = System.nanoTime();
    /** When the registry last looked this slot up (it is forgotten only some time after). */
    volatile long lookedUp = System.nanoTime();
    /** Appends that arrived while the log was being opened off the writer thread, in arrival order. */
    private List<Runnable> waitingForOpen;
    /** Whether one of {@link #waitingForOpen} may create the log (the open then creates its files). */
    private boolean createForWaiting;

    /** How a holder wants the log. */
    enum Open {
        /** Only when it is open already (a read that must not touch files). */
        IF_OPEN,
        /** Opened when its files exist. */
        IF_EXISTS,
        /** Opened, its files created when missing. */
        CREATE
    }

    LogSlot(LogRegistry registry, String ws, String name, Path dir) {
        this.registry = registry;
        this.ws = ws;
        this.name = name;
        this.dir = dir;
    }

    /** Holds this slot (it is not forgotten, nor its log closed as idle, until {@link #release}); false when forgotten. */
    synchronized boolean hold() {
        if (forgotten) {
            return false;
        }
        holds++;
        lastUsed = System.nanoTime();
        return true;
    }

    /** The log of this held slot as {@code how} asks, or null (it does not exist, or is not open and {@code IF_OPEN}). */
    synchronized Log log(Open how) {
        if (holds <= 0) {
            throw new IllegalStateException("log " + ws + "/" + name + " used without holding its slot");
        }
        if (log == null && how != Open.IF_OPEN) {
            log = registry.open(this, how == Open.CREATE);
        }
        return log;
    }

    /**
     * True while the log is open; any thread, without this slot's lock (which an open holds for its
     * whole length, cold manifest read included). A hint for where to run a first read: the log may
     * close right after.
     */
    boolean isOpen() {
        return log != null;
    }

    synchronized void release() {
        holds--;
        lastUsed = System.nanoTime();
    }

    /** Adds a watcher (the slot is not forgotten while watched); false when forgotten. */
    synchronized boolean addWatcher() {
        if (forgotten) {
            return false;
        }
        watchers++;
        return true;
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

    /**
     * Runs {@code submit} once the log is open; null, having run nothing, when the slot is forgotten.
     * Opening (creating files, mapping the queue) takes milliseconds, so it happens on a virtual
     * thread rather than the workspace's writer; appends that arrive meanwhile queue here and are
     * submitted in arrival order, so order is kept. {@code create}: this caller may create the log (an
     * append that must find it existing, {@code expectedLastSeq > 0}, may not: its turn decides, in
     * order, and a refused one leaves no log); the open creates its files when any waiting caller may.
     */
    <T> CompletableFuture<T> whenOpen(boolean create, Supplier<CompletableFuture<T>> submit) {
        synchronized (this) {
            if (forgotten) {
                return null;
            }
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
                createForWaiting = create;
                waitingForOpen.add(start);
                Thread.ofVirtual().name("log-open-" + ws + "/" + name).start(this::openThenSubmitWaiting);
            } else {
                createForWaiting |= create;
                waitingForOpen.add(start);
            }
            return result;
        }
    }

    private synchronized void openThenSubmitWaiting() {
        List<Runnable> waiting = waitingForOpen;
        waitingForOpen = null;
        if (hold()) { // it is: a slot with appends waiting is never forgotten
            try {
                log(createForWaiting ? Open.CREATE : Open.IF_EXISTS);
            } catch (RuntimeException e) {
                // the turns will open it on the writer and report the failure to each caller
            } finally {
                release();
            }
        }
        waiting.forEach(Runnable::run);
    }

    /** Closes the log when nobody holds it and it was unused for {@code idleNanos}; true when it did. */
    synchronized boolean closeIfIdle(long now, long idleNanos) {
        if (log == null || holds > 0 || now - lastUsed < idleNanos) {
            return false;
        }
        log.close();
        log = null;
        registry.closed(this);
        return true;
    }

    /**
     * Marks this slot forgotten when the registry may drop it: its log is closed, nobody holds,
     * watches or waits on it, and it was not looked up for {@code afterNanos}. From then on it refuses
     * every caller. Called by the registry under its lock for this slot's key.
     */
    synchronized boolean forget(long now, long afterNanos) {
        if (!forgettable(now, afterNanos)) {
            return false;
        }
        forgotten = true;
        return true;
    }

    /** True when {@link #forget} would forget this slot at {@code now}; marks nothing (the registry's look before it locks the key). */
    synchronized boolean forgettable(long now, long afterNanos) {
        return log == null && holds == 0 && watchers == 0 && waitingForOpen == null && now - lookedUp >= afterNanos;
    }

    /** Closes the log and removes its files; the caller holds this slot, on the log's writer thread. */
    synchronized boolean deleteAll() throws IOException {
        boolean existed = log != null || Log.exists(dir);
        if (log != null) {
            log.discard();
            log = null;
            registry.closed(this);
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

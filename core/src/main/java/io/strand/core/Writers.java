package io.strand.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.LongConsumer;

/**
 * The single writer of every stored object: work for one owner (a workspace) always runs on the
 * same named thread, in submission order, so a log's appender and a doc's current value each have
 * exactly one writer and a future cross-object transaction has one place to run.
 *
 * <p>Group commit ({@link GroupCommitter}, one per writer thread): each thread drains what is queued
 * (up to {@code maxBatch} turns), runs the turns, then hands the records they logged to its {@link CommitLog} lane (in {@code fsync} mode the
 * {@link WriteAheadLog}'s, one durable write; in {@code os} mode {@link CommitLog#none()}'s, which
 * logs nothing), then runs their after-durable hooks, then completes their futures.
 * Concurrent writers therefore share one device flush, and a future log+doc transaction is one
 * group's records. Futures complete on the writer thread: chain follow-up work with the
 * {@code *Async} variants so it never blocks a writer.
 *
 * <p><b>The turn.</b> A writer's state (its lane, its stores' appenders, what its turns keep) is
 * owned by whoever holds that writer's <i>turn</i>, one thread at a time: its own thread, or an event
 * loop that queued turns while {@link LoopHost#deferring deferring} and runs their group itself (and
 * a few more, if other threads queued turns meanwhile) before it next sleeps ({@link LoopHost#runDeferred}), as Redis's loop runs its commands and its
 * {@code fsync} before {@code epoll_wait}. That skips waking the writer thread and the loop's wake-up
 * per request while the write is on the device: what arrives meanwhile is read with one
 * {@code epoll_wait}. Taking and handing back the turn is an atomic flag, so each holder sees what
 * the one before it wrote. Where a class's Javadoc says it is owned by "the writer thread", it means
 * whichever thread holds that writer's turn; per-writer state of an owner is keyed by
 * {@link #currentWriter()}, never by the thread.
 */
public final class Writers implements AutoCloseable {

    /** Work run on an owner's writer thread. Validate before writing: a turn that throws must have written nothing. */
    @FunctionalInterface
    public interface Turn<T> {
        T run(Commit commit) throws Exception;
    }

    /** What one group commit must do after its turns ran. Used only by the holder of its writer's turn. */
    public static final class Commit {
        /** False when the lane logs nothing ({@code os} mode: the page cache is the durability); records then stay empty. */
        private final boolean logging;
        final GroupRecords records = new GroupRecords();
        final List<Runnable> afterDurable = new ArrayList<>();

        Commit(boolean logging) {
            this.logging = logging;
        }

        /** True when changes must be {@link #log logged} to be durable (so owners can skip encoding them otherwise). */
        public boolean logging() {
            return logging;
        }

        /**
         * Records a change this turn made, for replay after a crash; durable before anyone is
         * acknowledged. {@code type} and the payload's layout: {@link WalRecordType}.
         */
        public void log(byte type, byte[] payload) {
            if (logging) {
                records.add(type, payload);
            }
        }

        /** Runs after the batch is durable and before the futures complete (e.g. publish a new head). */
        public void afterDurable(Runnable hook) {
            afterDurable.add(hook);
        }

        /** Hooks registered before the current turn; a turn that fails drops the ones it added. */
        private int hooksAtMark;

        int mark() {
            hooksAtMark = afterDurable.size();
            return records.mark();
        }

        /** Undoes what a failed turn logged and the hooks it registered: none of its changes are published. */
        void rollback(int mark) {
            records.reset(mark);
            afterDurable.subList(hooksAtMark, afterDurable.size()).clear();
        }

        void clear() {
            records.clear();
            afterDurable.clear();
        }
    }

    /** The writer whose turn the calling thread holds, while it holds one. */
    static final ThreadLocal<GroupCommitter> HOLDING = new ThreadLocal<>();
    /** The loop host of the calling thread, if it is an event loop that {@link LoopHost#attach attached} one. */
    private static final ThreadLocal<LoopHost> HOST = new ThreadLocal<>();

    /**
     * Owned by one event-loop thread: the writers it queued turns on while deferring, whose next
     * group it runs itself before it sleeps. Work run while deferring must never wait for a turn it
     * submitted: that turn runs only after the work returns.
     */
    public static final class LoopHost {
        /**
         * Request bytes past which a loop hands its deferred turns to the writer thread instead of
         * running them: a big batch is parsed on the loop while the writer thread writes the previous
         * one, which keeps both cores busy (measured: appends batched ×100 lost a quarter of their
         * rate when the loop ran their groups itself, see {@code docs/measurements.md}).
         */
        public static final int RUN_AT_MOST_BYTES = 8 << 10;
        private final List<GroupCommitter> pending = new ArrayList<>(4);
        /** Request bytes whose turns were deferred since the last {@link #runDeferred}. */
        private long deferredBytes;
        /** True while {@link #deferring} runs: submissions from this thread are left for {@link #runDeferred}. */
        private boolean deferringNow;

        /** Makes this the calling (loop) thread's host; call once, on the loop thread. */
        public void attach() {
            HOST.set(this);
        }

        /** The calling thread's attached host, or null (not an event loop, or one that runs no writes). */
        public static LoopHost current() {
            return HOST.get();
        }

        /**
         * Runs {@code work} (the handling of one request of {@code requestBytes}) with its turns left
         * for {@link #runDeferred}.
         */
        public void deferring(int requestBytes, Runnable work) {
            deferredBytes += requestBytes;
            deferringNow = true;
            try {
                work.run();
            } finally {
                deferringNow = false;
            }
        }

        /** True when turns are waiting for {@link #runDeferred}. */
        public boolean hasDeferred() {
            return !pending.isEmpty();
        }

        /**
         * Before the loop sleeps: runs the group on each writer it queued turns on, where that writer's
         * turn is free (and more groups while turns are queued, up to {@link #LOOP_GROUPS_MAX}); where it is held, the holder runs them (it looks at its queue after letting go).
         * When the requests deferred come to over {@link #RUN_AT_MOST_BYTES}, wakes the writer threads
         * for them instead.
         */
        public void runDeferred() {
            boolean run = deferredBytes <= RUN_AT_MOST_BYTES;
            deferredBytes = 0;
            for (int i = 0; i < pending.size(); i++) {
                if (run) {
                    pending.get(i).runHere();
                } else {
                    pending.get(i).wake();
                }
            }
            pending.clear();
        }

        void add(GroupCommitter w) {
            if (!pending.contains(w)) {
                pending.add(w);
            }
        }
    }

    private final GroupCommitter[] committers;
    private final Durability durability;
    private final CommitLog log;
    private final java.util.Map<Byte, CommitLog.Replayer> replayers = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param threads           number of writer threads (owners are spread over them by hash)
     * @param durability        FSYNC writes each group's records durably before acking; OS logs nothing
     * @param log               where records go in FSYNC mode, and what {@link #recover} replays in
     *                          either mode (what an FSYNC run left); null: {@link CommitLog#none()}, OS mode only
     * @param syncNanosObserver receives the duration of each durable group write (for the commit-latency metric)
     */
    public Writers(String name, int threads, Durability durability, int maxBatch, CommitLog log, LongConsumer syncNanosObserver) {
        this(name, threads, durability, maxBatch, log, syncNanosObserver, turns -> { });
    }

    /**
     * As {@link #Writers(String, int, Durability, int, CommitLog, LongConsumer)}, and
     * {@code groupSizeObserver} receives, on the writer thread, the number of turns each group
     * commit ran, failed turns included, after the group completed (groups that ran none, e.g. all
     * refused after a failed write, are not reported): how many requests shared one write-ahead
     * write in {@code fsync} mode, for the group-size metric.
     */
    public Writers(String name, int threads, Durability durability, int maxBatch, CommitLog log, LongConsumer syncNanosObserver,
                   IntConsumer groupSizeObserver) {
        if (threads < 1 || maxBatch < 1) {
            throw new IllegalArgumentException("threads and maxBatch must be ≥ 1");
        }
        this.log = log == null ? CommitLog.none() : log;
        if (durability == Durability.FSYNC && this.log == CommitLog.none()) {
            throw new IllegalArgumentException("fsync durability needs a write-ahead log");
        }
        this.durability = durability;
        this.committers = new GroupCommitter[threads];
        for (int i = 0; i < threads; i++) {
            CommitLog.Lane lane = durability == Durability.FSYNC ? this.log.lane(i) : CommitLog.none().lane(i);
            committers[i] = new GroupCommitter(name + "-writer-" + i, maxBatch, lane, syncNanosObserver, groupSizeObserver);
            committers[i].thread.start();
        }
    }

    public Durability durability() {
        return durability;
    }

    /** Routes write-ahead records of {@code type} to {@code replayer} on start ({@link #recover}) and {@link #replay}. */
    public void onReplay(byte type, CommitLog.Replayer replayer) {
        replayers.put(type, replayer);
        log.register(type, replayer);
    }

    /**
     * Re-applies one record of {@code type} through the replayer a store registered, in either
     * durability mode (e.g. a {@link TxnIntents} record left by a crash); the same idempotent
     * replay as write-ahead recovery.
     */
    public java.util.concurrent.CompletableFuture<?> replay(byte type, java.nio.ByteBuffer payload) {
        CommitLog.Replayer r = replayers.get(type);
        if (r == null) {
            throw new StrandException(ErrorCode.CORRUPT, "no replayer for record type " + type);
        }
        return r.replay(payload);
    }

    /** Replays what an unclean stop left in the commit log; call once, before traffic. Returns records replayed. */
    public long recover() {
        return log.recover();
    }

    /** Queues {@code turn} on the writer that owns {@code owner}; never blocks. */
    public <T> CompletableFuture<T> submit(String owner, Turn<T> turn) {
        CompletableFuture<T> future = new CompletableFuture<>();
        GroupCommitter worker = committers[writerOf(owner)];
        LoopHost host = HOST.get();
        if (!worker.offer(new GroupCommitter.Task<>(turn, future), host != null && host.deferringNow ? host : null)) {
            future.completeExceptionally(StrandException.stopping());
        }
        return future;
    }

    /**
     * The index (0 .. threads − 1) of the writer that owns {@code owner}: an event loop that reads
     * every socket of the owners of one writer runs all of that writer's groups itself, without
     * competing with another loop for its turn.
     */
    public int writerOf(String owner) {
        return Math.floorMod(owner.hashCode(), committers.length);
    }

    /**
     * Why a writer stopped acknowledging writes, if one did: after a failed durable write its lane
     * refuses every later group until a restart (health reports this). Any thread.
     */
    public java.util.Optional<String> failure() {
        for (GroupCommitter w : committers) {
            Throwable f = w.laneFailure;
            if (f != null) {
                return java.util.Optional.of(w.thread.getName() + ": " + f.getMessage());
            }
        }
        return java.util.Optional.empty();
    }

    /** True when the calling thread holds a writer's turn, i.e. runs turns (used by assertions in owners). */
    public static boolean onWriterThread() {
        return HOLDING.get() != null;
    }

    /**
     * The name of the writer whose turn the calling thread holds (its thread's name; stable across
     * restarts), or null: what per-writer state of an owner (a journal lane, a txn slot) is keyed by.
     */
    public static String currentWriter() {
        GroupCommitter w = HOLDING.get();
        return w == null ? null : w.thread.getName();
    }

    /**
     * Runs {@code flush} on the calling writer thread once every future of the group it is completing
     * has been completed; true when it will. A reply sent from a completed future's callback can so
     * be queued per socket and leave in one socket write per socket and group, by the writer itself,
     * instead of waking a reply thread for it. False (nothing registered) on any other thread, and on
     * a writer thread that is not completing a group (inside a turn). A flush that throws (even an
     * {@code Error}) is skipped and the writer goes on, so a flush must leave its own state sound when
     * it fails.
     */
    public static boolean flushAtGroupEnd(Runnable flush) {
        GroupCommitter w = HOLDING.get();
        if (w != null && w.completing) {
            w.groupEndFlushes.add(flush);
            return true;
        }
        return false;
    }

    @Override
    public void close() {
        for (GroupCommitter w : committers) {
            w.stop();
        }
        for (GroupCommitter w : committers) {
            try {
                w.thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        log.close();
    }

    /**
     * Most groups a loop runs on one writer before it sleeps; what is left then goes to the writer
     * thread. Against 1 (`strand bench`, 16 sockets over two loops, two pairs): 32 in flight 11.8 and
     * 10.4 µs of server CPU per append against 16.6 and 18.2, incr 30.3 and 37.7 µs against 42.2 and 41.3.
     */
    static final int LOOP_GROUPS_MAX = 4;

    /** The answer to a write that ran but may not be durable: retry idempotently. */
    static StrandException outcomeUnknown(String why, Throwable cause) {
        return new StrandException(ErrorCode.OUTCOME_UNKNOWN, "the write may or may not have been applied: " + why
                + "; retry with producerId/producerSeq (appends) or expectVersion (docs) so it is applied at most once",
                java.util.Map.of("retryable", true), cause);
    }
}

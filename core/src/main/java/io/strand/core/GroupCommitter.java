package io.strand.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;
import java.util.function.LongConsumer;

/**
 * Owned by whichever thread holds its turn (its own writer thread, or an event loop running its
 * {@link Writers.LoopHost deferred} turns): one writer of {@link Writers}, with its queue, its thread
 * and its turn, and the group commit. The turn's holder takes what is
 * queued, runs the turns, writes their records itself, then runs hooks and completes futures, all
 * in order. While it waits on the device the next group queues up, so concurrent writers still
 * share one flush. (A pipeline that handed each write to a flusher thread while the writer ran the
 * next group's turns measured no faster here, 2 cores, once the box was busy: its hand-offs cost
 * the CPU the turns needed.) After a failed write the lane stays failed: later groups built on the
 * lost one's state must not be acknowledged either.
 */
final class GroupCommitter {
    /** Wakes a writer so it sees it must stop. */
    private static final Object STOP = new Object();

    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    /** Held by the one thread running a group: the writer thread or a {@link Writers.LoopHost}'s loop. */
    private final AtomicBoolean turn = new AtomicBoolean();
    private final int maxBatch;
    private final CommitLog.Lane lane;
    /** Receives the duration of each durable group write (the commit-latency metric). */
    private final LongConsumer syncNanosObserver;
    /** Receives the number of turns of each group that ran any (the group-size metric). */
    private final IntConsumer groupSizeObserver;
    final Thread thread;
    private final Group group;
    private final List<Object> taken;
    /** True while the group's futures are being completed ({@link Writers#flushAtGroupEnd} registers then). */
    boolean completing;
    /** What {@link Writers#flushAtGroupEnd} registered during the completing group, run after its last future. */
    final List<Runnable> groupEndFlushes = new ArrayList<>();
    /** Written by the turn's holder only; read by health checks. */
    volatile Throwable laneFailure;
    private volatile boolean running = true;
    /** True while the writer thread parks (or is about to): a submitter or a holder letting go unparks it. */
    private volatile boolean sleeping;

    GroupCommitter(String name, int maxBatch, CommitLog.Lane lane, LongConsumer syncNanosObserver,
                   IntConsumer groupSizeObserver) {
        this.maxBatch = maxBatch;
        this.lane = lane;
        this.syncNanosObserver = syncNanosObserver;
        this.groupSizeObserver = groupSizeObserver;
        this.group = new Group(lane.logging());
        this.taken = new ArrayList<>(maxBatch);
        this.thread = Thread.ofPlatform().name(name).daemon().unstarted(this::loop);
    }

    /** Queues {@code task}: for {@code host} to run before its loop sleeps, or else for the writer thread. */
    boolean offer(Task<?> task, Writers.LoopHost host) {
        if (!running) {
            return false;
        }
        queue.add(task);
        if (host != null) {
            host.add(this);
        } else {
            wake();
        }
        return true;
    }

    void wake() {
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    /** Never by interrupt: an interrupt closes a FileChannel in the middle of a write-ahead write. */
    void stop() {
        running = false;
        queue.add(STOP);
        LockSupport.unpark(thread);
    }

    /**
     * A loop host: runs a group here if the turn is free, then up to {@link Writers#LOOP_GROUPS_MAX} − 1
     * more while turns are queued (another loop's, left to this holder), so the writer thread is
     * not woken for them; the holder otherwise runs what was queued.
     */
    void runHere() {
        if (turn.compareAndSet(false, true)) {
            try {
                int groups = 0;
                do {
                    runGroupHoldingTurn();
                } while (++groups < Writers.LOOP_GROUPS_MAX && !queue.isEmpty());
            } finally {
                letGo();
            }
        }
    }

    /** Hands the turn back; wakes the writer thread for anything queued meanwhile (it may have seen the turn held). */
    private void letGo() {
        turn.set(false);
        if (!queue.isEmpty()) {
            wake();
        }
    }

    private void loop() {
        while (running || !queue.isEmpty() || turn.get()) {
            if (queue.isEmpty() || turn.get()) {
                sleeping = true;
                if ((queue.isEmpty() || turn.get()) && running) { // re-checked after the flag: no wake-up is lost
                    LockSupport.park(this);
                    Thread.interrupted(); // not used to stop (a turn's interrupt would make every park return at once)
                }
                sleeping = false;
                if (!running && queue.isEmpty()) {
                    if (!turn.get()) {
                        break;
                    }
                    Thread.onSpinWait(); // a loop still runs its group; it lets go soon
                }
                continue;
            }
            if (turn.compareAndSet(false, true)) {
                try {
                    runGroupHoldingTurn();
                } finally {
                    turn.set(false); // this thread looks at the queue again itself
                }
            }
        }
    }

    /** One group commit by the turn's holder (the calling thread). */
    private void runGroupHoldingTurn() {
        Writers.HOLDING.set(this);
        try {
            Object item;
            while (taken.size() < maxBatch && (item = queue.poll()) != null) {
                taken.add(item);
            }
            if (!roomForGroup(taken)) {
                taken.clear();
                return;
            }
            Throwable failed = laneFailure;
            for (Object t : taken) {
                if (t == STOP) {
                    continue;
                }
                if (failed != null) {
                    refuse((Task<?>) t, failed); // never run: a refused write has changed nothing
                } else {
                    runTurn((Task<?>) t);
                }
            }
            taken.clear();
            int turns = group.tasks.size();
            if (turns > 0) {
                complete(group.hasRecords() ? write() : null);
                groupSizeObserver.accept(turns);
            }
        } finally {
            Writers.HOLDING.remove();
        }
    }

    /**
     * Makes sure the lane has room for this group before any turn runs; when it cannot (disk
     * full), refuses the group's tasks: nothing was written, so the lane stays usable.
     */
    private boolean roomForGroup(List<Object> taken) {
        if (laneFailure != null || taken.isEmpty() || (taken.size() == 1 && taken.getFirst() == STOP)) {
            return true; // nothing to write (a stop signal alone needs no segment)
        }
        try {
            lane.ensureRoom();
            return true;
        } catch (RuntimeException e) {
            for (Object item : taken) {
                if (item != STOP) {
                    ((Task<?>) item).future().completeExceptionally(e);
                }
            }
            return false;
        }
    }

    private void runTurn(Task<?> task) {
        Writers.Commit commit = group.commit;
        int mark = commit.mark();
        Outcome outcome;
        try {
            outcome = new Outcome(task.turn().run(commit), null);
        } catch (Throwable t) {
            commit.rollback(mark);
            outcome = new Outcome(null, t);
        }
        group.tasks.add(task);
        group.outcomes.add(outcome);
    }

    /**
     * After a failed durable write the lane takes no more turns: they would build on changes that
     * may be lost, and their own could not be made durable either. Nothing of theirs ran.
     */
    private void refuse(Task<?> task, Throwable laneFailed) {
        task.future().completeExceptionally(new StrandException(ErrorCode.UNAVAILABLE,
                "not applied: writer " + thread.getName() + " stopped taking writes after a failed durable write ("
                        + laneFailed.getMessage() + "); they resume after a restart",
                java.util.Map.of("retryable", true), laneFailed));
    }

    /**
     * A failed write leaves its group's turns applied in the stores' page cache (a queue excerpt,
     * a doc value) but not durable: after a crash they may be there or not, so each is answered
     * {@link ErrorCode#OUTCOME_UNKNOWN}, never an error that says nothing changed.
     */
    private Throwable write() {
        long start = System.nanoTime();
        try {
            lane.write(group.commit.records);
            return null;
        } catch (Throwable t) {
            return Writers.outcomeUnknown("it could not be made durable (" + t.getMessage() + ")", t);
        } finally {
            syncNanosObserver.accept(System.nanoTime() - start);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void complete(Throwable failure) {
        if (failure != null && group.hasRecords() && laneFailure == null) {
            laneFailure = failure;
        }
        if (failure == null) {
            for (Runnable hook : group.commit.afterDurable) {
                try {
                    hook.run();
                } catch (RuntimeException e) {
                    failure = Writers.outcomeUnknown("a step after it was made durable failed (" + e + ")", e);
                }
            }
        }
        completing = true;
        for (int i = 0; i < group.tasks.size(); i++) {
            Task task = group.tasks.get(i);
            Outcome outcome = group.outcomes.get(i);
            if (outcome.error != null) {
                task.future().completeExceptionally(outcome.error);
            } else if (failure != null) {
                task.future().completeExceptionally(failure);
            } else {
                task.future().complete(outcome.value);
            }
        }
        completing = false;
        group.clear();
        runGroupEndFlushes();
    }

    private void runGroupEndFlushes() {
        List<Runnable> flushes = groupEndFlushes;
        for (int i = 0; i < flushes.size(); i++) {
            try {
                flushes.get(i).run();
            } catch (Throwable t) {
                // a flush is a socket write whose owner hands its work on when it fails; the writer goes on
            }
        }
        flushes.clear();
    }

    /** A submitted turn and the future its outcome completes. */
    record Task<T>(Writers.Turn<T> turn, CompletableFuture<T> future) {
    }

    private record Outcome(Object value, Throwable error) {
    }

    /** One group commit: its turns, their outcomes, and what they logged. Owned by its {@link GroupCommitter}. */
    private static final class Group {
        final List<Task<?>> tasks = new ArrayList<>();
        final List<Outcome> outcomes = new ArrayList<>();
        final Writers.Commit commit;

        Group(boolean logging) {
            this.commit = new Writers.Commit(logging);
        }

        boolean hasRecords() {
            return !commit.records.isEmpty();
        }

        void clear() {
            tasks.clear();
            outcomes.clear();
            commit.clear();
        }
    }
}

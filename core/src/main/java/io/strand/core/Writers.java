package io.strand.core;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * The single writer of every stored object: work for one owner (a workspace) always runs on the
 * same named thread, in submission order, so a log's appender and a doc's current value each have
 * exactly one writer and a future cross-object transaction has one place to run.
 *
 * <p>Group commit: each thread drains what is queued (up to {@code maxBatch} turns), runs the
 * turns, then syncs every {@link Syncable} they touched exactly once, then runs their
 * after-durable hooks, then completes their futures. Concurrent writers therefore share one
 * msync. Futures complete on the writer thread: chain follow-up work with the {@code *Async}
 * variants so it never blocks a writer.
 */
public final class Writers implements AutoCloseable {

    /** Something whose recent writes can be forced to disk (a queue appender, a journal). */
    public interface Syncable {
        void sync();
    }

    /** Work run on an owner's writer thread. Validate before writing: a turn that throws must have written nothing. */
    @FunctionalInterface
    public interface Turn<T> {
        T run(Commit commit) throws Exception;
    }

    /** What one group commit must do after its turns ran. Used only on the writer thread. */
    public static final class Commit {
        private final Set<Syncable> toSync = new LinkedHashSet<>();
        private final List<Runnable> afterDurable = new ArrayList<>();

        /** This turn wrote to {@code target}; sync it once before anyone is acknowledged. */
        public void touched(Syncable target) {
            toSync.add(target);
        }

        /** Runs after the batch is durable and before the futures complete (e.g. publish a new head). */
        public void afterDurable(Runnable hook) {
            afterDurable.add(hook);
        }

        private void clear() {
            toSync.clear();
            afterDurable.clear();
        }
    }

    private record Task<T>(Turn<T> turn, CompletableFuture<T> future) {
    }

    private final Worker[] workers;
    private final Durability durability;
    private final LongConsumer syncNanosObserver;

    /**
     * @param threads           number of writer threads (owners are spread over them by hash)
     * @param durability        FSYNC syncs after each batch; OS skips the sync
     * @param syncNanosObserver receives the duration of each group sync (for the commit-latency metric)
     */
    public Writers(String name, int threads, Durability durability, int maxBatch, LongConsumer syncNanosObserver) {
        if (threads < 1 || maxBatch < 1) {
            throw new IllegalArgumentException("threads and maxBatch must be ≥ 1");
        }
        this.durability = durability;
        this.syncNanosObserver = syncNanosObserver;
        this.workers = new Worker[threads];
        for (int i = 0; i < threads; i++) {
            workers[i] = new Worker(name + "-writer-" + i, maxBatch);
            workers[i].thread.start();
        }
    }

    public Durability durability() {
        return durability;
    }

    /** Queues {@code turn} on the writer that owns {@code owner}; never blocks. */
    public <T> CompletableFuture<T> submit(String owner, Turn<T> turn) {
        CompletableFuture<T> future = new CompletableFuture<>();
        Worker worker = workers[Math.floorMod(owner.hashCode(), workers.length)];
        if (!worker.offer(new Task<>(turn, future))) {
            future.completeExceptionally(new StrandException(ErrorCode.UNAVAILABLE, "server is shutting down"));
        }
        return future;
    }

    /** True when the calling thread is a writer thread (used by assertions in owners). */
    public static boolean onWriterThread() {
        return Thread.currentThread() instanceof WriterThread;
    }

    @Override
    public void close() {
        for (Worker w : workers) {
            w.stop();
        }
        for (Worker w : workers) {
            try {
                w.thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static final class WriterThread extends Thread {
        WriterThread(Runnable body, String name) {
            super(body, name);
            setDaemon(true);
        }
    }

    private final class Worker {
        private final LinkedBlockingQueue<Task<?>> queue = new LinkedBlockingQueue<>();
        private final int maxBatch;
        private final Thread thread;
        private volatile boolean running = true;

        Worker(String name, int maxBatch) {
            this.maxBatch = maxBatch;
            this.thread = new WriterThread(this::loop, name);
        }

        boolean offer(Task<?> task) {
            return running && queue.offer(task);
        }

        void stop() {
            running = false;
            thread.interrupt();
        }

        private void loop() {
            List<Task<?>> batch = new ArrayList<>(maxBatch);
            List<Object> results = new ArrayList<>(maxBatch);
            Commit commit = new Commit();
            while (running || !queue.isEmpty()) {
                try {
                    Task<?> first = running ? queue.take() : queue.poll();
                    if (first == null) {
                        break;
                    }
                    batch.add(first);
                } catch (InterruptedException e) {
                    continue; // re-check running; drain what is left
                }
                queue.drainTo(batch, maxBatch - 1);
                for (Task<?> task : batch) {
                    results.add(runTurn(task, commit));
                }
                Throwable syncFailure = syncAll(commit);
                if (syncFailure == null) {
                    for (Runnable hook : commit.afterDurable) {
                        try {
                            hook.run();
                        } catch (RuntimeException e) {
                            syncFailure = e;
                        }
                    }
                }
                for (int i = 0; i < batch.size(); i++) {
                    complete(batch.get(i), results.get(i), syncFailure);
                }
                batch.clear();
                results.clear();
                commit.clear();
            }
        }

        private Object runTurn(Task<?> task, Commit commit) {
            try {
                return new Outcome(task.turn().run(commit), null);
            } catch (Throwable t) {
                return new Outcome(null, t);
            }
        }

        private Throwable syncAll(Commit commit) {
            if (durability == Durability.OS || commit.toSync.isEmpty()) {
                return null;
            }
            long start = System.nanoTime();
            try {
                for (Syncable s : commit.toSync) {
                    s.sync();
                }
                return null;
            } catch (Throwable t) {
                return new StrandException(ErrorCode.UNAVAILABLE,
                        "write could not be made durable: " + t.getMessage(), java.util.Map.of(), t);
            } finally {
                syncNanosObserver.accept(System.nanoTime() - start);
            }
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private void complete(Task task, Object result, Throwable syncFailure) {
            Outcome outcome = (Outcome) result;
            if (outcome.error != null) {
                task.future().completeExceptionally(outcome.error);
            } else if (syncFailure != null) {
                task.future().completeExceptionally(syncFailure);
            } else {
                task.future().complete(outcome.value);
            }
        }
    }

    private record Outcome(Object value, Throwable error) {
    }
}

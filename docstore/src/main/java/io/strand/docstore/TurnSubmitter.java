package io.strand.docstore;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * Thread-safe (a read-write lock orders submitting against closing): hands the public ops' turns to their
 * workspace's writer thread, keeps the ones in flight, and refuses new ones once the store is closing, so that
 * {@link #closeAndDrain} can wait for every turn it let through.
 *
 * <p>Every op is counted, and every refusal by its code, whether it was refused before its turn (a bad name, a
 * bad path, a doc too large) or inside it (a conflict, a floor, a full store).
 */
final class TurnSubmitter {
    private static final System.Logger LOG = System.getLogger(TurnSubmitter.class.getName());

    /** The part of an op that runs before its turn. */
    interface TurnFactory<T> {
        /** Validates what can be checked off the writer thread, then returns the turn. */
        Writers.Turn<T> prepare(DocId id);
    }

    private final Writers writers;
    private final DocMetrics metrics;
    private final ReentrantReadWriteLock closeLock = new ReentrantReadWriteLock();
    private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    TurnSubmitter(Writers writers, DocMetrics metrics) {
        this.writers = writers;
        this.metrics = metrics;
    }

    /**
     * Counts a {@code kind} op, resolves its doc ({@code id} validates names it was given as text), prepares
     * its turn and submits it to the doc's workspace writer. A refusal before the turn is a failed future.
     */
    <T> CompletableFuture<T> submit(DocMetrics.Kind kind, Supplier<DocId> id, TurnFactory<T> factory) {
        metrics.op(kind);
        DocId doc;
        Writers.Turn<T> turn;
        try {
            doc = id.get();
            turn = factory.prepare(doc);
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
            future = writers.submit(doc.ws(), commit -> {
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

    /**
     * Refuses new turns, then waits (up to 30 s) for those in flight.
     *
     * @return false when the store was closed already
     */
    boolean closeAndDrain() {
        closeLock.writeLock().lock();
        try {
            if (closed) {
                return false;
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
        } catch (ExecutionException e) {
            // failures were reported to their callers
        }
        return true;
    }

    /** True when no submitted turn is still running. */
    boolean idle() {
        return inFlight.isEmpty();
    }
}

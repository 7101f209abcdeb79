package io.strand.app.ws;

import io.strand.core.Agent;
import io.strand.core.StrandException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * The sockets open now, so that a revoked or expired token reaches the sockets it opened: one
 * {@link Agent} ({@code strand-token-sweeper}) re-checks every socket's principal once per period
 * and closes the stale ones with 4001, ending their subscriptions. Thread-safe: a concurrent set
 * that sockets join on open and leave on close.
 */
public final class OpenSockets implements AutoCloseable {
    private final Set<SocketEndpoint> open = ConcurrentHashMap.newKeySet();
    private Agent sweeper;

    private final java.util.concurrent.atomic.LongAdder opened = new java.util.concurrent.atomic.LongAdder();

    void add(SocketEndpoint socket) {
        opened.increment();
        open.add(socket);
    }

    void remove(SocketEndpoint socket) {
        open.remove(socket);
    }

    /** Sockets opened since start. */
    public long opened() {
        return opened.sum();
    }

    public int size() {
        return open.size();
    }

    /**
     * Ends every subscription on the sockets of the workspaces {@code workspace} accepts, each with a
     * {@code closed} frame carrying {@code why} and its resume cursor, and waits (at most {@code wait})
     * until their loops have let go of the logs: a cluster node calls this before a shard's stores
     * close. A loop stuck sending to a client that does not read is not waited for past {@code wait};
     * its next read of the closed stores fails and it closes with the same {@code why}.
     *
     * @return the subscriptions ended
     */
    public int endSubscriptions(Predicate<String> workspace, StrandException why, Duration wait) {
        List<CompletableFuture<Void>> ending = new ArrayList<>();
        for (SocketEndpoint socket : open) {
            ending.addAll(socket.endSubscriptions(workspace, why));
        }
        try {
            CompletableFuture.allOf(ending.toArray(CompletableFuture[]::new)).get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            System.getLogger("strand").log(System.Logger.Level.WARNING, ending.stream().filter(f -> !f.isDone()).count()
                    + " of " + ending.size() + " subscriptions did not end within " + wait.toMillis() + " ms: " + why.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return ending.size();
    }

    /** Starts the sweeper; idempotent. */
    public synchronized void startSweeper(long periodMillis) {
        if (sweeper == null) {
            sweeper = Agent.start("strand-token-sweeper", Duration.ofMillis(periodMillis), this::sweep);
        }
    }

    /** Runs the next pass at once (a revocation just reached this node); nothing before the sweeper starts. */
    public synchronized void sweepSoon() {
        if (sweeper != null) {
            sweeper.wake();
        }
    }

    /**
     * One pass: closes every socket whose token is no longer valid. A socket whose check throws is
     * skipped, the others still checked; the pass then throws, so the agent counts and reports it.
     */
    void sweep() {
        RuntimeException failed = null;
        int failures = 0;
        for (SocketEndpoint socket : open) {
            try {
                if (socket.revalidate()) {
                    open.remove(socket);
                }
            } catch (RuntimeException e) {
                failures++;
                if (failed == null) {
                    failed = e;
                }
            }
        }
        if (failed != null) {
            throw new IllegalStateException("token check of " + failures + " of the open sockets failed (they are"
                    + " checked again next pass); the first: " + failed, failed);
        }
    }

    @Override
    public synchronized void close() {
        if (sweeper != null) {
            sweeper.close();
            sweeper = null;
        }
    }
}

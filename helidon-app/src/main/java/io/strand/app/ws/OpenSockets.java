package io.strand.app.ws;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The sockets open now, so that a revoked or expired token reaches the sockets it opened: one
 * daemon thread ({@code strand-token-sweeper}) re-checks every socket's principal once per period
 * and closes the stale ones with 4001, ending their subscriptions. Thread-safe: a concurrent set
 * that sockets join on open and leave on close.
 */
public final class OpenSockets implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("strand.ws");

    private final Set<SocketEndpoint> open = ConcurrentHashMap.newKeySet();
    private ScheduledExecutorService sweeper;

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

    /** Starts the sweeper; idempotent. */
    public synchronized void startSweeper(long periodMillis) {
        if (sweeper != null) {
            return;
        }
        sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "strand-token-sweeper");
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::sweep, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** One pass: closes every socket whose token is no longer valid. Never throws, so the schedule keeps running. */
    void sweep() {
        for (SocketEndpoint socket : open) {
            try {
                if (socket.revalidate()) {
                    open.remove(socket);
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "token sweep of one socket failed", e);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (sweeper != null) {
            sweeper.shutdownNow();
            sweeper = null;
        }
    }
}

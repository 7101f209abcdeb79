package io.strand.app.ds;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Owns the {@code ds-subscriptions} thread, on which every lease expiry and webhook retry runs;
 * its methods are called with the {@link DsSubscriptions} monitor held, since they change the
 * subscription's timer fields: a wake's lease (ended when it runs out) and webhook retries with
 * exponential back-off (1 s doubling to at most 60 s).
 */
final class DsWakeTimers implements AutoCloseable {
    private static final long MAX_RETRY_DELAY_MS = 60_000;

    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ds-subscriptions");
        t.setDaemon(true);
        return t;
    });

    /** (Re)starts the current wake's lease: {@code onExpiry} runs once it lasts {@code leaseMs} without extension. */
    void extendLease(DsSubscription sub, Runnable onExpiry) {
        cancel(sub.lease);
        sub.lease = timers.schedule(onExpiry, sub.leaseMs, TimeUnit.MILLISECONDS);
    }

    /** Stops the current wake's lease. */
    void endLease(DsSubscription sub) {
        cancel(sub.lease);
        sub.lease = null;
    }

    /** Marks the subscription failed and runs {@code redeliver} after the next back-off delay. */
    void retryLater(DsSubscription sub, Runnable redeliver) {
        sub.retries++;
        long delay = Math.min(1000L << Math.min(sub.retries - 1, 16), MAX_RETRY_DELAY_MS);
        sub.status = "failed";
        cancel(sub.retry);
        sub.retry = timers.schedule(redeliver, delay, TimeUnit.MILLISECONDS);
    }

    /** Cancels a deleted subscription's lease and retry. */
    void cancelAll(DsSubscription sub) {
        cancel(sub.lease);
        cancel(sub.retry);
    }

    private static void cancel(ScheduledFuture<?> f) {
        if (f != null) {
            f.cancel(false);
        }
    }

    @Override
    public void close() {
        timers.shutdownNow();
    }
}

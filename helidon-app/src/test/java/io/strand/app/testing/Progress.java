package io.strand.app.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Waits for a load generator's acknowledged count to move before a crash test injects its fault,
 * so a slow start (a loaded machine can take seconds for a fresh server's first write) never turns
 * a kill loop into one that acknowledged nothing. Stateless.
 */
public final class Progress {
    private Progress() {
    }

    /** Polls {@code count} every millisecond until it exceeds {@code from} or {@code max} passes. */
    public static void awaitGrowth(LongSupplier count, long from, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (count.getAsLong() <= from && System.nanoTime() < deadline) {
            LockSupport.parkNanos(1_000_000);
        }
    }
}

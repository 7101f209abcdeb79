package io.strand.logtier;

/**
 * Starts and stops the logtier's background workers ({@code log-retention}, {@code cold-roller}).
 * Stateless, so thread-safe; each worker keeps its own {@code running} flag.
 */
final class WorkerThreads {
    private WorkerThreads() {
    }

    /** Starts {@code loop} on a daemon thread called {@code name}. */
    static Thread start(Runnable loop, String name) {
        Thread thread = new Thread(loop, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** Interrupts {@code thread} and waits up to 10 s for it to end; keeps the caller's interrupt. */
    static void stop(Thread thread) {
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

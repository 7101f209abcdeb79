package io.strand.app.ws;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Thread-safe (a semaphore and a counter): the platform threads that read WebSocket connections, one
 * per connection for the first {@code --ws-reader-threads} open at once; a connection beyond them is
 * read by Helidon's virtual thread, as every connection was before.
 *
 * <p><b>Why.</b> A virtual thread that waits for a client's next frame costs, per request: a read that
 * finds nothing, an {@code epoll_ctl} to re-arm the socket, the JDK's poller thread waking from
 * {@code epoll_wait} and unparking it, and a carrier thread woken from its futex to run it — two thread
 * wake-ups and three system calls before the read that gets the frame. A platform thread blocks in
 * {@code poll(2)} on its own socket and the kernel wakes it directly. {@code perf} under {@code strand bench
 * incr-contended} (2026-12-04): the poller thread was 13 % of the server's samples, and the carriers
 * spent a fifth of theirs parking and waking. {@code ./strand bench --warmup 5 append-serial
 * append-concurrent read-pagination incr-contended floor-debit}, twice each way, alternating (fsync,
 * disk probe p50 0.090–0.093 ms; {@code docs/measurements.md} gives the figures): server CPU per unit fell by 11–30 %
 * at 32 in flight, on pages and on floor debits in both pairs; incr moved within its noise.
 *
 * <p><b>Cost.</b> A parked platform thread holds its stack's touched pages and a kernel task, about
 * 100 KiB, so the number is capped; the waiting virtual thread that Helidon gave the connection costs a
 * few hundred bytes.
 */
public final class ReaderThreads {
    /** No platform readers: every connection is read by its virtual thread. */
    public static final ReaderThreads NONE = new ReaderThreads(0);
    private final int max;
    private final Semaphore free;
    private final AtomicLong started = new AtomicLong();

    public ReaderThreads(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("--ws-reader-threads must be ≥ 0, not " + max);
        }
        this.max = max;
        this.free = new Semaphore(max);
    }

    /**
     * Runs {@code loop} (a connection's whole read loop) on a platform thread of its own when one is
     * free, and waits for it; false when none is (the caller runs the loop itself). An interrupt of the
     * waiting thread (the server stopping) is passed on to the reader, and kept. What the loop throws
     * is thrown here, so the connection's owner sees it as if it had run the loop itself.
     */
    boolean runOnOwnThread(Runnable loop) {
        if (!free.tryAcquire()) {
            return false;
        }
        Thread reader;
        Throwable[] thrown = new Throwable[1];
        try {
            reader = Thread.ofPlatform().name("strand-ws-reader-" + started.incrementAndGet()).daemon().unstarted(() -> {
                try {
                    loop.run();
                } catch (Throwable t) {
                    thrown[0] = t;
                } finally {
                    free.release();
                }
            });
            reader.start();
        } catch (RuntimeException | OutOfMemoryError e) {
            free.release();
            return false; // no thread to be had (the system's limit): the virtual thread reads
        }
        waitPassingInterrupts(reader::join, reader::interrupt);
        switch (thrown[0]) { // written before the reader ended, read after join: join orders the two
            case null -> { }
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            default -> throw new IllegalStateException(thrown[0]);
        }
        return true;
    }

    /** A wait that an interrupt may cut short. */
    interface Wait {
        void await() throws InterruptedException;
    }

    /**
     * Waits until {@code wait} returns, however often the thread is interrupted meanwhile: each
     * interrupt is passed on ({@code onInterrupt}, which should end the wait soon) and kept for the
     * caller. A connection's thread waits like this for whoever reads its socket.
     */
    static void waitPassingInterrupts(Wait wait, Runnable onInterrupt) {
        boolean interrupted = false;
        while (true) {
            try {
                wait.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
                onInterrupt.run();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Platform readers running now. */
    public int inUse() {
        return max - free.availablePermits();
    }
}

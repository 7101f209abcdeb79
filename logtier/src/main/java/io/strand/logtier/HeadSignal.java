package io.strand.logtier;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Thread-safe (a lock and volatiles): the committed head of one log and a way to wait for it to
 * move. Published by the log's writer after the batch is durable; awaited by any number of
 * subscriber loops (virtual threads).
 * It outlives the log's open queue, so subscribers keep waiting across idle close and reopen.
 */
final class HeadSignal {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition moved = lock.newCondition();
    private volatile long head;
    private volatile long generation;

    long head() {
        return head;
    }

    /** Bumped when the log is deleted, so cursors on the old incarnation end. */
    long generation() {
        return generation;
    }

    void publish(long newHead) {
        lock.lock();
        try {
            head = newHead;
            moved.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void reset(long newHead) {
        lock.lock();
        try {
            head = newHead;
            generation++;
            moved.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits once until the head passes {@code seq}, the generation changes, a wake, or the timeout; returns the head. */
    long awaitBeyond(long seq, long generationSeen, long timeoutMillis, java.util.concurrent.atomic.AtomicBoolean woken)
            throws InterruptedException {
        long nanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        lock.lock();
        try {
            // woken is set before wakeAll takes the lock: seen here, or the signal comes after this wait began
            if (head <= seq && generation == generationSeen && nanos > 0 && !woken.get()) {
                moved.awaitNanos(nanos); // one wait: callers loop, and a wake() must reach them
            }
            return head;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter (e.g. to let it notice its subscription was cancelled). */
    void wakeAll() {
        lock.lock();
        try {
            moved.signalAll();
        } finally {
            lock.unlock();
        }
    }
}

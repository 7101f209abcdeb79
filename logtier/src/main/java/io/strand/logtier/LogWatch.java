package io.strand.logtier;

/**
 * Used by one subscription loop (or request) at a time; {@link #wake} may come from any thread.
 * A hold on one log's slot while something follows it: read chunks, wait for the committed head to
 * move, notice a delete. Its slot is never forgotten while watched, so reads through the watch go
 * straight to it with no lookup by name, and the head signal survives the log's idle close.
 */
public final class LogWatch implements AutoCloseable {
    private final LogSlot slot;
    private final long generation;
    /** Set by {@link #wake} and consumed by the next {@link #awaitBeyond}: a wake that comes before the wait is not lost. */
    private final java.util.concurrent.atomic.AtomicBoolean woken = new java.util.concurrent.atomic.AtomicBoolean();
    private boolean closed;

    LogWatch(LogSlot slot) {
        this.slot = slot;
        this.generation = slot.signal.generation();
    }

    /** The next chunk from {@code from}, streamed into {@code sink}: at most {@code maxEntries} and about {@code maxBytes} ({@link LogReader.Limit}). */
    public PageInfo read(long from, int maxEntries, long maxBytes, EntrySink sink) {
        long start = Math.max(from, 1);
        return withLog(log -> LogReader.forward(log, start, maxEntries, maxBytes, sink), LogReader.emptyPage(from));
    }

    /** A cursor at {@code from} (at least 1) that reads through this watch; closing it closes the watch. */
    public LogCursor cursor(long from) {
        return new LogCursor(this, from);
    }

    /** Current committed head (0 for a log that was never appended to). */
    public long head() {
        return withLog(Log::head, slot.signal.head());
    }

    /** True once the log was deleted after this watch began. */
    public boolean deleted() {
        return slot.signal.generation() != generation;
    }

    /** Waits until the head passes {@code seq} or the timeout passes; returns the head. */
    public long awaitBeyond(long seq, long timeoutMillis) throws InterruptedException {
        long h = head();
        if (h > seq || deleted() || woken.getAndSet(false)) {
            return h;
        }
        long head = slot.signal.awaitBeyond(seq, generation, timeoutMillis, woken);
        woken.set(false); // the caller re-checks what it waits for after every return
        return head;
    }

    /**
     * Wakes a waiting {@link #awaitBeyond} (e.g. when the subscription is cancelled, credited or
     * ended from outside), or the next one if none waits yet. Found by EndSubscriptionsTest: a
     * subscription loop that had just checked "ended?" and not yet begun to wait missed the
     * signal and slept a whole heartbeat interval.
     */
    public void wake() {
        woken.set(true);
        slot.signal.wakeAll();
    }

    /** Runs {@code body} on the watched log, opened if it exists; {@code absent} when it does not. */
    private <T> T withLog(java.util.function.Function<Log, T> body, T absent) {
        if (!slot.hold()) {
            throw new IllegalStateException("the slot of watched log " + slot.ws + "/" + slot.name + " was forgotten");
        }
        try {
            Log log = slot.log(LogSlot.Open.IF_EXISTS);
            return log == null ? absent : body.apply(log);
        } finally {
            slot.release();
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            slot.removeWatcher();
        }
    }
}

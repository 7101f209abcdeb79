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
        if (h > seq || deleted()) {
            return h;
        }
        return slot.signal.awaitBeyond(seq, generation, timeoutMillis);
    }

    /** Wakes a waiting {@link #awaitBeyond} (e.g. when the subscription is cancelled or credited). */
    public void wake() {
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

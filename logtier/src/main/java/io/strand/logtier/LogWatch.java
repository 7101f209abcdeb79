package io.strand.logtier;

/**
 * A subscription's hold on one log: read chunks and wait for the committed head to move.
 * Used by one subscription loop at a time; keeps the head signal alive across idle close.
 */
public final class LogWatch implements AutoCloseable {
    private final LogStore store;
    private final String ws;
    private final String name;
    private final LogStore.LogSlot slot;
    private final long generation;
    private boolean closed;

    LogWatch(LogStore store, String ws, String name, LogStore.LogSlot slot) {
        this.store = store;
        this.ws = ws;
        this.name = name;
        this.slot = slot;
        this.generation = slot.signal.generation();
    }

    /** The next chunk from {@code from}, streamed into {@code sink}. */
    public PageInfo read(long from, int maxEntries, long maxBytes, EntrySink sink) {
        return store.readChunk(ws, name, from, maxEntries, maxBytes, sink);
    }

    /** Current committed head (0 for a log that was never appended to). */
    public long head() {
        return store.headOf(ws, name, slot);
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

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            slot.removeWatcher();
        }
    }
}

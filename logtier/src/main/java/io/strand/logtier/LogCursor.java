package io.strand.logtier;

/**
 * Used by one subscription loop at a time (its {@link #wake} from any thread): a subscription's
 * place in one log, like a tailer. It reads the chunk at its position through its
 * {@link LogWatch}'s slot (no lookup by name per chunk) and waits for the head to move; its owner
 * moves it past what it has delivered ({@link #moveTo}), so {@link #next()} is always the resume
 * point: the first seq not yet delivered.
 */
public final class LogCursor implements AutoCloseable {
    private final LogWatch watch;
    private long next;

    LogCursor(LogWatch watch, long from) {
        this.watch = watch;
        this.next = Math.max(from, 1);
    }

    /** The seq this cursor reads next: the resume point. */
    public long next() {
        return next;
    }

    /**
     * The chunk at {@link #next()}, streamed into {@code sink}: at most {@code maxEntries} entries
     * and about {@code maxBytes} ({@link LogReader.Limit}), after a {@code gap} when {@code next()}
     * lies below the log's first retained seq. The cursor stays where it is until {@link #moveTo}.
     */
    public PageInfo read(int maxEntries, long maxBytes, EntrySink sink) {
        return watch.read(next, maxEntries, maxBytes, sink);
    }

    /** Moves the cursor to {@code seq}: past a gap told, or past the entries of a chunk delivered. */
    public void moveTo(long seq) {
        next = seq;
    }

    /** Current committed head (0 for a log that was never appended to). */
    public long head() {
        return watch.head();
    }

    /** True once the log was deleted after the watch began. */
    public boolean deleted() {
        return watch.deleted();
    }

    /** Waits until the head passes {@code seq} or the timeout passes; returns the head. */
    public long awaitBeyond(long seq, long timeoutMillis) throws InterruptedException {
        return watch.awaitBeyond(seq, timeoutMillis);
    }

    /** Wakes a waiting {@link #awaitBeyond}. */
    public void wake() {
        watch.wake();
    }

    @Override
    public void close() {
        watch.close();
    }
}

package io.strand.core;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Makes the stores' page cache durable, then lets write-ahead segments go, on its agent's thread
 * ({@code wal-checkpointer}) or, at start and close, the caller's. Thread-safe: lanes hand full
 * segments over through a concurrent queue; recovery and close checkpoint while no lane writes and
 * the agent is idle or stopped.
 *
 * <p>A checkpoint calls {@code syncfs} on the data directory's file system ({@link FileSystemSync}),
 * which writes back every store's dirty pages (queues, doc journal, map) in one call; only then are
 * the segments released to the {@link WalSegmentPool} (recycled or deleted). A crash before
 * {@code syncfs} returns leaves the segments to be replayed, idempotently; a failed checkpoint keeps
 * them the same way.
 */
final class WalCheckpointer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("strand.wal");
    /** How often the agent looks for segments it was not woken for (it is woken for each). */
    private static final Duration IDLE_PASS = Duration.ofSeconds(1);

    private final Path dir;
    private final WalSegmentPool pool;
    private final ConcurrentLinkedQueue<Path> handedOver = new ConcurrentLinkedQueue<>();
    private final Agent agent;

    WalCheckpointer(Path dir, WalSegmentPool pool) {
        this.dir = dir;
        this.pool = pool;
        this.agent = Agent.start("wal-checkpointer", IDLE_PASS, this::checkpointHandedOver);
    }

    /** Checkpoints {@code full} on the agent, soon; a lane has moved on from it. Any thread. */
    void handOver(Path full) {
        handedOver.add(full);
        agent.wake();
    }

    /** The agent's pass: a failure is counted and reported by the agent; the segments stay and are replayed next start. */
    private void checkpointHandedOver() throws IOException {
        List<Path> segments = new ArrayList<>();
        for (Path p; (p = handedOver.poll()) != null; ) {
            segments.add(p);
        }
        if (!segments.isEmpty()) {
            syncAndRelease(segments);
        }
    }

    /** Checkpoints {@code segments} on the calling thread; a failure is logged and keeps them for the next start. */
    void checkpoint(List<Path> segments) {
        try {
            syncAndRelease(segments);
        } catch (IOException e) {
            // the segments stay and are replayed (idempotently) by the next start
            LOG.log(System.Logger.Level.WARNING, "write-ahead checkpoint failed; segments kept: " + e.getMessage(), e);
        }
    }

    private void syncAndRelease(List<Path> segments) throws IOException {
        FileSystemSync.syncfs(dir);
        pool.release(segments);
    }

    /**
     * Stops the agent after its pass in progress. Segments handed over but not checkpointed stay
     * in the directory, where close lists them.
     */
    @Override
    public void close() {
        agent.close();
    }
}

package io.strand.core;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One writer thread's run of write-ahead segments, used only on that thread ({@link #closeAndList}
 * runs at close, after the writers stopped). Its next segment is prepared by the
 * {@link WalSegmentPool} while the current one fills.
 *
 * <p>The lane moves on to its next segment when a group does not fit, or when the current segment
 * holds {@code checkpointRecords} records, and hands the full one to the {@link WalCheckpointer}.
 * The record bound keeps what a crash leaves to replay small (each replayed record may open a
 * log's queue: 67,258 records, mostly first appends to new logs, took 32 s) rather than whatever
 * 16 MiB of small records holds.
 */
final class WalLane implements CommitLog.Lane {
    private final int number;
    private final WalSegmentPool pool;
    private final WalCheckpointer checkpointer;
    private final long segmentBytes;
    private final int checkpointRecords;
    private WalSegment current;
    private CompletableFuture<WalSegment> next;

    WalLane(int number, WalSegmentPool pool, WalCheckpointer checkpointer, int checkpointRecords) {
        this.number = number;
        this.pool = pool;
        this.checkpointer = checkpointer;
        this.segmentBytes = pool.segmentBytes();
        this.checkpointRecords = checkpointRecords;
    }

    @Override
    public boolean logging() {
        return true;
    }

    /**
     * Makes sure the next group never has to allocate a segment after its turns ran (a failure
     * there would leave their changes in the stores, unacknowledged): when there is no current
     * segment or it is more than ¾ full, the spare segment is made ready now, waiting for the
     * pool's one or preparing one here. Throws {@code storage_full} when the disk cannot hold
     * it; nothing is written then.
     */
    @Override
    public void ensureRoom() {
        if (current != null && current.remaining() > segmentBytes / 4) {
            return;
        }
        if (next != null) {
            try {
                next.join();
                return;
            } catch (CompletionException | CancellationException e) {
                next = null; // the pool's attempt failed (perhaps a full disk): try again now
            }
        }
        next = CompletableFuture.completedFuture(pool.prepare(number, segmentBytes));
    }

    /** Writes one group's records and returns once they are on disk ({@link WalSegment#append}: the commit point). */
    @Override
    public void write(GroupRecords group) throws IOException {
        FailPoints.ioError("wal.write");
        int n = group.buffer().position();
        if (current == null || n > current.remaining()
                || (current.records() > 0 && current.records() + group.records() > checkpointRecords)) {
            moveOn(n);
        }
        current.append(group);
    }

    private void moveOn(int groupBytes) throws IOException {
        WalSegment full = current;
        try {
            if (WalSegment.SEGMENT_HEADER_BYTES + groupBytes > segmentBytes) {
                current = pool.prepare(number, WalSegment.SEGMENT_HEADER_BYTES + groupBytes);
            } else {
                current = next == null ? pool.prepare(number, segmentBytes) : next.join();
                next = null;
            }
        } catch (RuntimeException e) {
            next = null;
            throw new IOException("next write-ahead segment: " + e.getMessage(), e);
        }
        if (next == null) {
            next = pool.prepareLater(number);
        }
        if (full != null) {
            full.close();
            checkpointer.handOver(full.path());
        }
    }

    /**
     * Waits until the spare the pool is preparing, if any, exists. For tests that leave writers
     * open to stand for a crash (a real one has no thread left to create a spare after the next
     * start listed the directory); call once this lane's writes are acknowledged, which orders
     * them before this read of its spare.
     */
    void awaitSpare() {
        CompletableFuture<WalSegment> spare = next;
        if (spare != null) {
            spare.handle((segment, failure) -> null).join();
        }
    }

    /** Closes the current and spare segments and returns their paths, for the final checkpoint. */
    List<Path> closeAndList() {
        List<Path> paths = new ArrayList<>();
        try {
            if (current != null) {
                paths.add(current.path());
                current.close();
            }
            if (next != null) {
                WalSegment spare = next.join();
                spare.close();
                paths.add(spare.path());
            }
        } catch (IOException | RuntimeException e) {
            // listed segments are recycled or replayed either way
        }
        return paths;
    }
}

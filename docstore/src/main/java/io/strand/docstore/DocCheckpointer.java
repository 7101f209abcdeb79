package io.strand.docstore;

import io.strand.core.Agent;
import io.strand.core.FileSystemSync;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Thread-safe: checkpoints and snapshots run one at a time under one lock, periodically on its {@link Agent}
 * {@code docstore-checkpointer} or when a caller asks; the positions it reports are volatile. Bounds the work
 * start-up has to do and the journal the disk has to keep.
 *
 * <p>A checkpoint fsyncs the file system (the map view and the journal), then records in {@code docs.checkpoint}
 * ({@link DocCheckpoint}, byte table there) the journal index up to which the map reflects the journal, so a
 * restart with {@link DocStoreConfig.Recovery#RECOVER_IN_PLACE} replays only what follows. Every
 * {@link DocStoreConfig#snapshotEveryRecords()} journal records a snapshot ({@link DocSnapshot}, byte table there)
 * copies every doc as of a checkpoint, and the journal cycles it covers are deleted. At a clean close
 * {@link #writeClean} records the clean-shutdown marker, which lets the next start open the map as it is.
 */
final class DocCheckpointer implements AutoCloseable {
    private final Path dir;
    private final DocStoreConfig config;
    private final DocView view;
    private final DocJournal journal;
    /** {@link JournalLanes#appliedThrough()}: every journal record at or below it is in the map view. */
    private final LongSupplier appliedThrough;
    private final DocMetrics metrics;
    private final AtomicLong recordsSinceSnapshot = new AtomicLong();

    private final Object checkpointLock = new Object();
    private volatile long checkpointIndex;
    private volatile long snapshotIndex;
    private volatile Agent agent;

    /**
     * @param checkpointIndex      the index start-up recorded in {@code docs.checkpoint}
     * @param snapshotIndex        the index of the snapshot start-up rebuilt from, or -1
     * @param recordsSinceSnapshot journal records start-up replayed (none of them in a snapshot yet)
     */
    DocCheckpointer(DocStoreConfig config, DocView view, DocJournal journal, LongSupplier appliedThrough,
                    DocMetrics metrics, long checkpointIndex, long snapshotIndex, long recordsSinceSnapshot) {
        this.dir = config.dataDir();
        this.config = config;
        this.view = view;
        this.journal = journal;
        this.appliedThrough = appliedThrough;
        this.metrics = metrics;
        this.checkpointIndex = checkpointIndex;
        this.snapshotIndex = snapshotIndex;
        this.recordsSinceSnapshot.set(recordsSinceSnapshot);
    }

    /** Starts the periodic job: a checkpoint every {@link DocStoreConfig#checkpointInterval()}, snapshots as due. */
    void start() {
        agent = Agent.start("docstore-checkpointer", config.checkpointInterval(), this::tick);
    }

    /** One more journal record that no snapshot holds yet. Writer threads. */
    void recordAppended() {
        recordsSinceSnapshot.incrementAndGet();
    }

    private void tick() throws IOException {
        try {
            checkpointNow();
            if (recordsSinceSnapshot.get() >= config.snapshotEveryRecords()) {
                snapshotNow();
            }
        } catch (Throwable t) {
            metrics.backgroundError(); // the agent logs it, counts it for health and retries next period
            throw t;
        }
    }

    /**
     * Fsyncs the map view and records how far it reflects the journal, bounding replay after an unclean
     * stop with {@code RECOVER_IN_PLACE}. Any thread.
     *
     * @return the journal index recorded
     */
    long checkpointNow() throws IOException {
        synchronized (checkpointLock) {
            long y = appliedThrough.getAsLong();
            if (y > checkpointIndex) {
                // the journal too: its records are left to the write-ahead log's checkpoints, and after a
                // power loss the journal must not end before the index recorded here
                FileSystemSync.syncfs(dir);
                new DocCheckpoint(false, y, DocView.fingerprint(config)).write(dir.resolve(DocStore.CHECKPOINT_FILE));
                checkpointIndex = y;
                metrics.checkpoint();
            }
            return checkpointIndex;
        }
    }

    /**
     * Writes a snapshot of every doc as of a fresh checkpoint, then deletes the journal cycles it covers. Any
     * thread.
     *
     * @return the number of journal cycle files deleted
     */
    int snapshotNow() throws IOException {
        synchronized (checkpointLock) {
            long counted = recordsSinceSnapshot.get();
            long y = checkpointNow();
            DocSnapshot.write(dir.resolve(DocStore.SNAPSHOT_FILE), y, view);
            snapshotIndex = y;
            recordsSinceSnapshot.addAndGet(-counted);
            metrics.snapshot();
            return journal.deleteCyclesBefore(y);
        }
    }

    long checkpointIndex() {
        return checkpointIndex;
    }

    long snapshotIndex() {
        return snapshotIndex;
    }

    /** Stops the periodic job and waits for a pass in progress. */
    @Override
    public void close() {
        Agent a = agent;
        if (a != null) {
            a.close();
        }
    }

    /**
     * The clean-shutdown marker: syncs the file system (the closed map and journal), then records that the map
     * reflects every journal record up to {@code y}. Only once both are closed with nothing left to publish.
     */
    void writeClean(long y) throws IOException {
        synchronized (checkpointLock) {
            FileSystemSync.syncfs(dir);
            new DocCheckpoint(true, y, DocView.fingerprint(config)).write(dir.resolve(DocStore.CHECKPOINT_FILE));
        }
    }
}

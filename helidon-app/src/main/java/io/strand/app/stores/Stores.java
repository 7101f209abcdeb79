package io.strand.app.stores;

import io.strand.app.DocApi;
import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.TxnApi;
import io.strand.coldtier.ColdLogConfig;
import io.strand.core.DiskSpace;
import io.strand.core.Durability;
import io.strand.core.TxnIntents;
import io.strand.core.WriteAheadLog;
import io.strand.core.Writers;
import io.strand.docstore.DocStore;
import io.strand.docstore.DocStoreConfig;
import io.strand.logtier.LogStore;
import io.strand.logtier.ReplicatedTrims;
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One complete set of stores over one directory: the {@link Writers} that own every write to it,
 * the log store, the doc store, the transaction intents, and the request-level doc and txn APIs.
 * A single node has one set over {@code --data}; a cluster node has one per shard it replicates,
 * over that shard's live directory. Thread-safe: each store is; the set itself never changes after
 * {@link #open} and {@link #startRetention} (called once by the thread wiring the set, before it serves).
 *
 * <p>Opening replays the directory's write-ahead log (in {@code fsync} mode) and then the txn
 * intents, so nothing is served from a half-recovered set.
 */
public final class Stores implements AutoCloseable {
    private final Path dir;
    private final DiskSpace disk;
    private final Writers writers;
    private final LogStore logs;
    private final DocStore docs;
    private final TxnIntents txnIntents;
    private final DocApi docApi;
    private final TxnApi txnApi;
    private final long replayed;
    private final long replayMillis;
    /** The retention worker over these stores; set once by {@link #startRetention}. */
    private volatile Retention retention;

    private Stores(Path dir, DiskSpace disk, Writers writers, LogStore logs, DocStore docs, TxnIntents txnIntents,
                   DocApi docApi, TxnApi txnApi, long replayed, long replayMillis) {
        this.dir = dir;
        this.disk = disk;
        this.writers = writers;
        this.logs = logs;
        this.docs = docs;
        this.txnIntents = txnIntents;
        this.docApi = docApi;
        this.txnApi = txnApi;
        this.replayed = replayed;
        this.replayMillis = replayMillis;
    }

    /**
     * Opens (creating) the stores under {@code dir} with {@code durability}; {@code writerThreads}
     * writer threads named {@code name-N}; {@code freeSpace} overrides the file system's free-bytes
     * reading when not null (tests).
     */
    public static Stores open(String name, ServerConfig config, Path dir, Durability durability, int writerThreads,
                              StrandMetrics metrics, DiskSpace.FreeSpace freeSpace) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create data dir " + dir + ": " + e.getMessage(), e);
        }
        DiskSpace disk = freeSpace == null ? DiskSpace.of(dir, config.minFreeDisk())
                : new DiskSpace(dir, config.minFreeDisk(), DiskSpace.DEFAULT_REFRESH, freeSpace);
        WriteAheadLog wal = durability == Durability.FSYNC
                ? new WriteAheadLog(dir.resolve("wal"), WriteAheadLog.DEFAULT_SEGMENT_BYTES, config.walCheckpointRecords(), disk)
                : null;
        Writers writers = new Writers(name, writerThreads, durability, 4096, wal, metrics::syncNanos, metrics::groupSize);
        LogStore logs = new LogStore(config.logConfig(dir, durability), writers, disk);
        DocStore docs = new DocStore(DocStoreConfig.defaults(dir.resolve("docs"))
                .withCapacity(config.docCapacity(), DocStoreConfig.DEFAULT_AVERAGE_KEY_BYTES, DocStoreConfig.DEFAULT_AVERAGE_VALUE_BYTES), writers, disk);
        long start = System.nanoTime();
        long replayed = writers.recover(); // both stores registered their replayers; nothing is served before this
        long replayMillis = (System.nanoTime() - start) / 1_000_000;
        TxnIntents intents = new TxnIntents(dir.resolve("txn"));
        intents.recover(writers); // after the write-ahead replay: a txn in flight at the crash came after its records
        return new Stores(dir, disk, writers, logs, docs, intents, new DocApi(docs, metrics),
                new TxnApi(writers, logs, docs, intents, metrics), replayed, replayMillis);
    }

    public Path dir() {
        return dir;
    }

    public DiskSpace disk() {
        return disk;
    }

    public Writers writers() {
        return writers;
    }

    public LogStore logs() {
        return logs;
    }

    public DocStore docs() {
        return docs;
    }

    public DocApi docApi() {
        return docApi;
    }

    public TxnApi txnApi() {
        return txnApi;
    }

    /**
     * Starts the trims and retention of SPEC §12 over these stores: once, after the cold tier is
     * enabled on the log store (the worker's first pass gives back space a crash left).
     *
     * @param replicated a cluster replica's way to its shard (null on a single node)
     */
    public Retention startRetention(RetentionPolicy defaults, Duration interval, ReplicatedTrims replicated) {
        if (retention != null) {
            throw new IllegalStateException("retention already started on " + dir);
        }
        retention = new Retention(logs, defaults, interval, ColdLogConfig.DEFAULT_COMPACTION_GRACE, replicated);
        return retention;
    }

    /** The retention worker and the trim and policy requests it serves (see {@link #startRetention}). */
    public Retention retention() {
        Retention r = retention;
        if (r == null) {
            throw new IllegalStateException("retention not started on " + dir);
        }
        return r;
    }

    /** Write-ahead records replayed when this set opened (0 after a clean stop or in {@code os} mode). */
    public long replayed() {
        return replayed;
    }

    public long replayMillis() {
        return replayMillis;
    }

    /** The retention worker first (it submits turns), then the writers (no turn runs after), the intents, logs and docs. */
    @Override
    public void close() {
        Retention r = retention;
        if (r != null) {
            r.close();
        }
        writers.close();
        txnIntents.close();
        logs.close();
        docs.close();
    }
}

package io.strand.docstore;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;

/**
 * Immutable configuration of a {@link DocStore}, validated once here. Start from
 * {@link #defaults(Path)} and change what you need with the {@code with…} methods.
 *
 * @param dataDir              folder that holds the journal, the map view, the snapshot and the checkpoint
 * @param maxEntries           live docs the store accepts (default {@value #DEFAULT_MAX_ENTRIES}); past it
 *                             creating a doc is refused with {@code storage_full}
 * @param maxDocBytes          largest doc as serialized JSON (default {@value #DEFAULT_MAX_DOC_BYTES}); past it
 *                             {@code too_large}
 * @param averageKeyBytes      expected {@code ws/doc} key length, sizes the map (default {@value #DEFAULT_AVERAGE_KEY_BYTES})
 * @param averageValueBytes    expected doc JSON size, sizes the map (default {@value #DEFAULT_AVERAGE_VALUE_BYTES}).
 *                             The store also refuses writes once the stored bytes would pass
 *                             {@code maxEntries × (averageKeyBytes + averageValueBytes + 8)}: the map has a fixed size
 * @param recovery             what start-up does after an unclean stop (default {@link Recovery#REBUILD})
 * @param checkpointInterval   how often the checkpointer records how far the map reflects the journal (default 10 s)
 * @param snapshotEveryRecords journal records between two snapshots; a snapshot lets older journal cycles be
 *                             deleted (default {@value #DEFAULT_SNAPSHOT_EVERY_RECORDS})
 * @param journalRollCycle     roll cycle of the journal queue: whole cycles are deleted once a snapshot covers them
 *                             (default {@code FAST_HOURLY})
 * @param journalBlockSize     Chronicle block (mapped chunk) size of the journal (default 16 MiB)
 * @param journalClock         time source of the journal's roll cycles (tests move it by hand)
 */
public record DocStoreConfig(
        Path dataDir,
        long maxEntries,
        int maxDocBytes,
        int averageKeyBytes,
        int averageValueBytes,
        Recovery recovery,
        Duration checkpointInterval,
        long snapshotEveryRecords,
        RollCycle journalRollCycle,
        long journalBlockSize,
        TimeProvider journalClock) {

    public static final long DEFAULT_MAX_ENTRIES = 1_000_000;
    public static final int DEFAULT_MAX_DOC_BYTES = 64 * 1024;
    public static final int DEFAULT_AVERAGE_KEY_BYTES = 32;
    public static final int DEFAULT_AVERAGE_VALUE_BYTES = 512;
    public static final long DEFAULT_SNAPSHOT_EVERY_RECORDS = 1_000_000;
    public static final long DEFAULT_JOURNAL_BLOCK_SIZE = 16L << 20;

    /** What start-up does with the map file after an unclean stop (no clean-shutdown marker). */
    public enum Recovery {
        /**
         * Delete the map file and rebuild it from the snapshot plus the journal. Never trusts a map a
         * crashed process was writing; costs one pass over the data.
         */
        REBUILD,
        /**
         * {@code recoverPersistedTo} the map, then replay the journal from the last checkpoint; falls back to
         * {@link #REBUILD} when recovery throws. Faster for large stores; trusts Chronicle's recovery for keys
         * not written since the checkpoint.
         */
        RECOVER_IN_PLACE
    }

    public DocStoreConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(recovery, "recovery");
        Objects.requireNonNull(checkpointInterval, "checkpointInterval");
        Objects.requireNonNull(journalRollCycle, "journalRollCycle");
        Objects.requireNonNull(journalClock, "journalClock");
        if (maxEntries < 1 || maxEntries > 1L << 31) {
            throw new IllegalArgumentException("maxEntries must be 1..2^31, not " + maxEntries);
        }
        if (maxDocBytes < 16 || maxDocBytes > 16 << 20) {
            throw new IllegalArgumentException("maxDocBytes must be 16 B..16 MiB, not " + maxDocBytes);
        }
        if (averageKeyBytes < 3 || averageKeyBytes > 192) {
            throw new IllegalArgumentException("averageKeyBytes must be 3..192, not " + averageKeyBytes);
        }
        if (averageValueBytes < 2 || averageValueBytes > maxDocBytes) {
            throw new IllegalArgumentException("averageValueBytes must be 2..maxDocBytes, not " + averageValueBytes);
        }
        if (checkpointInterval.isNegative() || checkpointInterval.isZero()) {
            throw new IllegalArgumentException("checkpointInterval must be positive");
        }
        if (snapshotEveryRecords < 1) {
            throw new IllegalArgumentException("snapshotEveryRecords must be ≥ 1");
        }
        if (journalBlockSize < 64 << 10) {
            throw new IllegalArgumentException("journalBlockSize must be ≥ 64 KiB");
        }
    }

    public static DocStoreConfig defaults(Path dataDir) {
        return new DocStoreConfig(dataDir, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_DOC_BYTES, DEFAULT_AVERAGE_KEY_BYTES,
                DEFAULT_AVERAGE_VALUE_BYTES, Recovery.REBUILD, Duration.ofSeconds(10), DEFAULT_SNAPSHOT_EVERY_RECORDS,
                RollCycles.FAST_HOURLY, DEFAULT_JOURNAL_BLOCK_SIZE, SystemTimeProvider.INSTANCE);
    }

    public DocStoreConfig withCapacity(long maxEntries, int averageKeyBytes, int averageValueBytes) {
        return new DocStoreConfig(dataDir, maxEntries, maxDocBytes, averageKeyBytes, averageValueBytes, recovery,
                checkpointInterval, snapshotEveryRecords, journalRollCycle, journalBlockSize, journalClock);
    }

    public DocStoreConfig withMaxDocBytes(int maxDocBytes) {
        return new DocStoreConfig(dataDir, maxEntries, maxDocBytes, averageKeyBytes, Math.min(averageValueBytes,
                maxDocBytes), recovery, checkpointInterval, snapshotEveryRecords, journalRollCycle, journalBlockSize,
                journalClock);
    }

    public DocStoreConfig withRecovery(Recovery recovery) {
        return new DocStoreConfig(dataDir, maxEntries, maxDocBytes, averageKeyBytes, averageValueBytes, recovery,
                checkpointInterval, snapshotEveryRecords, journalRollCycle, journalBlockSize, journalClock);
    }

    public DocStoreConfig withCheckpoints(Duration checkpointInterval, long snapshotEveryRecords) {
        return new DocStoreConfig(dataDir, maxEntries, maxDocBytes, averageKeyBytes, averageValueBytes, recovery,
                checkpointInterval, snapshotEveryRecords, journalRollCycle, journalBlockSize, journalClock);
    }

    public DocStoreConfig withJournal(RollCycle rollCycle, long blockSize, TimeProvider clock) {
        return new DocStoreConfig(dataDir, maxEntries, maxDocBytes, averageKeyBytes, averageValueBytes, recovery,
                checkpointInterval, snapshotEveryRecords, rollCycle, blockSize, clock);
    }

    /** Stored bytes (keys + values) the store accepts before refusing with {@code storage_full}. */
    public long byteBudget() {
        return maxEntries * (averageKeyBytes + averageValueBytes + 8L);
    }
}

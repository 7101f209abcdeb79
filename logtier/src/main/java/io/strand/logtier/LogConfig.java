package io.strand.logtier;

import io.strand.core.Durability;
import java.nio.file.Path;
import java.time.Duration;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.rollcycles.LegacyRollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

/**
 * Everything the log tier needs to know, validated once at start-up.
 *
 * @param dataDir         logs live under {@code dataDir/logs/{ws}/{log}/}
 * @param durability      when an append is acknowledged (SPEC §3)
 * @param rollCycle       Chronicle roll cycle: the granularity at which hot files can be deleted
 * @param blockSize       bytes Chronicle maps per block of a cycle file; small so 100k logs stay cheap
 * @param idleClose       a log's queue is closed after this long without use
 * @param maxOpenLogs     above this many open queues, idle ones are closed least-recently-used first
 * @param maxEntryBytes   one entry's {@code data} as serialized JSON (SPEC §2: 256 KiB)
 * @param maxBatchEntries entries in one append (1,000)
 * @param maxBatchBytes   bytes of one append (4 MiB)
 * @param hot             when the hot part of a log rolls to cold segments
 */
public record LogConfig(
        Path dataDir,
        Durability durability,
        RollCycle rollCycle,
        long blockSize,
        Duration idleClose,
        int maxOpenLogs,
        int maxEntryBytes,
        int maxBatchEntries,
        int maxBatchBytes,
        HotThreshold hot) {

    public static final long DEFAULT_BLOCK_SIZE = 4L << 20;
    public static final int DEFAULT_MAX_ENTRY_BYTES = 256 * 1024;
    public static final int DEFAULT_MAX_BATCH_ENTRIES = 1000;
    public static final int DEFAULT_MAX_BATCH_BYTES = 4 * 1024 * 1024;

    /** When a log's oldest hot entries move to the cold tier; any limit passed triggers a roll. */
    public record HotThreshold(long maxEntries, long maxBytes, Duration maxAge) {
        public static final HotThreshold DEFAULT = new HotThreshold(1_000_000, 256L << 20, Duration.ofDays(7));
    }

    public LogConfig {
        if (dataDir == null || durability == null || rollCycle == null || hot == null) {
            throw new IllegalArgumentException("dataDir, durability, rollCycle and hot are required");
        }
        if (blockSize < 1 << 20 || maxEntryBytes < 1 || maxBatchEntries < 1 || maxBatchBytes < maxEntryBytes) {
            throw new IllegalArgumentException("blockSize ≥ 1 MiB, limits positive, batch bytes ≥ entry bytes");
        }
        if (blockSize < 4L * maxEntryBytes) {
            throw new IllegalArgumentException("blockSize must be at least 4× the entry limit (Chronicle writes an excerpt within a block)");
        }
        if (maxOpenLogs < 1 || idleClose.isNegative()) {
            throw new IllegalArgumentException("maxOpenLogs ≥ 1 and idleClose ≥ 0");
        }
    }

    public static LogConfig defaults(Path dataDir, Durability durability) {
        return new LogConfig(dataDir, durability, RollCycles.FAST_HOURLY, DEFAULT_BLOCK_SIZE, Duration.ofSeconds(30),
                1000, DEFAULT_MAX_ENTRY_BYTES, DEFAULT_MAX_BATCH_ENTRIES, DEFAULT_MAX_BATCH_BYTES, HotThreshold.DEFAULT);
    }

    /**
     * The hot queue's file cycle by name ({@code --hot-roll-cycle}): rolled entries leave the hot
     * tier one whole cycle file at a time, so this is also about how long a rolled entry may still be
     * read from hot files. {@code hourly} (default), {@code daily}, {@code five-minutely},
     * {@code minutely}; {@code secondly} is for tests and benchmarks that need rolled entries to
     * leave the hot tier at once. A queue keeps the cycle it was created with.
     */
    public static RollCycle rollCycleNamed(String name) {
        return switch (name == null ? "" : name) {
            case "hourly" -> RollCycles.FAST_HOURLY;
            case "daily" -> RollCycles.FAST_DAILY;
            case "five-minutely" -> RollCycles.FIVE_MINUTELY;
            case "minutely" -> LegacyRollCycles.MINUTELY;
            case "secondly" -> TestRollCycles.TEST_SECONDLY;
            default -> throw new IllegalArgumentException(
                    "hot roll cycle must be secondly, minutely, five-minutely, hourly or daily, not '" + name + "'");
        };
    }

    public LogConfig withRollCycle(RollCycle cycle) {
        return new LogConfig(dataDir, durability, cycle, blockSize, idleClose, maxOpenLogs, maxEntryBytes,
                maxBatchEntries, maxBatchBytes, hot);
    }

    public LogConfig withHot(HotThreshold threshold) {
        return new LogConfig(dataDir, durability, rollCycle, blockSize, idleClose, maxOpenLogs, maxEntryBytes,
                maxBatchEntries, maxBatchBytes, threshold);
    }

    public LogConfig withOpenLimits(Duration idle, int maxOpen) {
        return new LogConfig(dataDir, durability, rollCycle, blockSize, idle, maxOpen, maxEntryBytes,
                maxBatchEntries, maxBatchBytes, hot);
    }

    public Path logsDir() {
        return dataDir.resolve("logs");
    }
}

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
 * @param blockSize       bytes Chronicle maps per block of a cycle file; a quarter of it is the largest
 *                        excerpt Chronicle writes, and one append is one excerpt, so it must hold the
 *                        largest batch ({@link #maxExcerptBytes}). The mapping is address space only: a
 *                        small log touches (and holds in the page cache) only the pages it writes
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

    /**
     * 32 MiB: its quarter (8 MiB) holds a batch at the 4 MiB limit with 1,000 keys and headers. It was
     * 4 MiB, which capped an excerpt at 1 MiB, so a batch between about 1 and 4 MiB, within every
     * limit, failed in Chronicle with an internal error (found by a black-box audit, 2026-12-07).
     *
     * <p>Reads gain too. Chronicle unmaps a chunk once its appender has moved on, and a reader maps it
     * again; on this VM the first touch of each page of a new mapping costs far more than the read
     * (a C loop over a file just written, 2026-12-07: 130–180 ns a page through the mapping that
     * wrote it, 1,260–2,360 ns through a new one). Reading back 100,000 entries of 342 bytes just
     * appended in batches of 100, one thread, JIT settled (a one-off in-process test, not kept; its
     * method is in docs/measurements.md; rounds 6–11 of 12, two runs): 0.31–0.48 µs of CPU per entry with 4 MiB chunks, 0.12–0.18 µs with 32 MiB,
     * the same 0.12–0.18 µs at 200,000 entries. Keeping the appender's last chunks mapped for readers
     * (tried at the same time) halved the 4 MiB figure and did nothing at 32 MiB, so it was not kept.
     */
    public static final long DEFAULT_BLOCK_SIZE = 32L << 20;
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
        if (blockSize / 4 < maxExcerptBytes(maxBatchEntries, maxBatchBytes)) {
            throw new IllegalArgumentException("blockSize must be at least 4× the largest batch's excerpt ("
                    + maxExcerptBytes(maxBatchEntries, maxBatchBytes) + " bytes): Chronicle writes an excerpt of at most a quarter block");
        }
        if (maxOpenLogs < 1 || idleClose.isNegative()) {
            throw new IllegalArgumentException("maxOpenLogs ≥ 1 and idleClose ≥ 0");
        }
    }

    /** The most UTF-8 bytes of an entry's key: 1,024 chars (the parsers' limit), at most 3 bytes each. */
    static final int MAX_KEY_BYTES = 3 * 1024;

    /**
     * The largest excerpt of a batch at both limits: its data, each entry's key and a few bytes of
     * framing (key flag, lengths), and 64 KiB for the header and a producer id. A batch that still
     * does not fit a quarter block is refused {@code 413} before anything is written ({@link HotAppender}).
     */
    static long maxExcerptBytes(int maxBatchEntries, int maxBatchBytes) {
        return maxBatchBytes + (long) maxBatchEntries * (MAX_KEY_BYTES + 16) + (64 << 10);
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

package io.strand.coldtier;

import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.Executor;

/**
 * How a {@link ColdLog} writes and reads segments. Immutable, validated once, shared by all logs.
 *
 * @param tempDir           local directory for segment files before upload (same disk as the data dir)
 * @param blockBytes        uncompressed block size target, default {@value SegmentWriter#DEFAULT_BLOCK_BYTES}:
 *                          the unit of a ranged read, so smaller = less read amplification, larger = better ratio
 * @param zstdLevel         zstd level, default {@value SegmentWriter#DEFAULT_ZSTD_LEVEL}
 * @param maxCommitAttempts manifest commits retried after a lost race before giving up, default {@value #DEFAULT_MAX_COMMIT_ATTEMPTS}
 * @param clock             time for compaction grace periods
 * @param readAhead         runs read-ahead of the next block for sequential replay; null disables it
 */
public record ColdLogConfig(Path tempDir, int blockBytes, int zstdLevel, int maxCommitAttempts, InstantSource clock,
                            Executor readAhead) {

    public static final int DEFAULT_MAX_COMMIT_ATTEMPTS = 8;
    // The one home of the compaction defaults: ColdLog.compact(), POST .../cold/compact without a
    // value (ColdHttp) and retention's grace all read these; `strand cold compact --help` quotes them.
    /** Compaction target: segments merged until about this size. */
    public static final long DEFAULT_COMPACTION_TARGET_BYTES = 64L * 1024 * 1024;
    /** How long a retired segment stays readable for readers holding an older manifest. */
    public static final Duration DEFAULT_COMPACTION_GRACE = Duration.ofMinutes(10);
    /** Unreferenced objects younger than this may be an upload in flight, so orphan clean-up leaves them. */
    public static final Duration DEFAULT_ORPHAN_MIN_AGE = Duration.ofHours(1);

    public ColdLogConfig {
        if (tempDir == null) {
            throw new IllegalArgumentException("tempDir is required");
        }
        if (blockBytes < 1024 || blockBytes > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("blockBytes must be 1 KiB..16 MiB, not " + blockBytes);
        }
        if (zstdLevel < 1 || zstdLevel > 19) {
            throw new IllegalArgumentException("zstdLevel must be 1..19, not " + zstdLevel);
        }
        if (maxCommitAttempts < 1) {
            throw new IllegalArgumentException("maxCommitAttempts must be ≥ 1");
        }
        if (clock == null) {
            clock = InstantSource.system();
        }
    }

    public static ColdLogConfig defaults(Path tempDir) {
        return new ColdLogConfig(tempDir, SegmentWriter.DEFAULT_BLOCK_BYTES, SegmentWriter.DEFAULT_ZSTD_LEVEL,
                DEFAULT_MAX_COMMIT_ATTEMPTS, InstantSource.system(), null);
    }

    public ColdLogConfig withBlockBytes(int value) {
        return new ColdLogConfig(tempDir, value, zstdLevel, maxCommitAttempts, clock, readAhead);
    }

    public ColdLogConfig withClock(InstantSource value) {
        return new ColdLogConfig(tempDir, blockBytes, zstdLevel, maxCommitAttempts, value, readAhead);
    }

    public ColdLogConfig withReadAhead(Executor value) {
        return new ColdLogConfig(tempDir, blockBytes, zstdLevel, maxCommitAttempts, clock, value);
    }
}

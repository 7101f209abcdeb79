package io.strand.cluster;

/**
 * When a shard replica takes its next snapshot. Stateless (the counters are the apply thread's).
 *
 * <p>A snapshot copies the shard's open files (every log's current cycle file, the doc snapshot; closed
 * cycle files are hard-linked), so its cost is the size of that copy, not the writes since the last
 * one. Counting entries alone (Ratis's trigger) made that cost unbounded relative to the writes:
 * with 400 MiB of current cycle files and 400-byte serial appends, a snapshot every 10,000 entries
 * copied 100 bytes for every byte written, and the copies took a sixth of a core on every replica
 * (measured: the stager thread at 113 CPU ticks in 8 s on each node, at 247 appends/s).
 *
 * <p>The rule: a snapshot is due once {@code every} entries have been applied since the last one AND
 * the Raft log written since then is at least as large as the last snapshot's copy (so snapshots at
 * most double the bytes written), or once {@code every × defer} entries have been applied whatever
 * the sizes (this bounds the log a restart replays, in entries), or once {@link #MAX_LOG_BYTES} of log
 * have been written (this bounds the Raft log on disk, in bytes). With {@code defer} 1 it is the plain
 * entry count. The staging copy starts half way: when the rule holds for twice the counts.
 *
 * @param every entries applied between snapshots at least
 * @param defer how many times {@code every} a snapshot may wait for the log to outgrow its copy
 */
record SnapshotPolicy(long every, int defer) {
    /** Log bytes after which a snapshot is due whatever the entry count or copy size. */
    static final long MAX_LOG_BYTES = 1L << 30;

    SnapshotPolicy {
        if (every < 1 || defer < 1) {
            throw new IllegalArgumentException("every and defer must be positive, not " + every + ", " + defer);
        }
    }

    /**
     * @param entries   entries applied since the last snapshot
     * @param logBytes  their size in the Raft log
     * @param copyBytes bytes the last snapshot compared and copied (0 before the first)
     */
    boolean due(long entries, long logBytes, long copyBytes) {
        if (logBytes >= MAX_LOG_BYTES) {
            return true;
        }
        if (entries < every) {
            return false;
        }
        return logBytes >= copyBytes || entries >= every * defer;
    }

    /** Whether to start staging the next snapshot: half way to {@link #due}. */
    boolean stageDue(long entries, long logBytes, long copyBytes) {
        return due(entries * 2, logBytes * 2, copyBytes);
    }

    /** The entry count at which Ratis's own trigger takes a snapshot: the backstop of {@link #due}. */
    long ratisThreshold() {
        return every * defer;
    }
}

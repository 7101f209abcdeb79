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
 * have been written (this bounds the Raft log on disk, in bytes, give or take the replicas' turns:
 * at most {@link #TURNS_END_LOG_BYTES}). With {@code defer} 1 it is the plain
 * entry count.
 *
 * <p>The staging copy (the bulk of a snapshot's work, on the node's stager thread) starts part way:
 * replica {@code rank} of a group of {@code replicas} stages when the rule holds for the counts
 * times {@code (replicas + 1) / (rank + 1)}, so at 1/4, 2/4 and 3/4 of the way for three replicas.
 * Every replica applies the same entries, so with one share they all staged at once: the node logs of
 * {@code strand bench --cluster 3 append-batched} showed shard 6 staging about 300 MiB on all three
 * nodes within 1.4 s, each taking 3.4–4.7 s, while batched appends saw single stalls of 2.6–4.3 s.
 * Staggered, at most one replica of a group is copying at a time for a while, so two stay fast.
 * The rank is this node's place among the group's members sorted by id ({@link #amongReplicas}):
 * every replica sorts the same configuration, so no two share a rank, also after a replace.
 *
 * @param every    entries applied between snapshots at least
 * @param defer    how many times {@code every} a snapshot may wait for the log to outgrow its copy
 * @param rank     this replica's place in its group, 0 ≤ rank &lt; replicas
 * @param replicas the group's size
 */
record SnapshotPolicy(long every, int defer, int rank, int replicas) {
    /** Log bytes after which a snapshot is due whatever the entry count or copy size. */
    static final long MAX_LOG_BYTES = 1L << 30;
    /** Log bytes after which a due snapshot is taken at once, not in turn: all turns pass before it ({@link #window}). */
    static final long TURNS_END_LOG_BYTES = MAX_LOG_BYTES + MAX_LOG_BYTES / 2;
    /**
     * The size (the last copy's or the log's since, the larger) from which the replicas of a group take
     * turns ({@link #inTurns}): takes after copies of 5–10 MiB took 44–195 ms here, after 175 MiB 1.0–1.4 s.
     */
    static final long STAGGER_FROM_COPY_BYTES = 8L << 20;

    SnapshotPolicy {
        if (every < 1 || defer < 1) {
            throw new IllegalArgumentException("every and defer must be positive, not " + every + ", " + defer);
        }
        if (replicas < 1 || rank < 0 || rank >= replicas) {
            throw new IllegalArgumentException("rank " + rank + " of " + replicas + " replicas");
        }
    }

    /** The policy of a lone replica (or one whose staging need not be staggered): staging half way. */
    SnapshotPolicy(long every, int defer) {
        this(every, defer, 0, 1);
    }

    /**
     * @param entries   entries applied since the last snapshot
     * @param logBytes  their size in the Raft log
     * @param copyBytes bytes the last snapshot compared and copied (after a start: the snapshot restored; 0 before either)
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

    /**
     * Whether to take the snapshot now, at Raft log index {@code index}: {@link #due}, and it is this
     * replica's turn. Every replica applies the same entries, so all were due at the same index and
     * took together: in {@code strand bench --cluster 3 append-batched} the three replicas of shard 6
     * took theirs at the same index, each in 1.0–2.4 s (copies of 175 and 744 MiB read, 145–425 MiB
     * written), and batched appends stalled for 2.8–3.0 s, since no replica was applying. So the index
     * is cut into {@link #window windows}, and the windows take turns by rank: a due snapshot waits at
     * most {@code replicas} windows for its replica's turn.
     *
     * <p>Taken at once: a group of one, a cheap snapshot (both the last copy and the log since it under
     * {@link #STAGGER_FROM_COPY_BYTES}), and one within an interval of the deferral's entry count or past
     * {@link #TURNS_END_LOG_BYTES}, where Ratis's trigger or the log's size must not be outrun. The log
     * since the last snapshot counts as a lower bound of the copy: a replica's first snapshot has no last
     * copy, and it was the one taken together (2026-12-06 evening, {@code --warmup 120 append-batched}:
     * index 10,000 on all three replicas, 4.0 s each with 913 MiB compared and 235–478 MiB written, and
     * a batched append failed with {@code unavailable}, no commit within 4.5 s). Before, the log's byte
     * cap also meant at once, and entries of 112 KB reach it before the interval's entry count.
     */
    boolean takeDue(long entries, long logBytes, long copyBytes, long index) {
        if (!due(entries, logBytes, copyBytes)) {
            return false;
        }
        return !inTurns(entries, logBytes, copyBytes) || Math.floorMod(index / window(entries, logBytes), replicas) == rank;
    }

    /** Whether a due snapshot waits for this replica's turn ({@link #takeDue}), rather than being taken at once. */
    boolean inTurns(long entries, long logBytes, long copyBytes) {
        return replicas > 1 && Math.max(copyBytes, logBytes) >= STAGGER_FROM_COPY_BYTES && logBytes < TURNS_END_LOG_BYTES
                && entries + every < every * defer;
    }

    /**
     * Entries per turn: {@code every / replicas}, or fewer when entries are large, so that all the
     * replicas' turns pass within a quarter of {@link #MAX_LOG_BYTES} of log (the average entry size is
     * the one since this replica's last snapshot). Rounded down to a power of two: replicas that measured
     * slightly different averages still cut the index at the same points.
     */
    long window(long entries, long logBytes) {
        long byEntries = Math.max(1, every / replicas);
        long averageEntryBytes = Math.max(1, logBytes / Math.max(1, entries));
        long byBytes = Math.max(1, MAX_LOG_BYTES / 4 / replicas / averageEntryBytes);
        return Long.highestOneBit(Math.min(byEntries, byBytes));
    }

    /**
     * This policy with {@code self}'s rank among {@code replicaIds} (the group's current members, in
     * any order): its index once sorted. A node that is not among them (a configuration that has not
     * reached it yet) takes the rank its id's hash gives.
     */
    SnapshotPolicy amongReplicas(java.util.Collection<String> replicaIds, String self) {
        java.util.List<String> sorted = replicaIds.stream().sorted().toList();
        int n = Math.max(1, sorted.size());
        int rank = sorted.indexOf(self);
        return new SnapshotPolicy(every, defer, rank >= 0 ? rank : Math.floorMod(self.hashCode(), n), n);
    }

    /** Whether to start staging the next snapshot: {@code (rank + 1) / (replicas + 1)} of the way to {@link #due}. */
    boolean stageDue(long entries, long logBytes, long copyBytes) {
        return due(entries * (replicas + 1) / (rank + 1), logBytes * (replicas + 1) / (rank + 1), copyBytes);
    }

    /** The entry count at which Ratis's own trigger takes a snapshot: the backstop of {@link #due}. */
    long ratisThreshold() {
        return every * defer;
    }
}

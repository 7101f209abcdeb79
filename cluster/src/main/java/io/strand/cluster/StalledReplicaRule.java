package io.strand.cluster;

import java.time.Duration;

/**
 * Confined to the caller's thread (the node's timer, through {@link StalledReplicaWatch}): decides,
 * from samples of one follower replica, when its leader has stopped feeding it and should be asked to
 * step down. A pure rule, so it is tested with made-up timelines.
 *
 * <p>The case: a follower whose Raft log does not grow for {@link #STALLED_AFTER} while the leader's
 * commit index is past the follower's last entry, the leader unchanged and no snapshot arriving. A
 * sample without a leader keeps the count: a follower that is never fed keeps timing out, campaigning
 * in vain (its log is behind) and forgetting its leader between that leader's requests. Ratis 3.3.0 can leave a leader in that state: a
 * heartbeat answered SUCCESS by a follower holding a divergent uncommitted tail (from an old leader)
 * advances the leader's idea of what the follower holds past the common prefix, and from then on every
 * append is answered INCONSISTENCY and the leader never backs off far enough (fixed after 3.3.0 in
 * RATIS-2605). Seen once in {@code ClusterFailoverIT}: a restarted replica got no entry for 2 minutes
 * and its node answered reads {@code 503}. A new term's leader starts from what each follower really
 * holds, so one election ends it.
 *
 * <p>It never fires for a follower that is merely slow (its log grows), one up to date, one receiving
 * a snapshot, or one whose leader changes. One cut off from the leader is not its case either: the
 * caller then has no fresh commit index of that leader to give (0). After asking, it waits
 * {@link #RETRY_AFTER} before it may ask again, twice that after the next ask of the same stall, and so on.
 */
final class StalledReplicaRule {
    static final Duration STALLED_AFTER = Duration.ofSeconds(10);
    /**
     * The wait before asking again while the same stall goes on; it doubles with each ask, up to
     * {@link #RETRY_MAX}. In one fault run the leader that stepped down won the next election and
     * stalled the same replica again, and the next ask (60 s later then) moved leadership elsewhere and
     * ended it. When the stalling leader is the shard's preferred leader it wins every election, and
     * asking often only costs the shard a forced election each time: hence the doubling.
     */
    static final Duration RETRY_AFTER = Duration.ofSeconds(20);
    static final Duration RETRY_MAX = Duration.ofMinutes(5);
    private long retryNanos = RETRY_AFTER.toNanos();

    private String leader;

    /** This node's replica is not a follower now (it leads, or is gone): forget the count and the leader. */
    void reset() {
        leader = null;
        lastIndex = Long.MIN_VALUE;
        counting = false;
    }

    /** The leader the last sample counted under: the one to ask to step down. */
    String leader() {
        return leader;
    }
    private long lastIndex = Long.MIN_VALUE;
    /** Whether the replica is behind and its log unchanged since {@code stalledSince} (nanoTime may be negative: no sentinel). */
    private boolean counting;
    private long stalledSince;
    private boolean asked;
    private long askedAt;

    /**
     * One sample at {@code nanos}: the replica's leader (null when none is known now: the last known
     * one is kept), the index of its last log entry, the leader's commit index as freshly heard (0 when
     * unknown), and whether a snapshot is being written into it. True when that leader should be asked
     * to step down now.
     */
    boolean stalled(long nanos, String leader, long lastIndex, long leaderCommit, boolean snapshotArriving) {
        if (leader == null) {
            leader = this.leader; // between a stuck follower's vain campaigns: still the same leader's follower
        }
        boolean changed = leader == null || !leader.equals(this.leader) || lastIndex != this.lastIndex;
        this.leader = leader;
        this.lastIndex = lastIndex;
        if (leader == null || leaderCommit <= lastIndex || snapshotArriving) {
            counting = false;
            return false;
        }
        if (changed || !counting) {
            counting = true; // behind, and unchanged from here on: the count starts
            stalledSince = nanos;
            retryNanos = RETRY_AFTER.toNanos();
            return false;
        }
        if (nanos - stalledSince < STALLED_AFTER.toNanos() || (asked && nanos - askedAt < retryNanos)) {
            return false;
        }
        if (asked && askedAt >= stalledSince) { // this stall outlived the last ask: wait longer before the next
            retryNanos = Math.min(2 * retryNanos, RETRY_MAX.toNanos());
        }
        asked = true;
        askedAt = nanos;
        return true;
    }
}

package io.strand.cluster;

import java.util.Optional;
import org.apache.ratis.server.RaftServer;

/**
 * One shard replica's Raft figures on this node, read from its Ratis division when asked (for the
 * per-shard metrics). Immutable.
 *
 * @param leaderId      the leader's node id as this replica knows it, null when none
 * @param leader        1 when this node's replica leads the shard, else 0
 * @param term          current term
 * @param commitIndex   Raft commit index this replica knows
 * @param appliedIndex  last index this replica applied
 * @param followerLag   on the leader: the largest {@code commitIndex - matchIndex} over its followers; 0 elsewhere
 * @param leaderChanges leader changes this replica saw since start (elections that changed the leader)
 */
public record ShardMetrics(int shard, String leaderId, int leader, long term, long commitIndex, long appliedIndex, long followerLag,
                           long leaderChanges) {
    /** Apply lag: committed but not yet applied here. */
    public long applyLag() {
        return Math.max(0, commitIndex - appliedIndex);
    }

    /** The figures of {@code node}'s replica of {@code shard}, or empty when it holds none (or it is not running). */
    public static Optional<ShardMetrics> of(RaftNode node, int shard) {
        Optional<RaftServer.Division> division = node.division(shard).filter(d -> d.getInfo().isAlive());
        if (division.isEmpty()) {
            return Optional.empty();
        }
        RaftServer.Division d = division.get();
        long commit = d.getRaftLog().getLastCommittedIndex();
        long lag = 0;
        if (d.getInfo().isLeader()) {
            for (long match : d.getInfo().getFollowerMatchIndices()) {
                lag = Math.max(lag, commit - match);
            }
        }
        long changes = node.machine(shard).map(ShardStateMachine::leaderChanges).orElse(0L);
        var leaderId = d.getInfo().getLeaderId();
        return Optional.of(new ShardMetrics(shard, leaderId == null ? null : leaderId.toString(), d.getInfo().isLeader() ? 1 : 0, d.getInfo().getCurrentTerm(), commit,
                d.getInfo().getLastAppliedIndex(), Math.max(0, lag), changes));
    }
}

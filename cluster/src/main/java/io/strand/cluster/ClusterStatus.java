package io.strand.cluster;

import java.util.List;

/**
 * What one node sees of the cluster at one moment ({@code GET /v1/cluster}, {@code strand cluster
 * status}). Immutable.
 *
 * @param node   the node that answered
 * @param nodes  every member with its Raft address and whether this node reached it just now
 * @param shards every shard, as its local replica knows it, or as a replica reached over the network
 *               told it when this node holds none
 */
public record ClusterStatus(String node, List<NodeStatus> nodes, List<ShardStatus> shards) {
    /** A member: {@code up} is a TCP connect to its Raft port from this node within a short timeout. */
    public record NodeStatus(String id, String raft, boolean up) {
    }

    /**
     * One shard.
     *
     * @param leader        leader id, or null when none is known
     * @param term          current term (-1 when unknown)
     * @param commitIndex   Raft commit index (-1 when unknown)
     * @param lastApplied   last index applied by this node's replica (-1 without one)
     * @param snapshotIndex index of this node's newest snapshot of the shard (-1 without one)
     * @param replicas      ids in the shard's current Raft configuration, preferred leader first
     * @param role          this node's role: LEADER, FOLLOWER, CANDIDATE, LISTENER, or NONE (no replica here)
     * @param leaderChanges leader changes this node's replica has seen since it started
     */
    public record ShardStatus(int shard, String leader, long term, long commitIndex, long lastApplied,
                              long snapshotIndex, List<String> replicas, String role, long leaderChanges) {
        /** Apply lag of this node's replica: commitIndex - lastApplied (0 without a replica). */
        public long applyLag() {
            return lastApplied < 0 || commitIndex < 0 ? 0 : Math.max(0, commitIndex - lastApplied);
        }
    }

    public ShardStatus shard(int k) {
        return shards.get(k);
    }
}

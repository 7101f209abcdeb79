package io.strand.cluster;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * This node's Ratis clients of every shard: one for proposals, one for read indexes, made on first use
 * and replaced when they break or the shard's peers change; and one-shot admin clients. Thread-safe:
 * concurrent maps, each client built once per key.
 */
final class ShardClients implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final ClusterSpec spec;
    private final RaftProperties properties;
    /** Shard {@code k}'s peers as best known on this node. */
    private final IntFunction<List<RaftPeer>> peersOf;
    /** Shard {@code k}'s leader as this node's replica knows it, if any. */
    private final IntFunction<Optional<RaftPeerId>> localLeader;
    private final Map<Integer, RaftClient> proposals = new ConcurrentHashMap<>();
    private final Map<Integer, RaftClient> reads = new ConcurrentHashMap<>();

    ShardClients(ClusterSpec spec, IntFunction<List<RaftPeer>> peersOf, IntFunction<Optional<RaftPeerId>> localLeader) {
        this.spec = spec;
        this.properties = RatisConfig.client(spec);
        this.peersOf = peersOf;
        this.localLeader = localLeader;
    }

    /** The client that proposes to shard {@code k}'s group (writes, no-op nudges), created on first use. */
    RaftClient proposals(int k) {
        return proposals.computeIfAbsent(k, this::newClient);
    }

    /**
     * The client that asks shard {@code k}'s leader for read indexes (and {@link StalledReplicaWatch}'s
     * group-info probes), created on first use. Not the
     * proposals' client: when a peer answers "not leader", Ratis's client closes its channel to that peer
     * on the thread that then schedules the retry, and the close waits up to 3 s for the channel's open
     * calls. A read index that peer is still working on (a follower asking a leader that just died) kept
     * the proposals' channel open that long, so the retry of every write in the ordered window waited
     * with it: failovers measured 3.4–4.1 s instead of under 1 s.
     */
    RaftClient reads(int k) {
        return reads.computeIfAbsent(k, this::newClient);
    }

    private RaftClient newClient(int shard) {
        RaftClient.Builder b = RaftClient.newBuilder()
                .setRaftGroup(RaftGroup.valueOf(RaftGroupId.valueOf(ClusterSpec.groupId(shard)), peersOf.apply(shard)))
                .setProperties(properties)
                .setRetryPolicy(RatisConfig.retryPolicy(spec.requestTimeout()));
        // Without a hint Ratis starts at the first peer, the preferred leader. When that node is paused or cut
        // off (not dead: its port takes connections and never answers) each new client spent its first try
        // timing out there, so every write failed although another leader had been elected; the local
        // replica knows the current leader.
        localLeader.apply(shard).ifPresent(b::setLeaderId);
        return b.build();
    }

    /** Shard {@code k}'s peers changed: its clients are closed, the next call makes new ones for the new peers. */
    void peersChanged(int k) {
        for (Map<Integer, RaftClient> m : List.of(proposals, reads)) {
            RaftClient old = m.remove(k);
            if (old != null) {
                RaftNode.closeQuietly(old);
            }
        }
    }

    /** Drops a proposals client whose ordered window Ratis closed after a failure; the next call makes a new one. */
    void failed(int shard, RaftClient broken) {
        if (proposals.remove(shard, broken)) {
            LOG.log(System.Logger.Level.INFO, "shard " + shard + ": a new Raft client for proposals (the last one's window closed)");
            Thread.ofVirtual().name("strand-client-close").start(() -> RaftNode.closeQuietly(broken)); // waits for its channels
        }
    }

    /** A one-shot client for admin calls on {@code group}: no retry, {@code timeout} per request. */
    static RaftClient admin(RaftGroup group, Duration timeout) {
        RaftProperties p = new RaftProperties();
        org.apache.ratis.client.RaftClientConfigKeys.Rpc.setRequestTimeout(p, RatisConfig.millis(timeout));
        return RaftClient.newBuilder().setRaftGroup(group).setProperties(p).setRetryPolicy(RatisConfig.noRetry()).build();
    }

    @Override
    public void close() {
        for (Map<Integer, RaftClient> m : List.of(proposals, reads)) {
            m.values().forEach(RaftNode::closeQuietly);
            m.clear();
        }
    }
}

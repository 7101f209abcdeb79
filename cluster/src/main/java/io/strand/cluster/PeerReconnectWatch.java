package io.strand.cluster;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * Runs on the node's timer thread (one pass every {@value #PERIOD_MILLIS} ms; the reachability map is
 * its own): notices a peer of this node's replicas coming back after it was unreachable, and makes
 * Ratis drop its gRPC channel to that peer, so Raft traffic to it resumes at once. Connect probes (the
 * node probe of {@link ClusterStatusReader}) run on virtual threads, so the timer never waits on the network.
 *
 * <p>Why: Ratis keeps one gRPC channel per peer. While the peer is down, gRPC retries the
 * connection with exponential backoff (1 s, growing 1.6 times per attempt up to 2 min, not
 * configurable through Ratis), and a call on a channel in its backoff fails at once without trying.
 * Measured under {@code -Preliability} (ClusterMajorityIT, 2026-12-06): after ~45 s with a majority
 * down, writes resumed 16–21 s after the returning node listened (two runs); with this watch
 * 0.28–1.17 s (four). {@code handleException(peer, e, true)} on the server's RPC is Ratis's own way
 * to reset a peer's proxy: the next call builds a new channel.
 */
final class PeerReconnectWatch implements Runnable {
    static final long PERIOD_MILLIS = 500;
    /**
     * Unreachable at least this long before a reset: gRPC's next attempt is then seconds away, while
     * after a short outage it may already have reconnected (a reset would restart what it is sending,
     * e.g. a snapshot install).
     */
    static final long DOWN_AT_LEAST_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final RaftNode node;
    /** Peers whose last probe failed, and since when (nanoTime): the timer thread's. */
    private final Map<RaftPeerId, Long> downSince = new HashMap<>();
    /** Each probe's answer, written by its virtual thread, read (and removed) by the timer. */
    private final Map<RaftPeerId, Boolean> answers = new ConcurrentHashMap<>();
    private final Set<RaftPeerId> probing = ConcurrentHashMap.newKeySet();

    private PeerReconnectWatch(RaftNode node) {
        this.node = node;
    }

    static void start(RaftNode node, ScheduledExecutorService timers) {
        timers.scheduleWithFixedDelay(new PeerReconnectWatch(node), PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void run() {
        try {
            for (RaftPeer peer : peers().values()) {
                Boolean reachable = answers.remove(peer.getId());
                if (reachable != null) {
                    if (!reachable) {
                        downSince.putIfAbsent(peer.getId(), System.nanoTime());
                    } else {
                        Long since = downSince.remove(peer.getId());
                        if (since != null && System.nanoTime() - since >= DOWN_AT_LEAST_NANOS) {
                            reset(peer.getId());
                        }
                    }
                }
                probe(peer);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "peer reconnect watch: " + e); // the next pass tries again
        }
    }

    /** The peers of every replica on this node but itself, by id (a replaced node's successor included). */
    private Map<RaftPeerId, RaftPeer> peers() {
        Map<RaftPeerId, RaftPeer> out = new HashMap<>();
        String self = node.spec().nodeId();
        for (int k : node.localShards()) {
            for (RaftPeer p : node.peersOf(k)) {
                if (!p.getId().toString().equals(self)) {
                    out.putIfAbsent(p.getId(), p);
                }
            }
        }
        return out;
    }

    private void probe(RaftPeer peer) {
        if (!probing.add(peer.getId())) {
            return; // the last probe of this peer has not answered yet
        }
        Thread.ofVirtual().name("peer-probe-" + peer.getId()).start(() -> {
            try {
                answers.put(peer.getId(), reachable(peer));
            } finally {
                probing.remove(peer.getId());
            }
        });
    }

    private static boolean reachable(RaftPeer peer) {
        try {
            return ClusterStatusReader.reachable(ClusterSpec.Member.parse(peer.getId() + "=" + peer.getAddress()));
        } catch (IllegalArgumentException e) {
            return false; // not HOST:PORT
        }
    }

    private void reset(RaftPeerId peer) {
        LOG.log(System.Logger.Level.INFO, "node " + node.spec().nodeId() + ": peer " + peer
                + " reachable again; new Raft channel to it (the old one may be in a long reconnect backoff)");
        node.resetRaftChannel(peer);
    }
}

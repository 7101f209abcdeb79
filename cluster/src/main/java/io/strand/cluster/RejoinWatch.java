package io.strand.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;

/**
 * Watches a shard replica that {@link RaftNode} created because this node's storage lacked it (the
 * node came back with an emptied data directory) until the replica holds its first entry. Runs on
 * the node's timer thread, one check every {@value #PERIOD_MILLIS} ms; the leader probe and the
 * step-down request run on a virtual thread so timers never wait on the network. State is confined
 * to those checks, except {@code probing} (set by a check, cleared by its probe) and the step-down
 * count (the probe's).
 *
 * <p>Why: a Raft leader remembers how far each follower's log reaches (its match index) and never
 * sends it entries at or below that again. A leader that had this replica's acknowledgements before
 * its data was lost keeps sending the entries after them; the empty replica answers "inconsistent"
 * every time and never catches up while that leader stays (Ratis 3.3.0, {@code
 * LogAppenderBase.getNextIndexForInconsistency}); the replica even drops that leader between its
 * heartbeats and asks for votes in vain. When the replica's log stays empty for {@link #STUCK_AFTER}
 * after it heard from another node as leader, no snapshot is arriving, and that leader remembers this
 * replica committing entries (its commit info for this node is past the start), the watch asks it to
 * step down; the next term's leader starts from what each follower really holds (the log from its
 * start, or a snapshot install). Cost: one election of that shard. The watch ends when the replica
 * holds an entry or after {@link #GIVE_UP}.
 */
final class RejoinWatch implements Runnable {
    static final long PERIOD_MILLIS = 500;
    static final Duration STUCK_AFTER = Duration.ofSeconds(3);
    static final Duration GIVE_UP = Duration.ofMinutes(5);
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final RaftNode node;
    private final int shard;
    private final long started = System.nanoTime();
    private long emptySince = -1;
    private final AtomicInteger stepDowns = new AtomicInteger();
    /** Set on the timer thread while a probe runs on its virtual thread, cleared by that probe. */
    private volatile boolean probing;
    /** The last leader the replica knew of. */
    private RaftPeerId lastLeader;
    private volatile ScheduledFuture<?> task;

    private RejoinWatch(RaftNode node, int shard) {
        this.node = node;
        this.shard = shard;
    }

    /** Starts watching {@code shard}'s replica, just created on {@code node}. */
    static void watch(RaftNode node, int shard, ScheduledExecutorService timers) {
        RejoinWatch w = new RejoinWatch(node, shard);
        w.task = timers.scheduleWithFixedDelay(w, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void run() {
        try {
            check();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": rejoin check failed: " + e);
        }
    }

    private void check() {
        long now = System.nanoTime();
        if (now - started > GIVE_UP.toNanos()) {
            stop();
            return;
        }
        Optional<RaftServer.Division> d = node.division(shard).filter(x -> x.getInfo().isAlive());
        if (d.isEmpty()) {
            return;
        }
        if (d.get().getRaftLog().getLastEntryTermIndex() != null || d.get().getInfo().getLastAppliedIndex() >= 0) {
            stop(); // it holds an entry or a snapshot: the leader found its way
            return;
        }
        RaftPeerId current = d.get().getInfo().getLeaderId();
        if (current != null) {
            lastLeader = current; // the stuck replica keeps timing out and dropping it between heartbeats
        }
        RaftPeerId leader = lastLeader;
        if (leader == null || leader.toString().equals(node.nodeId()) || snapshotArriving()) {
            emptySince = -1;
            return;
        }
        if (emptySince < 0) {
            emptySince = now;
            return;
        }
        if (now - emptySince < STUCK_AFTER.toNanos()) {
            return;
        }
        emptySince = -1;
        if (!probing) {
            probing = true;
            Thread.ofVirtual().name("strand-rejoin-probe-" + shard).start(() -> stepDownIfRemembered(leader));
        }
    }

    /**
     * Asks {@code leader} what it last knew this replica to have committed (a group-info request on the
     * shard's read client) and asks it to step down only if that is past the start: the leader then
     * remembers entries this replica lost. A replica that never held any (the cluster's first start,
     * where a busy node's replica can wait seconds for its first append) is left to the leader, since
     * a step-down there only costs an election and feeds it no sooner. Runs on a virtual thread.
     */
    private void stepDownIfRemembered(RaftPeerId leader) {
        try {
            long remembered = StalledReplicaWatch.commitSeenBy(node, shard, leader, node.nodeId()).orElse(0);
            if (remembered <= 0) {
                LOG.log(System.Logger.Level.DEBUG, "shard " + shard + " on " + node.nodeId() + ": still empty, but leader "
                        + leader + " never saw this replica commit an entry: left to catch up");
                return;
            }
            int n = stepDowns.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "shard " + shard + " on " + node.nodeId() + ": this emptied replica got no"
                    + " entry from leader " + leader + " in " + STUCK_AFTER.toSeconds() + " s, and the leader remembers it"
                    + " committing up to " + remembered + " before its data was lost; asking " + leader + " to step down (" + n + ")");
            StalledReplicaWatch.askToStepDown(node, shard, leader);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": rejoin probe of " + leader + " failed: " + e);
        } finally {
            probing = false;
        }
    }

    private boolean snapshotArriving() {
        return StalledReplicaWatch.snapshotArriving(node, shard, STUCK_AFTER);
    }

    private void stop() {
        ScheduledFuture<?> t = task;
        if (t != null) {
            t.cancel(false);
        }
    }
}

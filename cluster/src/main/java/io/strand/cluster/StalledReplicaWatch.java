package io.strand.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * Runs on the node's timer thread (one pass every {@value #PERIOD_MILLIS} ms, its rules confined to
 * it): samples every follower replica of this node and, when {@link StalledReplicaRule} says a leader
 * stopped feeding one, asks that leader to step down. The request itself runs on a virtual thread so
 * the timer never waits on the network. Also home of the two steps {@link RejoinWatch} shares: whether
 * a snapshot is arriving, and the step-down request.
 */
final class StalledReplicaWatch implements Runnable {
    static final long PERIOD_MILLIS = 1_000;
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final RaftNode node;
    private final Map<Integer, StalledReplicaRule> rules = new HashMap<>();
    private final AtomicLong stepDowns = new AtomicLong();

    private StalledReplicaWatch(RaftNode node) {
        this.node = node;
    }

    static StalledReplicaWatch start(RaftNode node, ScheduledExecutorService timers) {
        StalledReplicaWatch w = new StalledReplicaWatch(node);
        timers.scheduleWithFixedDelay(w, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        return w;
    }

    /** Step-downs this watch asked for since start. */
    long stepDowns() {
        return stepDowns.get();
    }

    @Override
    public void run() {
        for (int shard : node.localShards()) {
            try {
                check(shard);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": stall check failed: " + e);
            }
        }
    }

    private void check(int shard) {
        StalledReplicaRule rule = rules.computeIfAbsent(shard, k -> new StalledReplicaRule());
        Optional<RaftServer.Division> d = node.division(shard).filter(x -> x.getInfo().isAlive() && x.getInfo().isFollower());
        RaftPeerId leader = d.map(x -> x.getInfo().getLeaderId()).orElse(null);
        if (d.isEmpty() || leader == null) {
            rule.stalled(System.nanoTime(), null, -1, 0, false);
            return;
        }
        TermIndex last = d.get().getRaftLog().getLastEntryTermIndex();
        long lastIndex = last == null ? -1 : last.getIndex();
        long leaderCommit = 0;
        for (CommitInfoProto info : d.get().getCommitInfos()) {
            if (RaftPeerId.valueOf(info.getServer().getId()).equals(leader)) {
                leaderCommit = info.getCommitIndex();
            }
        }
        boolean arriving = leaderCommit > lastIndex && snapshotArriving(node, shard, StalledReplicaRule.STALLED_AFTER);
        if (rule.stalled(System.nanoTime(), leader.toString(), lastIndex, leaderCommit, arriving)) {
            stepDowns.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "shard " + shard + " on " + node.nodeId() + ": leader " + leader
                    + " commits up to " + leaderCommit + " but this replica's log has stayed at " + lastIndex + " for "
                    + StalledReplicaRule.STALLED_AFTER.toSeconds() + " s (a leader that stopped feeding it; Ratis 3.3.0,"
                    + " RATIS-2605); asking " + leader + " to step down");
            askToStepDown(node, shard, leader);
        }
    }

    /** Asks {@code leader} of {@code shard} to step down, on a virtual thread; the next term's leader feeds every follower afresh. */
    static void askToStepDown(RaftNode node, int shard, RaftPeerId leader) {
        RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(ClusterSpec.groupId(shard)), node.peersOf(shard));
        Thread.ofVirtual().name("strand-step-down-" + shard).start(() -> {
            try (RaftClient admin = node.adminClient(group, Duration.ofSeconds(5))) {
                admin.admin().transferLeadership(null, leader, 3_000);
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.INFO, "shard " + shard + ": step-down of " + leader + " not done: " + e);
            }
        });
    }

    /** True while Ratis has written into this replica's snapshot install directory within {@code recent}. */
    static boolean snapshotArriving(RaftNode node, int shard, Duration recent) {
        Path tmp = node.spec().shardDir(shard).resolve("install.tmp");
        if (!Files.isDirectory(tmp)) {
            return false;
        }
        long since = System.currentTimeMillis() - recent.toMillis();
        try (Stream<Path> files = Files.walk(tmp)) {
            return files.map(Path::toFile).mapToLong(File::lastModified).anyMatch(t -> t >= since);
        } catch (IOException | java.io.UncheckedIOException e) {
            return false;
        }
    }
}

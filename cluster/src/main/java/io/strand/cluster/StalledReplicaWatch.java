package io.strand.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * Runs on the node's timer thread (one pass every {@value #PERIOD_MILLIS} ms, its rules confined to
 * it): samples every follower replica of this node and, when {@link StalledReplicaRule} says a leader
 * stopped feeding one, asks that leader to step down. A follower that the leader feeds only requests
 * it must refuse (INCONSISTENCY) never learns the leader's commit index from them, so once its log has
 * not moved for {@link #PROBE_AFTER} the watch asks the leader for it (a group-info request, at most
 * one per shard per {@link #PROBE_AFTER}; an idle shard's followers cost one such request each per
 * 5 s). Requests run on virtual threads so the timer never waits on the network. Also home of the two steps {@link RejoinWatch} shares: whether
 * a snapshot is arriving, and the step-down request.
 */
final class StalledReplicaWatch implements Runnable {
    static final long PERIOD_MILLIS = 1_000;
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final RaftNode node;
    /** Log unchanged this long: ask the leader for its commit index. */
    static final Duration PROBE_AFTER = Duration.ofSeconds(5);
    /** A probe's answer counts this long. */
    static final Duration PROBE_FRESH = Duration.ofSeconds(15);

    /** The leader's commit index as a probe heard it. */
    private record Probe(String leader, long commit, long atNanos) {
    }

    private final Map<Integer, StalledReplicaRule> rules = new HashMap<>();
    /** Per shard: the last log index seen and since when (timer thread). */
    private final Map<Integer, long[]> lastSeen = new HashMap<>();
    /** Written by probe threads, read by the timer. */
    private final Map<Integer, Probe> probes = new ConcurrentHashMap<>();
    private final Set<Integer> probing = ConcurrentHashMap.newKeySet();
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
        Optional<RaftServer.Division> d = node.division(shard)
                .filter(x -> x.getInfo().isAlive() && (x.getInfo().isFollower() || x.getInfo().isCandidate()));
        if (d.isEmpty()) {
            rule.reset();
            return;
        }
        long now = System.nanoTime();
        RaftPeerId current = d.get().getInfo().getLeaderId();
        String leader = current != null ? current.toString() : rule.leader();
        TermIndex last = d.get().getRaftLog().getLastEntryTermIndex();
        long lastIndex = last == null ? -1 : last.getIndex();
        long leaderCommit = 0;
        if (leader != null) {
            for (CommitInfoProto info : d.get().getCommitInfos()) { // carried by the leader's successful heartbeats
                if (info.getServer().getId().toStringUtf8().equals(leader)) {
                    leaderCommit = info.getCommitIndex();
                }
            }
            Probe p = probes.get(shard);
            if (p != null && p.leader().equals(leader) && now - p.atNanos() < PROBE_FRESH.toNanos()) {
                leaderCommit = Math.max(leaderCommit, p.commit());
            }
            if (unchangedFor(shard, lastIndex, now) >= PROBE_AFTER.toNanos()
                    && (p == null || now - p.atNanos() >= PROBE_AFTER.toNanos()) && probing.add(shard)) {
                probe(shard, leader); // a follower answering INCONSISTENCY never hears the leader's commit index itself
            }
        }
        boolean arriving = leaderCommit > lastIndex && snapshotArriving(node, shard, StalledReplicaRule.STALLED_AFTER);
        if (rule.stalled(now, current == null ? null : leader, lastIndex, leaderCommit, arriving)) {
            stepDowns.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "shard " + shard + " on " + node.nodeId() + ": leader " + rule.leader()
                    + " commits up to " + leaderCommit + " but this replica's log has stayed at " + lastIndex + " for "
                    + StalledReplicaRule.STALLED_AFTER.toSeconds() + " s (a leader that stopped feeding it; Ratis 3.3.0,"
                    + " RATIS-2605); asking " + rule.leader() + " to step down");
            askToStepDown(node, shard, RaftPeerId.valueOf(rule.leader()));
        }
    }

    /** Nanos since this replica's last log index was last seen to change. */
    private long unchangedFor(int shard, long lastIndex, long now) {
        long[] seen = lastSeen.computeIfAbsent(shard, k -> new long[] {lastIndex, now});
        if (seen[0] != lastIndex) {
            seen[0] = lastIndex;
            seen[1] = now;
        }
        return now - seen[1];
    }

    /**
     * Asks {@code leader} for its commit index (a group-info request, no log entry, no heartbeat round), on
     * a virtual thread, through the shard's read client: its channels stay open between probes. (A new
     * admin client per probe cost a gRPC channel set up and torn down each time, and every idle follower
     * replica is probed every {@link #PROBE_AFTER}.)
     */
    private void probe(int shard, String leader) {
        Thread.ofVirtual().name("strand-stall-probe-" + shard).start(() -> {
            try {
                commitSeenBy(node, shard, RaftPeerId.valueOf(leader), leader)
                        .ifPresent(commit -> probes.put(shard, new Probe(leader, commit, System.nanoTime())));
            } catch (IOException | RuntimeException e) {
                // no fresh figure: the rule gets none, as for a follower cut off from its leader
            } finally {
                probing.remove(shard);
            }
        });
    }

    /**
     * Asks {@code leader} of {@code shard} (a group-info request, no log entry) how far it knows {@code
     * server} to have committed: for itself its commit index, for a follower the highest that follower
     * ever reported to it. Empty if {@code leader} is not the leader or has no figure. Blocks on the network.
     */
    static OptionalLong commitSeenBy(RaftNode node, int shard, RaftPeerId leader, String server) throws IOException {
        GroupInfoReply info = node.readClient(shard).getGroupManagementApi(leader)
                .info(RaftGroupId.valueOf(ClusterSpec.groupId(shard)));
        if (info.getRoleInfoProto().getRole() != RaftPeerRole.LEADER) {
            return OptionalLong.empty();
        }
        return info.getCommitInfos().stream().filter(c -> c.getServer().getId().toStringUtf8().equals(server))
                .mapToLong(CommitInfoProto::getCommitIndex).max();
    }

    /**
     * Asks {@code leader} of {@code shard} to step down, on a virtual thread; the next term's leader feeds
     * every follower afresh. A plain step-down, not a transfer to a chosen replica: Ratis transfers only to
     * a replica of the highest priority, and while a transfer waits for its target to catch up the leader
     * refuses every write (tried: transfers to a lower-priority replica hung 8 s before failing).
     */
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

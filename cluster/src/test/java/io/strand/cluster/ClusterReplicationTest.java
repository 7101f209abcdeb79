package io.strand.cluster;

import static io.strand.cluster.TestCluster.command;
import static io.strand.cluster.TestCluster.counterOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** 3 nodes × 4 shards, every node proposing to every shard: what every replica ends up holding. */
@Timeout(60)
class ClusterReplicationTest {
    private static final int SHARDS = 4;
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    final TestCluster cluster = TestCluster.perTest(3, SHARDS);

    @Test
    void theLeadersOwnWritesAndReadBarriersShouldGoInProcessAndAFollowersThroughItsClient() {
        int shard = 1;
        String leaderId = cluster.leaderOf(shard, WAIT);
        RaftNode leader = cluster.node(leaderId);
        RaftNode follower = cluster.nodes().stream().filter(n -> !n.nodeId().equals(leaderId)).findFirst().orElseThrow();
        TestCluster.until(WAIT, () -> leaderId + " ready as leader of shard " + shard,
                () -> leader.division(shard).map(d -> d.getInfo().isLeaderReady()).orElse(false));
        long leaderBefore = leader.localRequests();
        long followerBefore = follower.localRequests();
        byte[] local = command("in-process/1");
        counterOf(leader.submit(shard, local).join(), local);
        leader.readBarrier(shard).join();
        byte[] remote = command("through-a-client/1");
        counterOf(follower.submit(shard, remote).join(), remote);
        follower.readBarrier(shard).join();
        assumeTrue(leaderId.equals(cluster.leaderOf(shard, WAIT)), "the leader changed during the test (a starved box)");
        assertTrue(leader.localRequests() >= leaderBefore + 2, "the leader's write and barrier went in-process");
        assertEquals(followerBefore, follower.localRequests(), "a follower's requests go through its client");
        cluster.awaitIdentical(shard, 2, 3, WAIT);
    }

    @Test
    void writesFromEveryNodeShouldBeCommittedIdenticallyOnAllReplicas() {
        int perNodeAndShard = 60;
        List<CompletableFuture<byte[]>> acks = new ArrayList<>();
        List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < perNodeAndShard; i++) {
            for (RaftNode node : cluster.nodes()) {
                for (int k = 0; k < SHARDS; k++) {
                    byte[] c = command(node.nodeId() + "/" + k + "/" + i);
                    sent.add(c);
                    acks.add(node.submit(k, c));
                }
            }
        }
        Set<String> counters = new HashSet<>();
        for (int i = 0; i < acks.size(); i++) {
            byte[] reply;
            try {
                reply = acks.get(i).join();
            } catch (java.util.concurrent.CompletionException e) { // 503 on a starved box: again, applied once
                String[] parts = new String(sent.get(i)).split("/");
                reply = TestCluster.submitUntilAck(cluster.node(parts[0]), Integer.parseInt(parts[1]), sent.get(i), WAIT);
            }
            long counter = counterOf(reply, sent.get(i));
            String shard = new String(sent.get(i)).split("/")[1];
            assertTrue(counters.add(shard + "#" + counter), "two commands got counter " + counter + " on shard " + shard);
        }
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 3 * perNodeAndShard, 3, WAIT);
            List<Long> stamps = cluster.replicas(k).values().iterator().next().stamps();
            for (int i = 1; i < stamps.size(); i++) {
                assertTrue(stamps.get(i) >= stamps.get(i - 1), "leader stamps went backwards on shard " + k);
            }
        }
        long entries = cluster.nodes().stream().mapToLong(n -> n.proposer().entriesProposed()).sum();
        long commands = cluster.nodes().stream().mapToLong(n -> n.proposer().commandsProposed()).sum();
        System.out.printf("group commit: %d commands in %d Raft entries (%.1f per entry)%n", commands, entries,
                (double) commands / entries);
        assertTrue(commands >= acks.size());
        assertTrue(entries < commands, "concurrent commands should share Raft entries");
        for (RaftNode n : cluster.nodes()) { // the per-shard counts (the metrics): each node sent each shard its own commands
            for (int k = 0; k < SHARDS; k++) {
                long shardCommands = n.proposer().commandsProposed(k);
                assertTrue(shardCommands >= perNodeAndShard, n.nodeId() + " proposed " + shardCommands + " commands to shard " + k);
                assertTrue(n.proposer().entriesProposed(k) > 0 && n.proposer().entriesProposed(k) <= shardCommands);
            }
        }
    }

    @Test
    void statusShouldSpreadPreferredLeadersOverTheNodes() {
        for (int k = 0; k < SHARDS; k++) {
            int shard = k;
            String preferred = cluster.node("n1").spec().replicasOf(k).getFirst().id();
            long t0 = System.nanoTime();
            TestCluster.until(WAIT, () -> "every node sees preferred leader " + preferred + " of shard " + shard,
                    () -> cluster.nodes().stream().allMatch(n -> preferred.equals(n.status().shard(shard).leader())));
            System.out.printf("shard %d: preferred leader %s after %d ms%n", k, preferred, (System.nanoTime() - t0) / 1_000_000);
        }
        ClusterStatus status = cluster.node("n2").status();
        assertEquals("n2", status.node());
        assertEquals(3, status.nodes().size());
        assertTrue(status.nodes().stream().allMatch(ClusterStatus.NodeStatus::up));
        for (ClusterStatus.ShardStatus s : status.shards()) {
            assertEquals(3, s.replicas().size());
            assertEquals(s.leader(), s.replicas().getFirst(), "the preferred leader is listed first: " + status);
            assertTrue(s.term() > 0, s.toString());
            assertEquals("FOLLOWER".equals(s.role()) || "LEADER".equals(s.role()), true, s.toString());
        }
    }

    @Test
    void readBarrierOnAFollowerShouldSeeEveryWriteAckedBeforeIt() {
        int shard = 1;
        String leader = cluster.leaderOf(shard, WAIT);
        RaftNode writer = cluster.node(leader);
        for (String id : cluster.runningIds()) {
            if (id.equals(leader)) {
                continue;
            }
            RaftNode follower = cluster.node(id);
            for (int i = 1; i <= 30; i++) {
                byte[] c = command("rb/" + id + "/" + i);
                long counter = counterOf(TestCluster.submitUntilAck(writer, shard, c, WAIT), c);
                follower.readBarrier(shard).join();
                LedgerEngine local = cluster.engines(id).current.get(shard);
                assertTrue(local.count() >= counter, "follower " + id + " has " + local.count()
                        + " commands after a read barrier, the ack said " + counter);
            }
        }
    }
}

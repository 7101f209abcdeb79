package io.strand.cluster;

import static io.strand.cluster.TestCluster.WAIT;
import static io.strand.cluster.TestCluster.command;
import static io.strand.cluster.TestCluster.counterOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Snapshots, restarts and membership on 3 nodes: every replica ends identical, nothing applied twice. */
@Timeout(120)
class ClusterRecoveryTest {
    private static final int SHARDS = 4;

    @RegisterExtension
    final TestCluster cluster = TestCluster.perTest();

    /**
     * Sends {@code entries} rounds of one command per shard, each round acked before the next (one entry
     * each). A command answered 503 (a starved box can lose a leader) is sent again until acked: the test
     * engine applies a command once, however often it lands.
     */
    private static void writeRounds(RaftNode via, String tag, int entries, int bytes) {
        byte[] pad = new byte[bytes];
        Arrays.fill(pad, (byte) 'x');
        for (int i = 0; i < entries; i++) {
            List<CompletableFuture<byte[]>> acks = new ArrayList<>();
            List<byte[]> sent = new ArrayList<>();
            for (int k = 0; k < SHARDS; k++) {
                byte[] c = command(tag + "/" + k + "/" + i + "/" + new String(pad));
                sent.add(c);
                acks.add(via.submit(k, c));
            }
            for (int k = 0; k < SHARDS; k++) {
                byte[] reply;
                try {
                    reply = acks.get(k).join();
                } catch (java.util.concurrent.CompletionException e) {
                    reply = TestCluster.submitUntilAck(via, k, sent.get(k), WAIT);
                }
                counterOf(reply, sent.get(k));
            }
        }
    }

    @Test
    void wipedFollowerShouldCatchUpBySnapshotInstallAndThenHoldIdenticalState() throws Exception {
        cluster.start(3, SHARDS, s -> s.withSnapshotEvery(10, true).withSnapshotDefer(1).withSegmentSizeMax(64 * 1024));
        writeRounds(cluster.node("n1"), "warm", 10, 16);
        cluster.killAndWipe("n3");
        writeRounds(cluster.node("n1"), "while-away", 30, 4_000); // 120 KB per shard: segments roll and get purged
        for (int k = 0; k < SHARDS; k++) {
            int shard = k;
            String leader = cluster.leaderOf(k, WAIT);
            TestCluster.until(WAIT, () -> "leader of shard " + shard + " purged its log behind a snapshot",
                    () -> cluster.node(leader).division(shard).map(d -> d.getRaftLog().getStartIndex() > 0).orElse(false));
        }
        // The cluster is idle now: the RATIS-2523 case (follower restarted with empty storage on an idle cluster).
        long restarted = System.nanoTime();
        cluster.startNode("n3");
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 40, 3, WAIT);
        }
        System.out.printf("wiped follower identical on %d shards %d ms after restart; %d snapshot installs%n", SHARDS,
                (System.nanoTime() - restarted) / 1_000_000, cluster.engines("n3").replacements.get());
        assertTrue(cluster.engines("n3").replacements.get() >= SHARDS, "every shard of n3 came from an installed snapshot");
        writeRounds(cluster.node("n3"), "after", 5, 16);
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 45, 3, WAIT);
        }
    }

    /**
     * {@link SnapshotPolicy}: the first snapshot comes at the entry interval (nothing copied yet); the
     * next waits until the log written since is as large as that snapshot's copy, far past the interval
     * and far before Ratis's own trigger (interval × defer), and it is taken by the state machine's
     * request, since Ratis's trigger cannot have fired.
     */
    @Test
    void aSnapshotShouldWaitForTheLogToOutgrowItsCopyButNotForRatissOwnTrigger() throws Exception {
        int every = 10;
        int defer = 1_000; // Ratis's trigger at 10,000 entries
        cluster.start(3, SHARDS, s -> s.withSnapshotEvery(every, false).withSnapshotDefer(defer));
        RaftNode n1 = cluster.node("n1");
        String big = "x".repeat(4_000);
        int sent = 0;
        while (sent < every) { // ~40 KB into the engine's file, which each snapshot copies
            byte[] c = command("big/" + sent++ + "/" + big);
            counterOf(TestCluster.submitUntilAck(n1, 0, c, WAIT), c);
        }
        // the state machine asks for it when the entry that makes it due is applied; Ratis takes it a moment later
        TestCluster.until(WAIT, () -> "n1's first snapshot of shard 0 after " + every + " entries (snapshot "
                        + n1.snapshotIndex(0) + ", pending " + n1.snapshotPending(0) + ", applied "
                        + n1.division(0).orElseThrow().getInfo().getLastAppliedIndex() + ")",
                () -> n1.snapshotIndex(0) >= 0 && !n1.snapshotPending(0));
        long first = n1.snapshotIndex(0);
        long applied = n1.division(0).orElseThrow().getInfo().getLastAppliedIndex();
        while (n1.snapshotIndex(0) == first) { // small entries: the log must outgrow the copy first
            byte[] c = command("small/" + sent++);
            counterOf(TestCluster.submitUntilAck(n1, 0, c, WAIT), c);
            assertTrue(sent < 2_000, "no second snapshot after " + sent + " entries");
        }
        long second = n1.snapshotIndex(0);
        System.out.printf("snapshots at index %d and %d (interval %d, Ratis trigger %d)%n", first, second, every, every * defer);
        assertTrue(second - applied > every * 10, "the second snapshot waited for the log to outgrow the copy: "
                + first + " then " + second);
        assertTrue(second < (long) every * defer, "taken on the state machine's request, not Ratis's trigger: " + second);
    }

    /**
     * Raft log segments are filled with zeros only {@link RatisConfig#PREALLOCATE} ahead of their writes, so
     * an entry larger than that extends its segment as it is written; entries of 150 KB fill 1 MiB
     * segments in a few writes each, and every replica reads them back after the whole cluster was killed
     * (no snapshot: the log alone is replayed).
     */
    @Test
    void entriesLargerThanThePreallocationStepShouldSurviveSegmentRollsAndAWholeClusterRestart() throws Exception {
        int bytes = 150_000;
        assertTrue(bytes > RatisConfig.PREALLOCATE.getSize(), "the entries outgrow the preallocation step");
        cluster.start(3, SHARDS, s -> s.withSnapshotEvery(100_000, false).withSegmentSizeMax(1 << 20));
        writeRounds(cluster.node("n1"), "large", 15, bytes); // 2.25 MB per shard: two segments closed, one open
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 15, 3, WAIT);
        }
        for (String id : cluster.runningIds()) {
            cluster.kill(id);
        }
        for (String id : List.of("n2", "n3", "n1")) {
            cluster.startNode(id);
        }
        writeRounds(cluster.node("n2"), "after", 2, bytes);
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 17, 3, WAIT);
        }
        assertEquals(0, cluster.engines("n1").openedFromSnapshot.get(), "no snapshot was taken: the log was replayed");
    }

    @Test
    void restartShouldNotApplyTwiceWhenTheLiveDirIsAheadOfTheSnapshot() throws Exception {
        cluster.start(3, SHARDS, s -> s.withSnapshotEvery(10, false).withSnapshotDefer(1));
        writeRounds(cluster.node("n1"), "a", 25, 16);
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 25, 3, WAIT);
        }
        RaftNode n2 = cluster.node("n2");
        int extra = 0;
        while (true) {
            // a snapshot the replica asked for lands a moment after the entry that made it due
            TestCluster.until(WAIT, () -> "n2's requested snapshot of shard 0 taken", () -> !n2.snapshotPending(0));
            if (n2.snapshotIndex(0) < n2.division(0).orElseThrow().getInfo().getLastAppliedIndex()) {
                break;
            }
            byte[] c = command("extra/" + extra++); // one more entry puts the live dir ahead of the snapshot
            counterOf(TestCluster.submitUntilAck(cluster.node("n1"), 0, c, WAIT), c);
            cluster.node("n2").readBarrier(0).join();
        }
        long snapshot = n2.snapshotIndex(0);
        long applied = n2.division(0).orElseThrow().getInfo().getLastAppliedIndex();
        assertTrue(snapshot > 0 && snapshot < applied, "the live dir is ahead of the snapshot: snapshot " + snapshot
                + ", applied " + applied);
        int shard0 = 25 + extra;
        cluster.kill("n2");
        cluster.startNode("n2");
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, k == 0 ? shard0 : 25, 3, WAIT);
        }
        assertTrue(cluster.engines("n2").openedFromSnapshot.get() >= 1, "n2 reopened from its snapshots");

        for (String id : cluster.runningIds()) { // the whole cluster down and up again
            cluster.kill(id);
        }
        for (String id : List.of("n3", "n1", "n2")) {
            cluster.startNode(id);
        }
        writeRounds(cluster.node("n3"), "b", 3, 16);
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, k == 0 ? shard0 + 3 : 28, 3, WAIT);
        }
    }

    @Test
    void replaceShouldMoveEveryReplicaOfADeadNodeAndKeepEveryWrite() throws Exception {
        cluster.start(3, SHARDS, s -> s.withSnapshotEvery(15, true).withSnapshotDefer(1));
        writeRounds(cluster.node("n1"), "a", 30, 64);
        cluster.kill("n3");
        cluster.startJoining("n4");
        ClusterSpec.Member n4 = cluster.member("n4");
        long t0 = System.nanoTime();
        List<Integer> moved = cluster.node("n1").replace("n3", "n4", n4.address());
        System.out.printf("replace n3 -> n4: %d shards moved in %d ms%n", moved.size(), (System.nanoTime() - t0) / 1_000_000);
        assertEquals(List.of(0, 1, 2, 3), moved);
        writeRounds(cluster.node("n2"), "b", 10, 64);
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 40, 3, WAIT);
        }
        for (ClusterStatus.ShardStatus s : cluster.node("n4").status().shards()) {
            assertTrue(s.replicas().contains("n4") && !s.replicas().contains("n3"), s.toString());
        }
        assertEquals(List.of(), cluster.node("n1").replace("n3", "n4", n4.address()), "a repeated replace moves nothing");

        cluster.kill("n1"); // another node lost: n2 and n4 are still a majority of every shard
        writeRounds(cluster.node("n4"), "c", 5, 64);
        for (int k = 0; k < SHARDS; k++) {
            cluster.awaitIdentical(k, 45, 2, WAIT);
        }
        assertFalse(cluster.runningIds().contains("n3"));
    }

    @Test
    void engineFailureShouldStopOnlyThatReplicaAndARestartShouldRebuildIt() throws Exception {
        cluster.start(3, SHARDS, s -> s.withSnapshotEvery(10, true).withSnapshotDefer(1));
        writeRounds(cluster.node("n1"), "a", 12, 16);
        cluster.awaitIdentical(0, 12, 3, WAIT);
        cluster.engines("n3").current.get(0).failNext = true;
        byte[] c = command("fails-on-n3");
        counterOf(TestCluster.submitUntilAck(cluster.node("n1"), 0, c, WAIT), c);
        TestCluster.until(WAIT, () -> "n3's replica of shard 0 stopped", () -> !cluster.node("n3").hosts(0));
        assertTrue(cluster.node("n3").machine(0).orElseThrow().failure() != null);
        assertTrue(cluster.node("n3").hosts(1), "the other shards of n3 go on");
        writeRounds(cluster.node("n2"), "b", 3, 16);
        cluster.awaitIdentical(0, 16, 2, WAIT);
        cluster.awaitIdentical(1, 15, 3, WAIT);

        cluster.kill("n3");
        cluster.startNode("n3");
        cluster.awaitIdentical(0, 16, 3, WAIT);
    }
}

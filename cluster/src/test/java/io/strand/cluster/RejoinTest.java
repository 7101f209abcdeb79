package io.strand.cluster;

import static io.strand.cluster.TestCluster.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A node that comes back with an emptied data directory and must create its shard replicas again. */
@Timeout(120)
class RejoinTest {

    @RegisterExtension
    final TestCluster cluster = TestCluster.perTest(3, 1);

    /**
     * The leader that saw n3's acknowledgements stays leader while n3 is killed, wiped and restarted:
     * it keeps sending n3 the entries after those it remembers, which n3 no longer has.
     */
    @Test
    void wipedNodeShouldCatchUpWhileTheLeaderThatKnewItStays() throws Exception {
        for (int i = 0; i < 5; i++) {
            TestCluster.submitUntilAck(cluster.node("n1"), 0, TestCluster.command("before-" + i), WAIT);
        }
        ClusterSpec n3spec = cluster.killAndWipe("n3");
        try (RaftNode n3 = RaftNode.start(n3spec, new TestCluster.Engines())) {
            TestCluster.submitUntilAck(cluster.node("n1"), 0, TestCluster.command("after"), WAIT);
            awaitCaughtUp(n3, "n3 caught up");
        }
    }

    /**
     * The first try at creating a shard's replica fails after Ratis formatted its storage (here: the
     * engine cannot open once; in the field, Ratis's start race with the leader's first request).
     * The retry must not trip over the storage directory that try left ("Failed to FORMAT: existing
     * directories found"), which kept a wiped node from starting at all.
     */
    @Test
    void startShouldCreateAReplicaAgainAfterATryThatLeftItsStorageBehind() throws Exception {
        TestCluster.submitUntilAck(cluster.node("n1"), 0, TestCluster.command("before"), WAIT);
        ClusterSpec n3spec = cluster.killAndWipe("n3");
        AtomicBoolean failNext = new AtomicBoolean(true);
        ShardEngineFactory failsOnce = (shard, liveDir) -> {
            if (failNext.getAndSet(false)) {
                throw new IOException("the engine cannot open (once)");
            }
            return new LedgerEngine(shard, liveDir);
        };
        try (RaftNode n3 = RaftNode.start(n3spec, failsOnce)) {
            TestCluster.until(WAIT, () -> "n3 holds shard 0", () -> n3.hosts(0));
            byte[] c = TestCluster.command("after");
            TestCluster.submitUntilAck(cluster.node("n1"), 0, c, WAIT);
            awaitCaughtUp(n3, "n3 applied the write after its rejoin");
            assertEquals(false, failNext.get());
        }
    }

    /** Waits until the restarted n3 has applied shard 0 through n1's commit index. */
    private void awaitCaughtUp(RaftNode n3, String what) {
        TestCluster.until(WAIT, () -> what + ": n3 " + n3.status().shard(0) + ", n1 " + cluster.node("n1").status().shard(0),
                () -> n3.status().shard(0).lastApplied() >= cluster.node("n1").status().shard(0).commitIndex());
    }
}

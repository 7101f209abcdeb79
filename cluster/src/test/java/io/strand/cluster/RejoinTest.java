package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A node that comes back with an emptied data directory and must create its shard replicas again. */
@Timeout(120)
class RejoinTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    TestCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * The leader that saw n3's acknowledgements stays leader while n3 is killed, wiped and restarted:
     * it keeps sending n3 the entries after those it remembers, which n3 no longer has.
     */
    @Test
    void wipedNodeShouldCatchUpWhileTheLeaderThatKnewItStays() throws Exception {
        cluster = TestCluster.start(dir, 3, 1, s -> s);
        for (int i = 0; i < 5; i++) {
            TestCluster.submitUntilAck(cluster.node("n1"), 0, TestCluster.command("before-" + i), WAIT);
        }
        ClusterSpec n3spec = cluster.node("n3").spec();
        cluster.kill("n3");
        cluster.wipe("n3");
        try (RaftNode n3 = RaftNode.start(n3spec, new TestCluster.Engines())) {
            TestCluster.submitUntilAck(cluster.node("n1"), 0, TestCluster.command("after"), WAIT);
            TestCluster.until(WAIT, () -> "n3 caught up: n3 " + n3.status().shard(0) + ", n1 " + cluster.node("n1").status().shard(0),
                    () -> n3.status().shard(0).lastApplied() >= cluster.node("n1").status().shard(0).commitIndex());
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
        cluster = TestCluster.start(dir, 3, 1, s -> s);
        TestCluster.submitUntilAck(cluster.node("n1"), 0, TestCluster.command("before"), WAIT);
        ClusterSpec n3spec = cluster.node("n3").spec();
        cluster.kill("n3");
        cluster.wipe("n3");
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
            TestCluster.until(WAIT, () -> "n3 applied the write after its rejoin: n3 " + n3.status().shard(0) + ", n1 "
                    + cluster.node("n1").status().shard(0),
                    () -> n3.status().shard(0).lastApplied() >= cluster.node("n1").status().shard(0).commitIndex());
            assertEquals(false, failNext.get());
        }
    }
}

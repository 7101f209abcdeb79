package io.strand.cluster;

import static io.strand.cluster.TestCluster.WAIT;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A follower that comes back after an outage long enough for its leader's appender to fail dozens of
 * times. Ratis pauses between a failing follower's requests by its appender retry policy; its default
 * pauses 5 s after 30 failures, and the follower's first INCONSISTENCY answers count as failures too, so
 * a node back from a 25 s outage waited 5 s per round trip to find where its log ends
 * ({@link RatisConfig#APPENDER_RETRY}).
 */
@Timeout(120)
class LongOutageCatchUpTest {
    private static final int OUTAGE_SECONDS = 25;

    @RegisterExtension
    final TestCluster cluster = TestCluster.perTest(3, 1);

    @Test
    void aFollowerBackFromALongOutageShouldCatchUpWithinThreeSeconds() throws Exception {
        String leader = cluster.leaderOf(0, WAIT);
        String away = leader.equals("n3") ? "n2" : "n3";
        ClusterSpec spec = cluster.node(away).spec();
        cluster.kill(away);
        cluster.awaitDead(away);
        // the outage itself (scenario time, not a wait for an event): one write a second meanwhile
        for (int i = 0; i < OUTAGE_SECONDS; i++) {
            TestCluster.submitUntilAck(cluster.node(leader), 0, TestCluster.command("while-away-" + i), WAIT);
            LockSupport.parkNanos(Duration.ofSeconds(1).toNanos());
        }
        try (RaftNode back = RaftNode.start(spec, new TestCluster.Engines())) {
            long started = System.nanoTime();
            TestCluster.submitUntilAck(cluster.node(leader), 0, TestCluster.command("after"), WAIT);
            TestCluster.until(WAIT, () -> away + " caught up: " + back.status().shard(0) + ", leader " + cluster.node(leader).status().shard(0),
                    () -> back.status().shard(0).lastApplied() >= cluster.node(leader).status().shard(0).commitIndex());
            long millis = (System.nanoTime() - started) / 1_000_000;
            System.out.println("LongOutageCatchUpTest: " + away + " back after " + OUTAGE_SECONDS + " s caught up in " + millis + " ms");
            assertTrue(millis < 3_000, away + " took " + millis + " ms to catch up after its " + OUTAGE_SECONDS + " s outage");
        }
    }
}

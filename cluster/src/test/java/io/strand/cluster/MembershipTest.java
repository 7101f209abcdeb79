package io.strand.cluster;

import static io.strand.cluster.TestCluster.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.strand.core.FreePorts;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code replace} against a new node that is slow to open its replicas (a busy box, a big doc map). */
@Timeout(120)
class MembershipTest {
    /** Longer than a status call's 2 s, which the group add on the new node used to get. */
    private static final long SLOW_OPEN_MILLIS = 3_000;

    @RegisterExtension
    final TestCluster cluster = TestCluster.perTest(3, 1);

    @Test
    void replaceShouldWaitForANewReplicaThatTakesSecondsToOpen() throws Exception {
        TestCluster.submitUntilAck(cluster.node("n1"), 0, TestCluster.command("before"), WAIT);
        cluster.kill("n3");
        ClusterSpec.Member self = new ClusterSpec.Member("n4", "127.0.0.1", FreePorts.next());
        ShardEngineFactory slow = (shard, liveDir) -> {
            try {
                Thread.sleep(SLOW_OPEN_MILLIS); // stands for opening real stores on a loaded machine
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            return new LedgerEngine(shard, liveDir);
        };
        try (RaftNode n4 = RaftNode.start(cluster.node("n1").spec().joiningAs(self, cluster.dir("n4")), slow)) {
            assertEquals(List.of(0), cluster.node("n1").replace("n3", "n4", self.address()));
            TestCluster.until(WAIT, () -> "n4 holds shard 0", () -> n4.hosts(0));
        }
    }
}

package io.strand.cluster;

import static io.strand.cluster.TestCluster.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.ratis.client.RaftClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Where a node's shard client sends its first try. */
@Timeout(120)
class ShardClientTest {

    @RegisterExtension
    final TestCluster cluster = TestCluster.perTest(3, 1);

    /**
     * The preferred leader (first peer) is gone and another node leads: a new client must start there,
     * not at the first peer, which (paused or cut off rather than dead) would swallow the first try.
     */
    @Test
    void newClientShouldStartAtTheLeaderTheLocalReplicaKnows() throws Exception {
        TestCluster.submitUntilAck(cluster.node("n2"), 0, TestCluster.command("before"), WAIT);
        cluster.kill("n1"); // shard 0's preferred leader
        RaftNode n2 = cluster.node("n2");
        TestCluster.until(WAIT, () -> "a leader of shard 0 other than n1", () -> {
            String l = n2.status().shard(0).leader();
            return l != null && !l.equals("n1");
        });
        String leader = n2.status().shard(0).leader();
        RaftClient old = n2.client(0);
        n2.clientFailed(0, old);
        assertEquals(leader, n2.client(0).getLeaderId().toString());
    }
}

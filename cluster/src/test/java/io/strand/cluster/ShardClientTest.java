package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import org.apache.ratis.client.RaftClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Where a node's shard client sends its first try. */
@Timeout(120)
class ShardClientTest {
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
     * The preferred leader (first peer) is gone and another node leads: a new client must start there,
     * not at the first peer, which (paused or cut off rather than dead) would swallow the first try.
     */
    @Test
    void newClientShouldStartAtTheLeaderTheLocalReplicaKnows() throws Exception {
        cluster = TestCluster.start(dir, 3, 1, s -> s);
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

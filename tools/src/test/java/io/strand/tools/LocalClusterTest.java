package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import org.junit.jupiter.api.Test;

/** {@link LocalCluster}: when a {@code GET /v1/cluster} answer counts as ready to time, on canned answers. */
class LocalClusterTest {
    private static JsonNode status(String n3Up, String leader0, String leader1) {
        return Json.parse(("{\"node\":\"n1\",\"nodes\":[{\"id\":\"n1\",\"up\":true},{\"id\":\"n2\",\"up\":true},{\"id\":\"n3\",\"up\":%s}],"
                + "\"shards\":[{\"shard\":0,\"leader\":%s,\"replicas\":[\"n1\",\"n2\",\"n3\"]},"
                + "{\"shard\":1,\"leader\":%s,\"replicas\":[\"n2\",\"n3\",\"n1\"]}]}").formatted(n3Up, leader0, leader1)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void missingShouldBeNullWhenEveryNodeIsUpAndEveryShardHasALeader() {
        assertNull(BenchCluster.missing(status("true", "\"n1\"", "\"n3\""), 3));
    }

    @Test
    void missingShouldNameTheLeaderlessShardsAndTheNodesDown() {
        assertEquals("no leader on shard(s) 1", BenchCluster.missing(status("true", "\"n1\"", "null"), 3));
        assertEquals("2 of 3 nodes up", BenchCluster.missing(status("false", "\"n1\"", "\"n2\""), 3));
        assertNull(BenchCluster.missing(status("false", "\"n1\"", "\"n2\""), 2), "a node killed on purpose is not waited for");
        assertEquals("no shards listed", BenchCluster.missing(Json.parse("{\"nodes\":[],\"shards\":[]}".getBytes()), 0));
    }

    @Test
    void preferredLeadShouldHoldOnlyWhenEachShardIsLedByItsFirstReplica() {
        assertTrue(BenchCluster.preferredLead(status("true", "\"n1\"", "\"n2\"")));
        assertFalse(BenchCluster.preferredLead(status("true", "\"n1\"", "\"n3\"")));
        assertFalse(BenchCluster.preferredLead(status("true", "null", "\"n2\"")));
    }
}

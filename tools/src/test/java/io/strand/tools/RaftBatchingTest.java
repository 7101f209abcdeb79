package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RaftBatchingTest {
    /** Lines as a node's /observe/metrics writes them (2026-12-06), other shards and metrics around them. */
    private static final String METRICS = """
            # HELP strand_cluster_proposed_entries Raft entries this node proposed to the shard since start
            # TYPE strand_cluster_proposed_entries gauge
            strand_cluster_proposed_entries{shard="6",} 21828.0
            strand_cluster_proposed_entries{shard="16",} 5.0
            strand_cluster_proposed_commands{shard="6",} 43448.0
            strand_cluster_proposed_commands{shard="16",} 9.0
            strand_cluster_commit_index{shard="6",} 99999.0
            """;

    @Test
    void shouldReadOnlyTheNamedShardsTwoCounters() {
        assertEquals(new RaftBatching.Count(21828, 43448), RaftBatching.parse(METRICS, 6));
        assertEquals(new RaftBatching.Count(5, 9), RaftBatching.parse(METRICS, 16), "shard 16 is not shard 6's prefix match");
        assertEquals(new RaftBatching.Count(0, 0), RaftBatching.parse(METRICS, 1), "a shard this node never proposed to");
    }

    @Test
    void aWindowsFactorShouldBeCommandsOverEntriesOfTheDifference() {
        RaftBatching.Count d = new RaftBatching.Count(27810, 55383).minus(new RaftBatching.Count(21828, 43448));
        assertEquals(new RaftBatching.Count(5982, 11935), d);
        assertEquals(1.995, d.perEntry(), 0.001);
        assertTrue(Double.isNaN(new RaftBatching.Count(0, 0).perEntry()), "no entry: no factor, not 0 or infinity");
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strand.core.DiskSpace;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerConfigTest {
    @Test
    void minFreeDiskShouldDefaultToTheGuardsReserveAndAcceptSizeSuffixes() {
        assertEquals(DiskSpace.DEFAULT_RESERVE_BYTES, ServerConfig.from(Map.of()).minFreeDisk());
        assertEquals(512L << 10, ServerConfig.from(Map.of("STRAND_MIN_FREE_DISK", "512k")).minFreeDisk());
        assertEquals(8L << 20, ServerConfig.from(Map.of("STRAND_MIN_FREE_DISK", "8M")).minFreeDisk());
        assertEquals(2L << 30, ServerConfig.from(Map.of("STRAND_MIN_FREE_DISK", "2g")).minFreeDisk());
        assertEquals(1000, ServerConfig.from(Map.of("STRAND_MIN_FREE_DISK", "1000")).minFreeDisk());
    }

    @Test
    void minFreeDiskShouldRefuseWhatIsNotASize() {
        assertThrows(IllegalArgumentException.class, () -> ServerConfig.from(Map.of("STRAND_MIN_FREE_DISK", "lots")));
        assertThrows(IllegalArgumentException.class, () -> ServerConfig.from(Map.of("STRAND_MIN_FREE_DISK", "-1")));
    }

    @Test
    void electionTimeoutShouldDefaultToTheClusterSpecsAndRefuseWhatRaftCannotUse() {
        Map<String, String> cluster = Map.of("STRAND_CLUSTER", "n1=127.0.0.1:7201", "STRAND_NODE_ID", "n1");
        assertEquals(io.strand.cluster.ClusterSpec.DEFAULT_ELECTION_TIMEOUT, ServerConfig.from(cluster).cluster().electionTimeout());
        Map<String, String> fast = new java.util.HashMap<>(cluster);
        fast.put("STRAND_ELECTION_TIMEOUT", "150ms");
        assertEquals(java.time.Duration.ofMillis(150), ServerConfig.from(fast).cluster().electionTimeout());
        fast.put("STRAND_ELECTION_TIMEOUT", "10ms");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ServerConfig.from(fast));
        assertEquals(true, e.getMessage().contains("--election-timeout"), e.getMessage());
    }

    @Test
    void wsEventLoopsShouldDefaultToOnePerCoreAndRefuseANegativeCount() {
        assertEquals(Runtime.getRuntime().availableProcessors(), ServerConfig.from(Map.of()).wsEventLoops());
        assertEquals(0, ServerConfig.from(Map.of("STRAND_WS_EVENT_LOOPS", "0")).wsEventLoops());
        assertEquals(3, ServerConfig.from(Map.of("STRAND_WS_EVENT_LOOPS", "3")).wsEventLoops());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ServerConfig.from(Map.of("STRAND_WS_EVENT_LOOPS", "-1")));
        assertEquals(true, e.getMessage().contains("--ws-event-loops"), e.getMessage());
    }

    @Test
    void wsLoopWritesShouldDefaultToTrueAndRefuseAnythingButTrueOrFalse() {
        assertEquals(true, ServerConfig.from(Map.of()).wsLoopWrites());
        assertEquals(false, ServerConfig.from(Map.of("STRAND_WS_LOOP_WRITES", "false")).wsLoopWrites());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ServerConfig.from(Map.of("STRAND_WS_LOOP_WRITES", "yes")));
        assertEquals(true, e.getMessage().contains("--ws-loop-writes"), e.getMessage());
    }
}

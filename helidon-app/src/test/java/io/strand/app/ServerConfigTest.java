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
}

package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.DiskSpace;
import io.strand.core.Durability;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class LogRegistryTest {
    @TempDir
    Path dir;
    private LogRegistry registry;

    private LogRegistry open() {
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withOpenLimits(Duration.ZERO, 1000);
        registry = new LogRegistry(config, DiskSpace.unlimited(dir), (ws, name, log) -> { });
        registry.forgetSlotsAfter(Duration.ZERO);
        return registry;
    }

    @AfterEach
    void close() {
        registry.close();
    }

    /** Creates the log {@code w/l} through the registry and lets it go. */
    private void create() {
        assertNotNull(registry.withLog("w", "l", LogSlot.Open.CREATE, log -> log, null));
    }

    /**
     * Over the cap, a reaper pass closes the least recently used logs until 7/8 of the cap are open
     * (so a stream of new logs wakes it once per eighth of the cap, not once per log), and keeps the
     * ones used last. The reaper, woken by the opens, may have run passes of its own meanwhile: no
     * pass closes more than the excess, so the count ends between 7/8 of the cap and the cap.
     */
    @Test
    void aCapPassShouldCloseTheLeastRecentlyUsedDownToSevenEighthsOfTheCap() {
        int cap = 16;
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withOpenLimits(Duration.ofHours(1), cap);
        registry = new LogRegistry(config, DiskSpace.unlimited(dir), (ws, name, log) -> { });
        for (int i = 0; i < 40; i++) {
            assertNotNull(registry.withLog("w", "l" + i, LogSlot.Open.CREATE, log -> log, null));
        }
        assertNotNull(registry.withLog("w", "l0", LogSlot.Open.CREATE, log -> log, null), "l0 used last");
        registry.closeIdle();
        int open = registry.openLogs();
        assertTrue(open >= cap - cap / 8 && open <= cap, "open logs " + open + " within [" + (cap - cap / 8) + ", " + cap + "]");
        assertNotNull(registry.withLog("w", "l0", LogSlot.Open.IF_OPEN, log -> log, null), "the log used last stays open");
        assertNotNull(registry.withLog("w", "l39", LogSlot.Open.IF_OPEN, log -> log, null), "so does the newest");
        assertNull(registry.withLog("w", "l1", LogSlot.Open.IF_OPEN, log -> log, null), "the oldest unused is closed");
    }

    @Test
    void isOpenShouldFollowTheLogAndNoLogShouldOpenOnceTheRegistryClosed() {
        open();
        assertFalse(registry.isOpen("w", "l"), "never opened");
        create();
        assertTrue(registry.isOpen("w", "l"));
        registry.closeIdle();
        assertFalse(registry.isOpen("w", "l"), "closed while idle");
        registry.close();
        StrandException refused = assertThrows(StrandException.class,
                () -> registry.withLog("w", "l", LogSlot.Open.CREATE, log -> log, null));
        assertEquals(ErrorCode.UNAVAILABLE, refused.code());
        assertEquals(0, registry.openLogs(), "a request still running after close leaves no log open");
    }

    @Test
    void forgottenSlotShouldRefuseEveryCallerWhoThenFindsTheLogsNewSlot() {
        open();
        create();
        LogSlot stale = registry.hold("w", "l"); // looked up and held, as a caller that will be late
        stale.release();
        registry.closeIdle(); // closes the idle log and forgets its unused slot
        assertEquals(0, registry.openLogs());
        assertFalse(stale.hold(), "a forgotten slot refuses to be held");
        assertFalse(stale.addWatcher(), "and to be watched");
        assertNull(stale.whenOpen(true, () -> CompletableFuture.completedFuture("ran")), "and to open its log");
        LogSlot fresh = registry.hold("w", "l");
        try {
            assertNotSame(stale, fresh);
            assertNotNull(fresh.log(LogSlot.Open.IF_EXISTS), "the log opens through the slot the registry holds");
            assertEquals(1, registry.openLogs());
        } finally {
            fresh.release();
        }
    }

    @Test
    void heldOrWatchedSlotShouldNeitherCloseItsLogNorBeForgotten() {
        open();
        create();
        LogSlot held = registry.hold("w", "l");
        try {
            held.log(LogSlot.Open.IF_EXISTS);
            registry.closeIdle();
            assertEquals(1, registry.openLogs(), "a held log is not idle");
            assertSame(held, registry.hold("w", "l"), "nor is its slot forgotten");
            held.release();
        } finally {
            held.release();
        }
        LogSlot watched = registry.watch("w", "l");
        registry.closeIdle();
        assertEquals(0, registry.openLogs(), "unheld, the log closes");
        assertSame(watched, registry.hold("w", "l"), "watched, the slot stays");
        watched.release();
        watched.removeWatcher();
        registry.closeIdle();
        assertNotSame(watched, registry.watch("w", "l"), "unwatched and closed, it was forgotten");
    }

    @Test
    void deleteShouldRemoveTheLogAndItsNameAndTellItsWatchers() {
        open();
        create();
        LogSlot watched = registry.watch("w", "l");
        long generation = watched.signal.generation();
        assertEquals(java.util.List.of("l"), registry.list("w", null, 10));
        assertTrue(registry.delete("w", "l"));
        assertTrue(watched.signal.generation() != generation, "the watcher sees the delete");
        assertEquals(java.util.List.of(), registry.list("w", null, 10));
        assertNull(registry.withLog("w", "l", LogSlot.Open.IF_EXISTS, log -> log, null));
        assertFalse(registry.delete("w", "l"), "a second delete finds nothing");
        watched.removeWatcher();
    }
}

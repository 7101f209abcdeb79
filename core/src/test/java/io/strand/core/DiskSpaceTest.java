package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskSpaceTest {
    @TempDir
    Path dir;

    private final AtomicLong free = new AtomicLong();
    private final AtomicInteger measured = new AtomicInteger();

    private DiskSpace guard(long reserve, Duration refresh) {
        return new DiskSpace(dir, reserve, refresh, () -> {
            measured.incrementAndGet();
            return free.get();
        });
    }

    @Test
    void requireShouldRefuseWithStorageFullNamingTheDirWhenTheWriteWouldEatIntoTheReserve() {
        free.set(1000);
        DiskSpace disk = guard(100, Duration.ZERO);
        disk.require(900, "append"); // leaves exactly the reserve
        StrandException e = assertThrows(StrandException.class, () -> disk.require(901, "append"));
        assertEquals(ErrorCode.STORAGE_FULL, e.code());
        assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
        assertEquals(dir.toString(), e.extras().get("dataDir"));
        assertEquals(1000L, e.extras().get("freeBytes"));
        assertEquals(100L, e.extras().get("reserveBytes"));
    }

    @Test
    void requireShouldChargeClaimsAgainstTheCachedReadingWhenNotYetRefreshed() {
        free.set(1000);
        DiskSpace disk = guard(100, Duration.ofDays(1));
        disk.require(400, "a");
        disk.require(400, "b");
        assertEquals(200, disk.available());
        assertThrows(StrandException.class, () -> disk.require(101, "c"), "claims since the reading count as written");
        assertEquals(1, measured.get(), "one statfs for all of them");
    }

    @Test
    void requireShouldSucceedAgainWhenSpaceIsFreedAndTheReadingRefreshes() {
        free.set(50);
        DiskSpace disk = guard(100, Duration.ZERO);
        assertThrows(StrandException.class, () -> disk.require(1, "append"));
        assertFalse(disk.reading().ok());
        free.set(10_000);
        disk.require(1, "append");
        assertTrue(disk.reading().ok());
    }

    @Test
    void readingShouldKeepTheLastValueAndReportTheErrorWhenFreeSpaceCannotBeRead() {
        free.set(1000);
        AtomicInteger calls = new AtomicInteger();
        DiskSpace disk = new DiskSpace(dir, 100, Duration.ZERO, () -> {
            if (calls.incrementAndGet() > 1) {
                throw new IOException("statfs failed");
            }
            return free.get();
        });
        DiskSpace.Reading r = disk.reading();
        assertEquals(1000, r.freeBytes());
        assertNotNull(r.error());
        assertFalse(r.ok());
    }

    @Test
    void outOfSpaceShouldClassifyAMappedPageFaultAndEnospcAsStorageFullAndNothingElse() {
        free.set(1 << 30);
        DiskSpace disk = guard(0, Duration.ofDays(1));
        StrandException sigbus = disk.outOfSpace(new InternalError("a fault occurred in an unsafe memory access operation"), "append");
        assertNotNull(sigbus);
        assertEquals(ErrorCode.STORAGE_FULL, sigbus.code());
        assertNotNull(disk.outOfSpace(new RuntimeException(new IOException("No space left on device")), "append"));
        assertNull(disk.outOfSpace(new IOException("Input/output error"), "append"));
        assertNull(disk.outOfSpace(new InternalError("something else"), "append"));
        assertEquals(3, measured.get(), "each classified failure makes the next claim measure again");
    }

    @Test
    void ofShouldMeasureTheFileSystemOfTheDirectoryEvenBeforeItExists() throws IOException {
        DiskSpace disk = DiskSpace.of(dir.resolve("not/yet"), 0);
        long real = Files.getFileStore(dir).getUsableSpace();
        assertTrue(Math.abs(disk.available() - real) < (1L << 30), disk.available() + " vs " + real);
    }
}

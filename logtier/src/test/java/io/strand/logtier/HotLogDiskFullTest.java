package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.strand.core.DiskSpace;
import io.strand.core.Durability;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.SmallFileSystem;
import io.strand.core.StrandException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class HotLogDiskFullTest {
    @TempDir
    Path dir;

    private static List<byte[]> entries(int n, int bytes, long tag) {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String body = "{\"t\":" + (tag + i) + ",\"pad\":\"" + "x".repeat(Math.max(0, bytes - 40)) + "\"}";
            out.add(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return out;
    }

    private static List<Entry> readAll(HotLog hot) {
        List<Entry> got = new ArrayList<>();
        long next = 1;
        while (next <= hot.lastSeq()) {
            int before = got.size();
            next = hot.reader().read(next, hot.lastSeq(), new LogReader.Limit(1000, Long.MAX_VALUE, EntrySink.of(got::add)));
            if (got.size() == before) {
                break;
            }
        }
        return got;
    }

    private static void assertDense(HotLog hot, String when) {
        List<Entry> got = readAll(hot);
        assertEquals(hot.lastSeq(), got.size(), when + ": every seq up to the head reads back");
        for (int i = 0; i < got.size(); i++) {
            assertEquals(i + 1, got.get(i).seq(), when);
            assertTrue(got.get(i).dataText().startsWith("{\"t\":"), when + ": entry " + (i + 1) + " whole");
        }
    }

    @Test
    void appendShouldBeRefusedWithStorageFullAndChangeNothingWhenTheGuardSaysTheDiskIsFull() {
        AtomicLong free = new AtomicLong(1L << 30);
        DiskSpace disk = new DiskSpace(dir, 1 << 20, Duration.ZERO, free::get);
        try (HotLog hot = HotLog.open("w", "l", dir.resolve("queue"), LogConfig.defaults(dir, Durability.OS), null, disk)) {
            hot.appender().append(1, entries(3, 100, 0), Collections.nCopies(3, null), null, 0);
            free.set(1 << 20); // exactly the reserve: nothing more fits
            StrandException e = assertThrows(StrandException.class,
                    () -> hot.appender().append(2, entries(3, 100, 3), Collections.nCopies(3, null), null, 0));
            assertEquals(ErrorCode.STORAGE_FULL, e.code());
            assertEquals(3, hot.lastSeq(), "a refused append assigns no seq");
            free.set(1L << 30); // space freed: the same queue takes appends again
            assertEquals(4, hot.appender().append(3, entries(3, 100, 3), Collections.nCopies(3, null), null, 0));
            assertDense(hot, "after the disk was freed");
        }
    }

    /**
     * With no guard in front (as if another process ate the reserve), the mapped write itself faults:
     * it must be rolled back, answered storage_full, and leave the queue appendable once space is back.
     */
    @Test
    void appendShouldRollBackAndAnswerStorageFullWhenAMappedPageCannotBeBacked() throws Exception {
        Optional<SmallFileSystem> mounted = SmallFileSystem.mount(dir.resolve("small"), 16L << 20);
        assumeTrue(mounted.isPresent(), "mounting a tmpfs is not permitted here; the guard test above covers the simulated store");
        try (SmallFileSystem fs = mounted.get()) {
            LogConfig config = LogConfig.defaults(fs.dir(), Durability.OS);
            try (HotLog hot = HotLog.open("w", "l", fs.dir().resolve("queue"), config, null, DiskSpace.unlimited(fs.dir()))) {
                hot.appender().append(1, entries(1, 100, 0), Collections.nCopies(1, null), null, 0);
                fs.fillLeaving(256 << 10);
                StrandException refused = null;
                long tag = 1;
                for (int i = 0; i < 1000 && refused == null; i++) {
                    long before = hot.lastSeq();
                    try {
                        hot.appender().append(2, entries(4, 8000, tag), Collections.nCopies(4, null), null, 0);
                        tag += 4;
                    } catch (StrandException e) {
                        refused = e;
                        assertEquals(before, hot.lastSeq(), "a failed append assigns no seq");
                    }
                }
                assertTrue(refused != null, "the small file system must fill up");
                assertEquals(ErrorCode.STORAGE_FULL, refused.code(), refused.getMessage());
                assertDense(hot, "after the fault");
                long head = hot.lastSeq();
                fs.freeBallast();
                assertEquals(head + 1, hot.appender().append(3, entries(4, 8000, tag), Collections.nCopies(4, null), null, 0));
                assertDense(hot, "after space was freed");
            }
        }
    }
}

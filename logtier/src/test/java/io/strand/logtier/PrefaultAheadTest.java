package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.strand.core.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class PrefaultAheadTest {
    private static final byte[] ENTRY = ("{\"pad\":\"" + "x".repeat(290) + "\"}").getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    /**
     * Batched appends take almost no page faults of their own: the pages each batch writes were
     * populated by one call before it (by the previous batch's look-ahead, or its own). Without it
     * every page of a batch is a fault (about 9 per 100-entry batch here). The kernel must accept
     * the calls (Linux 5.14+).
     */
    @Test
    void batchedAppendsShouldNotFaultPageByPage() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/thread-self/stat")), "needs Linux's /proc/thread-self/stat");
        int batches = 200;
        long pagesWritten = batches * 100L * (ENTRY.length + HotLog.EXCERPT_OVERHEAD_BYTES) / QueueFilePrefill.PAGE;
        long populatedBefore = PrefaultAhead.populated();
        long refusedBefore = PrefaultAhead.refused();
        try (HotLog hot = HotLog.open(dir.resolve("q"), LogConfig.defaults(dir, Durability.OS), null)) {
            append(hot, 10); // the queue's files, the appender and the first chunk's mapping: not what is counted
            long faultsBefore = minorFaults();
            append(hot, batches);
            long faults = minorFaults() - faultsBefore;
            long calls = PrefaultAhead.populated() - populatedBefore;
            System.out.printf("%d batches (about %d pages written): %d minor faults on this thread, %d populate calls accepted, %d refused%n",
                    batches, pagesWritten, faults, calls, PrefaultAhead.refused() - refusedBefore);
            assertEquals(0, PrefaultAhead.refused() - refusedBefore, "the kernel takes MADV_POPULATE_WRITE");
            assertTrue(calls > 0 && calls <= batches + 10, calls + " calls for " + (batches + 10) + " batches");
            assertTrue(faults < pagesWritten / 4, faults + " faults for about " + pagesWritten + " pages written");
            assertEquals(210 * 100L, hot.lastSeq());
        }
    }

    /** One-entry appends populate one page at a time: a small log's file holds no page cache it did not write. */
    @Test
    void smallAppendsShouldPopulateNoMoreThanTheyWrite() throws IOException {
        assumeTrue(!"tmpfs".equals(Files.getFileStore(dir).type()), "tmpfs: no page cache accounting to see");
        Path q = dir.resolve("q");
        int count = 400;
        try (HotLog hot = HotLog.open(q, LogConfig.defaults(dir, Durability.OS), null)) {
            for (int i = 0; i < count; i++) {
                hot.appender().append(System.currentTimeMillis(), java.util.List.of(ENTRY), Collections.nCopies(1, null), null, 0);
            }
            Path cycleFile;
            try (Stream<Path> files = Files.list(q)) {
                cycleFile = files.filter(f -> f.toString().endsWith(".cq4")).findFirst().orElseThrow();
            }
            long pages = ResidentPages.of(cycleFile);
            long written = count * (ENTRY.length + (long) HotLog.EXCERPT_OVERHEAD_BYTES) / QueueFilePrefill.PAGE + 1;
            System.out.printf("%d one-entry appends: %d pages of the cycle file cached, about %d written%n", count, pages, written);
            assertTrue(pages <= written + 8, pages + " pages cached for about " + written + " written");
        }
    }

    private static void append(HotLog hot, int batches) {
        for (int b = 0; b < batches; b++) {
            hot.appender().append(System.currentTimeMillis(), Collections.nCopies(100, ENTRY), Collections.nCopies(100, null), null, 0);
        }
    }

    /** This thread's minor page faults so far ({@code minflt}, field 10 of its stat line). */
    private static long minorFaults() throws IOException {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[7]);
    }
}

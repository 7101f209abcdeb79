package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.strand.core.Durability;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.MappedBytesStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class PrefaultAheadTest {
    private static final byte[] ENTRY = ("{\"pad\":\"" + "x".repeat(290) + "\"}").getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    /**
     * Batched appends find their pages mapped before they write: after each batch, the pages of the
     * chunk from the batch's end up to where the look-ahead populated are present in this process's
     * page table ({@code /proc/self/pagemap}) though nothing has written them yet, one call per
     * batch at most. (Counting this thread's page faults instead also counts the Java heap's first
     * touches, which vary from run to run; the count is printed for information.) The kernel must
     * accept the calls (Linux 5.14+).
     */
    @Test
    void batchedAppendsShouldFindThePagesAheadOfThemMapped() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/pagemap")), "needs Linux's /proc/self/pagemap");
        int batches = 200;
        long pagesWritten = batches * 100L * (ENTRY.length + HotLog.EXCERPT_OVERHEAD_BYTES) / QueueFilePrefill.PAGE;
        long populatedBefore = PrefaultAhead.populated();
        long refusedBefore = PrefaultAhead.refused();
        try (HotLog hot = HotLog.open(dir.resolve("q"), LogConfig.defaults(dir, Durability.OS), null);
             FileChannel pagemap = FileChannel.open(Path.of("/proc/self/pagemap"))) {
            append(hot, 10); // the queue's files, the appender and the first chunk's mapping: not what is counted
            long faultsBefore = minorFaults();
            long pagesAhead = 0;
            for (int b = 0; b < batches; b++) {
                append(hot, 1);
                PrefaultAhead p = hot.appender().prefault();
                MappedBytesStore chunk = (MappedBytesStore) hot.appender().advisedChunk();
                long from = (p.lastEnd() + QueueFilePrefill.PAGE - 1) & -QueueFilePrefill.PAGE;
                for (long at = from; at < p.populatedTo(); at += QueueFilePrefill.PAGE) {
                    assertTrue(present(pagemap, chunk.address + (at - chunk.start())),
                            "batch " + b + ": page at file offset " + at + " populated ahead but not mapped");
                    pagesAhead++;
                }
            }
            long faults = minorFaults() - faultsBefore;
            long calls = PrefaultAhead.populated() - populatedBefore;
            System.out.printf("%d batches (about %d pages written): %d pages found mapped ahead of the writes, %d populate calls accepted, "
                    + "%d refused, %d minor faults on this thread (heap included)%n",
                    batches, pagesWritten, pagesAhead, calls, PrefaultAhead.refused() - refusedBefore, faults);
            assertEquals(0, PrefaultAhead.refused() - refusedBefore, "the kernel takes MADV_POPULATE_WRITE");
            assertTrue(calls > 0 && calls <= batches + 10, calls + " calls for " + (batches + 10) + " batches");
            assertTrue(pagesAhead >= batches, pagesAhead + " pages mapped ahead over " + batches + " batches");
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

    /**
     * A log that has written much this cycle populates many pages per call even with one-entry
     * appends (a sixteenth of what it wrote, at most 256 KiB), instead of one call per page.
     */
    @Test
    void oneEntryAppendsToABigLogShouldPopulateManyPagesPerCall() throws IOException {
        int count = 8_000; // about 2.6 MB
        long pagesWritten = count * (ENTRY.length + (long) HotLog.EXCERPT_OVERHEAD_BYTES) / QueueFilePrefill.PAGE;
        try (HotLog hot = HotLog.open(dir.resolve("q"), LogConfig.defaults(dir, Durability.OS), null)) {
            long populatedBefore = PrefaultAhead.populated();
            assumeTrue(PrefaultAhead.refused() == 0 || populatedBefore > 0, "the kernel takes MADV_POPULATE_WRITE");
            for (int i = 0; i < count; i++) {
                hot.appender().append(System.currentTimeMillis(), java.util.List.of(ENTRY), Collections.nCopies(1, null), null, 0);
            }
            long calls = PrefaultAhead.populated() - populatedBefore;
            System.out.printf("%d one-entry appends (about %d pages written): %d populate calls%n", count, pagesWritten, calls);
            assertTrue(calls > 0 && calls < pagesWritten / 4, calls + " calls for about " + pagesWritten + " pages written");
            assertEquals(count, hot.lastSeq());
        }
    }

    private static void append(HotLog hot, int batches) {
        for (int b = 0; b < batches; b++) {
            hot.appender().append(System.currentTimeMillis(), Collections.nCopies(100, ENTRY), Collections.nCopies(100, null), null, 0);
        }
    }

    /** True when the page at virtual address {@code address} of this process is present (bit 63 of its pagemap entry). */
    private static boolean present(FileChannel pagemap, long address) throws IOException {
        ByteBuffer entry = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        pagemap.read(entry, (address / QueueFilePrefill.PAGE) * 8);
        return (entry.getLong(0) & (1L << 63)) != 0;
    }

    /** This thread's minor page faults so far ({@code minflt}, field 10 of its stat line). */
    private static long minorFaults() throws IOException {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[7]);
    }
}

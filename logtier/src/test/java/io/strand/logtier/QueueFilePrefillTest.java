package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.strand.core.Durability;
import io.strand.core.Entry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.MappedBytesStore;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(60)
class QueueFilePrefillTest {
    @TempDir
    Path dir;

    /**
     * For every roll cycle a log can be created with, the prefill is the very file Chronicle takes as
     * the new cycle file (same inode), for the first cycle and the next, and none is left behind; the
     * entries read back.
     */
    @ParameterizedTest
    @ValueSource(strings = {"secondly", "minutely", "five-minutely", "hourly", "daily"})
    void chronicleShouldTakeThePrefillAsEachNewCycleFile(String cycleName) throws IOException {
        RollCycle rollCycle = LogConfig.rollCycleNamed(cycleName);
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withRollCycle(rollCycle);
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2026-03-29T23:59:58.500Z"));
        Path q = dir.resolve("q");
        try (HotLog hot = HotLog.open(q, config, clock)) {
            for (int round = 1; round <= 2; round++) {
                int cycle = hot.queue.cycle();
                Path prefill = QueueFilePrefill.prepare(hot.queue, cycle, 0);
                assertNotNull(prefill, cycleName + " round " + round + ": a new cycle gets a prefill");
                Object inode = Files.getAttribute(prefill, "unix:ino");
                hot.appender().append(clock.currentTimeMillis(), HotLogTest.data(round, 1), Collections.nCopies(1, null), null, 0);
                Path cycleFile = q.resolve(QueueFilePrefill.cycleName(rollCycle, cycle) + ".cq4");
                assertTrue(Files.exists(cycleFile), cycleName + ": Chronicle's file is named as the prefill says: " + list(q));
                assertEquals(inode, Files.getAttribute(cycleFile, "unix:ino"), cycleName + ": the cycle file is the prefill, renamed");
                assertEquals(List.of(), leftovers(q), cycleName + ": no prefill left behind");
                assertNull(QueueFilePrefill.prepare(hot.queue, cycle, 0), "an existing cycle file gets no prefill");
                clock.advanceMillis(rollCycle.lengthInMillis());
            }
            List<Entry> got = new ArrayList<>();
            hot.reader().read(1, 2, new LogReader.Limit(10, Long.MAX_VALUE, EntrySink.of(got::add)));
            assertEquals(List.of("{\"n\":1}", "{\"n\":2}"), got.stream().map(Entry::dataText).toList());
        }
    }

    /** A prefill Chronicle did not take is deleted after the write and counted; it never becomes data. */
    @Test
    void anUntakenPrefillShouldBeDeletedAndCounted() throws IOException {
        LogConfig config = LogConfig.defaults(dir, Durability.OS);
        try (HotLog hot = HotLog.open(dir.resolve("q"), config, null)) {
            Path prefill = QueueFilePrefill.prepare(hot.queue, hot.queue.cycle() + 5, 100);
            assertNotNull(prefill);
            assertEquals(16L * hot.queue.indexCount() + 3 * QueueFilePrefill.PAGE, Files.size(prefill));
            long unused = QueueFilePrefill.unused();
            QueueFilePrefill.discardUnused(prefill);
            assertFalse(Files.exists(prefill));
            assertEquals(unused + 1, QueueFilePrefill.unused());
        }
    }

    /**
     * A new log's first append, one entry or a first batch of 100 (with its 99 paddings), for every
     * roll cycle: afterwards no more of the cycle file and of the metadata file is in the page cache
     * than the prefill put there ({@code mincore}), so none of Chronicle's touches missed the cache and
     * made the kernel read around it (which would cache at least 32 pages of each file, up to 1,280 of
     * the cycle file with an 8 MiB read-ahead); the cycle file may also hold the pages
     * {@link PrefaultAhead} populated for the next append, as many as this one wrote. The entries read back.
     */
    @ParameterizedTest
    @ValueSource(strings = {"secondly/1", "minutely/1", "five-minutely/1", "hourly/1", "daily/1", "secondly/100", "hourly/100"})
    void aNewLogsFirstAppendShouldTouchOnlyPrefilledPages(String cycleAndCount) throws IOException {
        assumeFalse("tmpfs".equals(Files.getFileStore(dir).type()), "tmpfs does not read ahead: nothing to see");
        String[] parts = cycleAndCount.split("/");
        int count = Integer.parseInt(parts[1]);
        RollCycle rollCycle = LogConfig.rollCycleNamed(parts[0]);
        LogConfig config = LogConfig.defaults(dir, Durability.OS).withRollCycle(rollCycle);
        Path q = dir.resolve("q");
        try (HotLog hot = HotLog.open(q, config, null)) {
            List<byte[]> data = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                data.add(("{\"n\":" + i + ",\"pad\":\"" + "x".repeat(280) + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            hot.appender().append(System.currentTimeMillis(), data, Collections.nCopies(count, null), null, 0);
            Path cycleFile;
            try (Stream<Path> files = Files.list(q)) {
                cycleFile = files.filter(f -> f.toString().endsWith(".cq4")).findFirst().orElseThrow();
            }
            long metadataPages = ResidentPages.of(q.resolve(QueueFilePrefill.METADATA));
            long cyclePages = ResidentPages.of(cycleFile);
            long excerptPages = (count * (300L + HotLog.EXCERPT_OVERHEAD_BYTES) + QueueFilePrefill.PAGE - 1) / QueueFilePrefill.PAGE;
            long prefilled = 1 + 2 + 2 + excerptPages;
            System.out.printf("%s: resident pages: metadata %d, cycle file %d (prefilled at most %d)%n",
                    cycleAndCount, metadataPages, cyclePages, prefilled);
            assertTrue(metadataPages >= 1 && metadataPages <= 4, "metadata file: " + metadataPages + " pages cached");
            long ahead = excerptPages + 1; // populated ahead of the next append (PrefaultAhead), never read from disk
            assertTrue(cyclePages >= 3 && cyclePages <= prefilled + ahead, "cycle file: " + cyclePages + " pages cached, prefilled "
                    + prefilled + ", populated ahead at most " + ahead);
            List<Entry> got = new ArrayList<>();
            hot.reader().read(1, count, new LogReader.Limit(count, Long.MAX_VALUE, EntrySink.of(got::add)));
            assertEquals(count, got.size());
            assertEquals(count, got.getLast().seq());
        }
    }

    /**
     * A log that grows one entry at a time past the prefilled pages caches only the pages it wrote,
     * not the 1,280 pages (5 MiB) of its mapped chunk that the kernel's read-around brought in before
     * ({@link NoReadAround}).
     */
    @Test
    void aGrowingSmallLogShouldCacheOnlyThePagesItWrote() throws IOException {
        assumeFalse("tmpfs".equals(Files.getFileStore(dir).type()), "tmpfs does not read ahead: nothing to see");
        Path q = dir.resolve("q");
        byte[] entry = ("{\"pad\":\"" + "x".repeat(290) + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int count = 400; // about 130 KiB: well past the prefilled pages
        long advisedBefore = NoReadAround.advised();
        try (HotLog hot = HotLog.open(q, LogConfig.defaults(dir, Durability.OS), null)) {
            for (int i = 0; i < count; i++) {
                hot.appender().append(System.currentTimeMillis(), List.of(entry), Collections.nCopies(1, null), null, 0);
            }
            Path cycleFile;
            try (Stream<Path> files = Files.list(q)) {
                cycleFile = files.filter(f -> f.toString().endsWith(".cq4")).findFirst().orElseThrow();
            }
            long pages = ResidentPages.of(cycleFile);
            long written = (count * (entry.length + (long) HotLog.EXCERPT_OVERHEAD_BYTES)) / QueueFilePrefill.PAGE + 1;
            System.out.printf("%d entries: %d pages of the cycle file cached, about %d written (+ 5 of header and index)%n",
                    count, pages, written);
            assertTrue(NoReadAround.advised() > advisedBefore, "the chunk was advised");
            assertTrue(pages <= written + 8, pages + " pages cached for about " + written + " written");
            assertEquals(count, hot.lastSeq());
        }
    }

    /**
     * A log that grows through three 1 MiB chunks has each chunk advised, and the advice covers
     * exactly the chunk's mapping: in {@code /proc/self/smaps} the mapping that starts at the chunk's
     * address ends where {@link NoReadAround#length} says and carries the random-read flag
     * ({@code rr}), and no mapping of anything but a cycle file carries it.
     */
    @Test
    void eachChunkShouldBeAdvisedOverItsMappingAlone() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "needs Linux's /proc/self/smaps");
        LogConfig d = LogConfig.defaults(dir, Durability.OS);
        // 1 MiB chunks: limits small enough that a batch's excerpt fits a quarter of one
        LogConfig small = new LogConfig(d.dataDir(), d.durability(), d.rollCycle(), 1 << 20, d.idleClose(), d.maxOpenLogs(),
                64 << 10, 10, 64 << 10, d.hot());
        byte[] entry = ("{\"pad\":\"" + "x".repeat(290) + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        long advisedBefore = NoReadAround.advised();
        try (HotLog hot = HotLog.open(dir.resolve("q"), small, null)) {
            for (int batch = 0; batch < 100; batch++) { // 100 x 100 entries: about 3 MiB, into the third chunk
                hot.appender().append(System.currentTimeMillis(), Collections.nCopies(100, entry), Collections.nCopies(100, null), null, 0);
            }
            MappedBytesStore chunk = (MappedBytesStore) hot.appender().advisedChunk();
            long start = chunk.address;
            long end = start + NoReadAround.length(chunk);
            String found = null;
            long foundEnd = 0;
            boolean random = false;
            List<String> others = new ArrayList<>();
            String mapping = "";
            for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
                if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                    mapping = line;
                    String[] range = line.split(" ")[0].split("-");
                    if (Long.parseUnsignedLong(range[0], 16) == start) {
                        found = line;
                        foundEnd = Long.parseUnsignedLong(range[1], 16);
                    }
                } else if (line.startsWith("VmFlags:") && (" " + line.substring(8) + " ").contains(" rr ")) {
                    random |= mapping.equals(found);
                    if (!mapping.endsWith(".cq4")) {
                        others.add(mapping);
                    }
                }
            }
            System.out.printf("chunks advised: %d; the last chunk's mapping: %s (advised %x-%x)%n",
                    NoReadAround.advised() - advisedBefore, found, start, end);
            assertTrue(NoReadAround.advised() - advisedBefore >= 3, "each chunk is advised");
            assertNotNull(found, "a mapping starts at the chunk's address");
            assertEquals(end, foundEnd, "NoReadAround.length is the chunk's mapping, no more, no less: " + found);
            assertTrue(random, "the chunk's mapping carries the random-read flag: " + found);
            assertEquals(List.of(), others, "only cycle files' chunks carry the advice");
            assertEquals(10_000, hot.lastSeq());
        }
    }

    private static List<Path> leftovers(Path q) throws IOException {
        try (Stream<Path> files = Files.list(q)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".precreated")).toList();
        }
    }

    private static List<String> list(Path q) throws IOException {
        try (Stream<Path> files = Files.list(q)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }
}

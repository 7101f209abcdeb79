package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(60)
class CycleFilePrefillTest {
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
                Path prefill = CycleFilePrefill.prepare(hot.queue, cycle);
                assertNotNull(prefill, cycleName + " round " + round + ": a new cycle gets a prefill");
                Object inode = Files.getAttribute(prefill, "unix:ino");
                hot.appender().append(clock.currentTimeMillis(), HotLogTest.data(round, 1), Collections.nCopies(1, null), null, 0);
                Path cycleFile = q.resolve(CycleFilePrefill.cycleName(rollCycle, cycle) + ".cq4");
                assertTrue(Files.exists(cycleFile), cycleName + ": Chronicle's file is named as the prefill says: " + list(q));
                assertEquals(inode, Files.getAttribute(cycleFile, "unix:ino"), cycleName + ": the cycle file is the prefill, renamed");
                assertEquals(List.of(), leftovers(q), cycleName + ": no prefill left behind");
                assertNull(CycleFilePrefill.prepare(hot.queue, cycle), "an existing cycle file gets no prefill");
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
            Path prefill = CycleFilePrefill.prepare(hot.queue, hot.queue.cycle() + 5);
            assertNotNull(prefill);
            assertEquals(CycleFilePrefill.BYTES, Files.size(prefill));
            long unused = CycleFilePrefill.unused();
            CycleFilePrefill.discardUnused(prefill);
            assertFalse(Files.exists(prefill));
            assertEquals(unused + 1, CycleFilePrefill.unused());
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

package io.strand.core;

import static io.strand.core.WalFixture.TYPE;
import static io.strand.core.WalFixture.endOfRecords;
import static io.strand.core.WalFixture.recycled;
import static io.strand.core.WalFixture.replayAll;
import static io.strand.core.WalFixture.segmentWithRecords;
import static io.strand.core.WalFixture.segments;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The write-ahead log as a whole: replay after a crash, checkpoints, recycling, a full disk, its agents. */
@Timeout(60)
class WriteAheadLogTest {
    @TempDir
    Path dir;

    /** Writers whose turns log "owner:n" records; left open, as a killed process leaves them. */
    private Writers crashedWritersThatLogged(long firstSegment, int perOwner, List<String> owners) {
        return crashedWritersThatLogged(new WriteAheadLog(dir, firstSegment), perOwner, owners);
    }

    private Writers crashedWritersThatLogged(WriteAheadLog wal, int perOwner, List<String> owners) {
        Writers writers = new Writers("t", 2, Durability.FSYNC, 64, wal, n -> { });
        List<CompletableFuture<?>> acks = new ArrayList<>();
        for (int i = 0; i < perOwner; i++) {
            for (String owner : owners) {
                String record = owner + ":" + i;
                acks.add(writers.submit(owner, c -> {
                    c.log(TYPE, record.getBytes(StandardCharsets.UTF_8));
                    return null;
                }));
            }
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
        wal.awaitSpares(); // a killed process would not create one after the next start listed the directory
        return writers;
    }

    @Test
    void acknowledgedRecordsShouldBeReplayedInOrderPerOwnerAfterACrash() throws IOException {
        crashedWritersThatLogged(1 << 20, 500, List.of("a", "b", "c"));
        List<String> seen = replayAll(dir);
        assertEquals(1500, seen.size());
        for (String owner : List.of("a", "b", "c")) {
            List<String> mine = seen.stream().filter(s -> s.startsWith(owner + ":")).toList();
            for (int i = 0; i < 500; i++) {
                assertEquals(owner + ":" + i, mine.get(i));
            }
        }
        assertEquals(List.of(), segments(dir), "recovery checkpoints and deletes what it replayed");
        assertEquals(List.of(), replayAll(dir), "a second start has nothing to replay");
    }

    @Test
    void fullSegmentsShouldBeCheckpointedAwayLeavingTheNewestRecordsOfEachOwner() throws IOException {
        crashedWritersThatLogged(4096, 500, List.of("a", "b", "c"));
        // Full segments are checkpointed in the background, until each lane keeps only its current segment and its spare.
        // (Not "until a free segment shows": a spare may take the last one first, and the wait then never ended.)
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (segments(dir).size() > 4 && System.nanoTime() < deadline) { // 2 lanes × (current + spare)
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        List<String> seen = replayAll(dir);
        assertTrue(seen.size() < 1500, "4 KiB segments must have filled and been checkpointed: " + seen.size());
        for (String owner : List.of("a", "b", "c")) {
            List<String> mine = seen.stream().filter(s -> s.startsWith(owner + ":")).toList();
            assertTrue(!mine.isEmpty(), "the current segment of " + owner + "'s lane is never checkpointed away");
            int first = 500 - mine.size();
            for (int i = 0; i < mine.size(); i++) {
                assertEquals(owner + ":" + (first + i), mine.get(i), "replay is a gapless suffix of what " + owner + " logged");
            }
        }
    }

    @Test
    void replayAfterACrashShouldBeBoundedByCheckpointRecordsNotBySegmentSize() throws IOException {
        int checkpointRecords = 100;
        crashedWritersThatLogged(new WriteAheadLog(dir, 16L << 20, checkpointRecords), 1000, List.of("a", "b", "c"));
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (segments(dir).size() > 4 && System.nanoTime() < deadline) { // 2 lanes × (current + prepared next)
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // checkpoints run in the background
        }
        List<String> seen = replayAll(dir);
        assertTrue(seen.size() <= 2 * checkpointRecords, "2 lanes × " + checkpointRecords + " records at most, replayed " + seen.size());
        for (String owner : List.of("a", "b", "c")) {
            List<String> mine = seen.stream().filter(s -> s.startsWith(owner + ":")).toList();
            int first = 1000 - mine.size();
            for (int i = 0; i < mine.size(); i++) {
                assertEquals(owner + ":" + (first + i), mine.get(i), "replay is a gapless suffix of what " + owner + " logged");
            }
        }
    }

    @Test
    void aCleanCloseShouldLeaveNothingToReplay() throws IOException {
        crashedWritersThatLogged(4096, 100, List.of("a")).close();
        assertEquals(List.of(), segments(dir));
        assertEquals(List.of(), replayAll(dir));
    }

    @Test
    void aTornRecordShouldEndTheSegmentWithoutFailingTheStart() throws IOException {
        crashedWritersThatLogged(1 << 20, 10, List.of("a"));
        Path segment = segmentWithRecords(dir);
        long end = endOfRecords(segment);
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            // a group header whose records never made it: length and CRC, then zeros
            ch.write(ByteBuffer.allocate(8).putInt(0, 40).putInt(4, 12345), end);
        }
        List<String> seen = replayAll(dir);
        assertEquals(10, seen.size());
        assertEquals("a:9", seen.getLast());
    }

    @Test
    void recordsShouldSurviveByteForByte() {
        Writers writers = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir, 4096), n -> { });
        byte[] big = new byte[20_000]; // larger than any segment: gets a segment of its own
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        writers.submit("a", c -> {
            c.log(TYPE, big);
            return null;
        }).join();
        List<byte[]> seen = new ArrayList<>();
        WriteAheadLog wal = new WriteAheadLog(dir);
        wal.register(TYPE, payload -> {
            seen.add(WalRecordType.rest(payload));
            return CompletableFuture.completedFuture(null);
        });
        wal.recover();
        assertEquals(1, seen.size());
        assertArrayEquals(big, seen.getFirst());
    }

    /** A recycled segment still holds its earlier groups: none of them may come back as records. */
    @Test
    void recycledSegmentsShouldNeverReplayTheirEarlierRecords() throws IOException {
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir, 4096), n -> { })) {
            for (int i = 0; i < 400; i++) { // ~10 segments' worth: segments fill, are checkpointed and reused
                String record = "old:" + i;
                writers.submit("a", c -> {
                    c.log(TYPE, record.getBytes(StandardCharsets.UTF_8));
                    return null;
                }).join();
            }
        }
        assertTrue(!recycled(dir).isEmpty(), "a clean close recycles its segments");
        Writers crashed = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir, 4096), n -> { });
        crashed.submit("a", c -> {
            c.log(TYPE, "new".getBytes(StandardCharsets.UTF_8));
            return null;
        }).join();
        assertEquals(List.of("new"), replayAll(dir));
    }

    @Test
    void groupsShouldBeRefusedWithStorageFullBeforeAnyTurnRunsWhenNoSegmentFitsAndSucceedOnceSpaceIsFreed() {
        java.util.concurrent.atomic.AtomicLong free = new java.util.concurrent.atomic.AtomicLong(100); // not one 4 KiB segment
        DiskSpace disk = new DiskSpace(dir, 0, java.time.Duration.ZERO, free::get);
        List<String> acked = new ArrayList<>();
        java.util.concurrent.atomic.AtomicInteger turnsRun = new java.util.concurrent.atomic.AtomicInteger();
        Writers writers = new Writers("t", 1, Durability.FSYNC, 1, new WriteAheadLog(dir, 4096, disk), n -> { }); // left open, as a crash leaves it
        {
            for (int i = 0; i < 200; i++) {
                if (i == 20) {
                    free.set(1L << 30); // space is freed: no restart
                }
                String record = "r" + i + "-" + "x".repeat(200);
                try {
                    writers.submit("a", c -> {
                        turnsRun.incrementAndGet();
                        c.log(TYPE, record.getBytes(StandardCharsets.UTF_8));
                        return null;
                    }).join();
                    assertTrue(i >= 20, "acknowledged while the disk was full: " + i);
                    acked.add(record);
                } catch (CompletionException e) {
                    StrandException se = (StrandException) e.getCause();
                    assertEquals(ErrorCode.STORAGE_FULL, se.code(), se.getMessage());
                    assertTrue(i < 20, "refused after space was freed: " + i);
                }
                assertTrue(writers.failure().isEmpty(), "a refused group wrote nothing: the lane must not be poisoned");
            }
            assertEquals(acked.size(), turnsRun.get(), "no turn of a refused group ran");
        }
        assertEquals(180, acked.size());
        List<String> replayed = replayAll(dir);
        assertTrue(!replayed.isEmpty() && acked.subList(acked.size() - replayed.size(), acked.size()).equals(replayed),
                "what was not checkpointed yet is the tail of the acknowledged records, nothing refused: " + replayed.size() + " replayed");
    }

    @Test
    void aSpareSegmentThatCouldNotBePreparedInTheBackgroundShouldBeRetriedBeforeTheNextGroupNotPoisonTheLane() {
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean freed = new java.util.concurrent.atomic.AtomicBoolean();
        // the guard's first reading and the first segment see space; the background spare and later ones do not, until freed
        DiskSpace disk = new DiskSpace(dir, 0, java.time.Duration.ZERO,
                () -> reads.incrementAndGet() <= 2 || freed.get() ? 1L << 30 : 100);
        Writers writers = new Writers("t", 1, Durability.FSYNC, 1, new WriteAheadLog(dir, 4096, disk), n -> { });
        try {
            int acked = 0;
            int refused = 0;
            for (int i = 0; i < 60; i++) {
                if (i == 40) {
                    freed.set(true);
                }
                byte[] record = ("r" + i + "-" + "x".repeat(200)).getBytes(StandardCharsets.UTF_8);
                try {
                    writers.submit("a", c -> {
                        c.log(TYPE, record);
                        return null;
                    }).join();
                    assertTrue(refused == 0 || i >= 40, "acknowledged after the spare could not be made, while still full: " + i);
                    acked++;
                } catch (CompletionException e) {
                    assertEquals(ErrorCode.STORAGE_FULL, ((StrandException) e.getCause()).code(), e.getCause().getMessage());
                    refused++;
                }
                assertTrue(writers.failure().isEmpty(), "refused before any turn ran: the lane is not poisoned (" + i + ")");
            }
            assertTrue(acked >= 20 + 10 && refused > 0, acked + " acknowledged, " + refused + " refused");
        } finally {
            writers.close();
        }
    }

    /** Its two background jobs run on two agents with their own names, and stop with it. */
    @Test
    void aLogShouldRunItsPoolAndCheckpointerOnTwoDifferentlyNamedAgentsThatStopOnClose() {
        List<Agent> before = Agent.all();
        WriteAheadLog wal = new WriteAheadLog(dir, 4096);
        List<String> mine = Agent.all().stream().filter(a -> !before.contains(a)).map(Agent::name).sorted().toList();
        assertEquals(List.of("wal-checkpointer", "wal-segment-pool"), mine);
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 64, wal, n -> { })) {
            for (int i = 0; i < 100; i++) { // ~3 segments of 4 KiB: the pool prepares spares, the checkpointer takes full ones
                writers.submit("a", c -> {
                    c.log(TYPE, "x".repeat(100).getBytes(StandardCharsets.UTF_8));
                    return null;
                }).join();
            }
        }
        List<Agent> left = Agent.all().stream().filter(a -> !before.contains(a)).toList();
        assertEquals(List.of(), left, "closing the log stops its agents");
    }
}

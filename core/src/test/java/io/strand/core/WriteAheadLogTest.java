package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class WriteAheadLogTest {
    private static final byte TYPE = 7;
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
        return writers;
    }

    private List<String> replayAll() {
        List<String> seen = new ArrayList<>();
        WriteAheadLog wal = new WriteAheadLog(dir);
        wal.register(TYPE, payload -> {
            seen.add(StandardCharsets.UTF_8.decode(payload).toString());
            return CompletableFuture.completedFuture(null);
        });
        wal.recover();
        return seen;
    }

    private List<Path> recycled() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("free-")).toList();
        }
    }

    private List<Path> segments() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".wal") && !p.getFileName().toString().startsWith("free-")).toList();
        }
    }

    @Test
    void acknowledgedRecordsShouldBeReplayedInOrderPerOwnerAfterACrash() throws IOException {
        crashedWritersThatLogged(1 << 20, 500, List.of("a", "b", "c"));
        List<String> seen = replayAll();
        assertEquals(1500, seen.size());
        for (String owner : List.of("a", "b", "c")) {
            List<String> mine = seen.stream().filter(s -> s.startsWith(owner + ":")).toList();
            for (int i = 0; i < 500; i++) {
                assertEquals(owner + ":" + i, mine.get(i));
            }
        }
        assertEquals(List.of(), segments(), "recovery checkpoints and deletes what it replayed");
        assertEquals(List.of(), replayAll(), "a second start has nothing to replay");
    }

    @Test
    void fullSegmentsShouldBeCheckpointedAwayLeavingTheNewestRecordsOfEachOwner() throws IOException {
        crashedWritersThatLogged(4096, 500, List.of("a", "b", "c"));
        while (recycled().isEmpty()) { // full segments are checkpointed in the background; the class timeout bounds this
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        List<String> seen = replayAll();
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

    /**
     * A crash leaves at most about {@code checkpointRecords} records per lane to replay, however many
     * a 16 MiB segment could hold: replay time must not grow with what was written since the last
     * segment filled (first restart after creating 5,000 logs replayed 67,258 records, 32 s).
     */
    @Test
    void replayAfterACrashShouldBeBoundedByCheckpointRecordsNotBySegmentSize() throws IOException {
        int checkpointRecords = 100;
        crashedWritersThatLogged(new WriteAheadLog(dir, 16L << 20, checkpointRecords), 1000, List.of("a", "b", "c"));
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (segments().size() > 4 && System.nanoTime() < deadline) { // 2 lanes × (current + prepared next)
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // checkpoints run in the background
        }
        List<String> seen = replayAll();
        assertTrue(seen.size() <= 2 * checkpointRecords, "2 lanes × " + checkpointRecords + " records at most, replayed " + seen.size());
        for (String owner : List.of("a", "b", "c")) {
            List<String> mine = seen.stream().filter(s -> s.startsWith(owner + ":")).toList();
            int first = 1000 - mine.size();
            for (int i = 0; i < mine.size(); i++) {
                assertEquals(owner + ":" + (first + i), mine.get(i), "replay is a gapless suffix of what " + owner + " logged");
            }
        }
    }

    /** Groups of many turns from many threads: hooks and acks come in the order the turns ran. */
    @Test
    void acksShouldCompleteInTheOrderTurnsRan() throws Exception {
        List<Integer> ran = new ArrayList<>();
        List<Integer> acked = new ArrayList<>();
        List<CompletableFuture<?>> acks = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { })) {
            List<Thread> clients = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger ids = new java.util.concurrent.atomic.AtomicInteger();
            for (int c = 0; c < 4; c++) {
                clients.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 1000; i++) {
                        int id = ids.incrementAndGet();
                        CompletableFuture<Integer> ack = writers.submit("a", commit -> {
                            ran.add(id); // writer thread only
                            commit.log(TYPE, new byte[] {(byte) id});
                            commit.afterDurable(() -> acked.add(id)); // writer thread, just before the ack
                            return id;
                        });
                        acks.add(ack);
                    }
                }));
            }
            for (Thread t : clients) {
                t.join();
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
            assertEquals(4000, ran.size());
            assertEquals(ran, acked);
        }
    }

    /**
     * A write-ahead write that fails (here: the channel closed under it by an interrupt) leaves its
     * group's turns applied in memory but not durable: each is answered {@code outcome_unknown},
     * retryable. Every later write is refused without running (so a refusal changed nothing), and
     * the failure is reported.
     */
    @Test
    void aFailedWriteShouldAnswerOutcomeUnknownAndRefuseEveryLaterWriteWithoutRunningIt() {
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { })) {
            writers.submit("a", c -> {
                c.log(TYPE, new byte[] {1});
                return null;
            }).join();
            assertEquals(java.util.Optional.empty(), writers.failure());
            CompletableFuture<Object> broken = writers.submit("a", c -> {
                c.log(TYPE, new byte[] {2});
                Thread.currentThread().interrupt(); // the write that follows finds its channel closed
                return null;
            });
            CompletionException e = assertThrows(CompletionException.class, broken::join);
            StrandException unknown = (StrandException) e.getCause();
            assertEquals(ErrorCode.OUTCOME_UNKNOWN, unknown.code());
            assertEquals(true, unknown.extras().get("retryable"));
            assertTrue(unknown.getMessage().contains("producerId/producerSeq"), unknown.getMessage());
            java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
            CompletableFuture<Object> later = writers.submit("a", c -> {
                ran.set(true);
                c.log(TYPE, new byte[] {3});
                return null;
            });
            CompletionException refused = assertThrows(CompletionException.class, later::join,
                    "a later group built on the lost one is never acknowledged");
            assertEquals(ErrorCode.UNAVAILABLE, ((StrandException) refused.getCause()).code());
            assertEquals(true, ((StrandException) refused.getCause()).extras().get("retryable"));
            assertFalse(ran.get(), "a refused write never ran, so it changed nothing");
            assertTrue(writers.failure().orElseThrow().startsWith("t-writer-0: the write may or may not have been applied"),
                    writers.failure().orElseThrow());
        }
    }

    /** A turn that throws after logging and registering a hook: neither its record nor its hook survives. */
    @Test
    void aFailedTurnShouldLeaveNeitherRecordsNorHooks() throws IOException {
        List<String> hooks = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { })) {
            CompletableFuture<Object> failed = writers.submit("a", c -> {
                c.log(TYPE, "failed".getBytes(StandardCharsets.UTF_8));
                c.afterDurable(() -> hooks.add("failed"));
                throw new IllegalStateException("refused after its changes were staged");
            });
            CompletableFuture<Object> ok = writers.submit("a", c -> {
                c.log(TYPE, "ok".getBytes(StandardCharsets.UTF_8));
                c.afterDurable(() -> hooks.add("ok"));
                return null;
            });
            assertThrows(CompletionException.class, failed::join);
            ok.join();
        }
        assertEquals(List.of("ok"), hooks);
    }

    @Test
    void aCleanCloseShouldLeaveNothingToReplay() throws IOException {
        crashedWritersThatLogged(4096, 100, List.of("a")).close();
        assertEquals(List.of(), segments());
        assertEquals(List.of(), replayAll());
    }

    @Test
    void aTurnThatFailsShouldLogNothing() {
        Writers writers = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir), n -> { });
        CompletableFuture<Object> bad = writers.submit("a", c -> {
            c.log(TYPE, "half".getBytes(StandardCharsets.UTF_8));
            throw new IllegalStateException("validation failed after logging");
        });
        CompletableFuture<Object> good = writers.submit("a", c -> {
            c.log(TYPE, "whole".getBytes(StandardCharsets.UTF_8));
            return null;
        });
        assertThrows(CompletionException.class, bad::join);
        good.join();
        assertEquals(List.of("whole"), replayAll());
    }

    @Test
    void aTornRecordShouldEndTheSegmentWithoutFailingTheStart() throws IOException {
        crashedWritersThatLogged(1 << 20, 10, List.of("a"));
        Path segment = segments().stream().filter(p -> WriteAheadLog.read(p, (t, b) -> { }) > 0).findFirst().orElseThrow();
        long end = endOfRecords(segment);
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            // a group header whose records never made it: length and CRC, then zeros
            ch.write(ByteBuffer.allocate(8).putInt(0, 40).putInt(4, 12345), end);
        }
        List<String> seen = replayAll();
        assertEquals(10, seen.size());
        assertEquals("a:9", seen.getLast());
    }

    /** Writers that logged {@code n} records "a:i", each acknowledged before the next: one group each. */
    private Path crashedWithOneGroupPerRecord(int n) throws IOException {
        Writers writers = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir, 1 << 20), x -> { });
        for (int i = 0; i < n; i++) {
            String record = "a:" + i + "-" + "p".repeat(20);
            writers.submit("a", c -> {
                c.log(TYPE, record.getBytes(StandardCharsets.UTF_8));
                return null;
            }).join();
        }
        return segments().stream().filter(p -> WriteAheadLog.read(p, (t, b) -> { }) > 0).findFirst().orElseThrow();
    }

    /** The offsets of every group of {@code segment}, in order. */
    private static List<Integer> groups(Path segment) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(segment));
        List<Integer> at = new ArrayList<>();
        for (int g = WriteAheadLog.SEGMENT_HEADER_BYTES; bytes.getInt(g) > 0; g += WriteAheadLog.GROUP_HEADER_BYTES + bytes.getInt(g)) {
            at.add(g);
        }
        return at;
    }

    private static void flip(Path file, long offset, int bits) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            ch.write(ByteBuffer.allocate(1).put(0, (byte) (b.get(0) ^ bits)), offset);
        }
    }

    /** A bit rotted inside a group that later groups of the same segment follow: never a torn tail. */
    @Test
    void aFlippedByteFollowedByValidGroupsShouldRefuseTheStartNamingSegmentAndOffset() throws IOException {
        Path segment = crashedWithOneGroupPerRecord(10);
        List<Integer> groups = groups(segment);
        assertEquals(10, groups.size());
        long seed = System.nanoTime();
        java.util.Random random = new java.util.Random(seed);
        int victim = random.nextInt(9); // never the last group: valid groups follow
        int length = ByteBuffer.wrap(Files.readAllBytes(segment)).getInt(groups.get(victim));
        long offset = groups.get(victim) + WriteAheadLog.GROUP_HEADER_BYTES + random.nextInt(length);
        System.out.println("WriteAheadLogTest seed " + seed + ": flipped a bit of group " + victim + " at " + offset);
        flip(segment, offset, 1 << random.nextInt(8));
        List<String> seen = new ArrayList<>();
        StrandException e = assertThrows(StrandException.class, () -> seen.addAll(replayAll()));
        assertEquals(ErrorCode.CORRUPT, e.code());
        assertTrue(e.getMessage().contains(segment.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("offset " + groups.get(victim)), e.getMessage());
        assertEquals(List.of(), seen, "nothing replayed before the corruption was found");
        assertTrue(Files.exists(segment), "the damaged segment is kept, not checkpointed away");
    }

    /** The flip hits a group's length: the reader cannot step over it, and must still find what follows. */
    @Test
    void aFlippedGroupLengthFollowedByValidGroupsShouldRefuseTheStart() throws IOException {
        Path segment = crashedWithOneGroupPerRecord(10);
        int victim = groups(segment).get(4);
        flip(segment, victim + 3, 0x40); // the length's low byte: a length that lands inside the next group
        StrandException e = assertThrows(StrandException.class, this::replayAll);
        assertEquals(ErrorCode.CORRUPT, e.code());
        assertTrue(e.getMessage().contains("offset " + victim), e.getMessage());
        flip(segment, victim + 3, 0x40);
        flip(segment, victim, 0x80); // a negative length
        e = assertThrows(StrandException.class, this::replayAll);
        assertTrue(e.getMessage().contains("offset " + victim), e.getMessage());
    }

    /** After the last good group: random bytes (a group torn mid-write over a recycled file's old data), nothing valid. */
    @Test
    void garbageAfterTheLastGoodGroupShouldBeATornTailNotCorruption() throws IOException {
        Path segment = crashedWithOneGroupPerRecord(10);
        long end = endOfRecords(segment);
        long seed = System.nanoTime();
        System.out.println("WriteAheadLogTest garbage seed " + seed);
        byte[] garbage = new byte[3000];
        new java.util.Random(seed).nextBytes(garbage);
        ByteBuffer torn = ByteBuffer.wrap(garbage).putInt(0, 200); // a plausible group length, a wrong CRC
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            ch.write(torn, end);
        }
        List<String> seen = replayAll();
        assertEquals(10, seen.size());
        assertEquals("a:9-" + "p".repeat(20), seen.getLast());
    }

    /** A flip in the last group cannot be told from a torn write: that group is dropped, the start goes on. */
    @Test
    void aFlipInTheLastGroupShouldEndTheSegmentLikeATornTail() throws IOException {
        Path segment = crashedWithOneGroupPerRecord(10);
        flip(segment, groups(segment).getLast() + WriteAheadLog.GROUP_HEADER_BYTES + 6, 1);
        assertEquals(9, replayAll().size());
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
            seen.add(WriteAheadLog.rest(payload));
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
        assertTrue(!recycled().isEmpty(), "a clean close recycles its segments");
        Writers crashed = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir, 4096), n -> { });
        crashed.submit("a", c -> {
            c.log(TYPE, "new".getBytes(StandardCharsets.UTF_8));
            return null;
        }).join();
        assertEquals(List.of("new"), replayAll());
    }

    @Test
    void keyedPayloadsShouldRoundTrip() {
        ByteBuffer payload = ByteBuffer.wrap(WriteAheadLog.keyed("ws/näme", new byte[] {1, 2, 3}));
        assertEquals("ws/näme", WriteAheadLog.key(payload));
        assertArrayEquals(new byte[] {1, 2, 3}, WriteAheadLog.rest(payload));
    }

    @Test
    void osModeShouldNeedNoLogAndLogNothing() {
        try (Writers writers = new Writers("t", 1, Durability.OS, 64, null, n -> { })) {
            assertEquals("x", writers.submit("a", c -> {
                assertTrue(!c.logging());
                c.log(TYPE, new byte[] {1});
                return "x";
            }).join());
        }
        assertThrows(IllegalArgumentException.class, () -> new Writers("t", 1, Durability.FSYNC, 64, null, n -> { }));
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
        List<String> replayed = replayAll();
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

    /** Where the next group would go: past the segment header and every group's length. */
    private static long endOfRecords(Path segment) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(segment));
        int at = WriteAheadLog.SEGMENT_HEADER_BYTES;
        while (bytes.getInt(at) > 0) {
            at += WriteAheadLog.GROUP_HEADER_BYTES + bytes.getInt(at);
        }
        return at;
    }
}

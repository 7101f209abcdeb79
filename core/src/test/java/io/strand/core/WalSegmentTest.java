package io.strand.core;

import static io.strand.core.WalFixture.TYPE;
import static io.strand.core.WalFixture.endOfRecords;
import static io.strand.core.WalFixture.replayAll;
import static io.strand.core.WalFixture.segmentWithRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The segment format: what reads back, what is a torn tail (the clean end), and what is corruption (a refused start). */
@Timeout(60)
class WalSegmentTest {
    @TempDir
    Path dir;

    @Test
    void readShouldReturnEveryRecordOfEveryAppendedGroupInOrder() throws IOException {
        Path file = dir.resolve("0-1.wal");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4096), 0);
            WalSegment.stamp(ch, 42);
        }
        WalSegment segment = WalSegment.open(file, 4096, 42);
        GroupRecords group = new GroupRecords();
        for (int g = 0; g < 3; g++) {
            for (int r = 0; r < 2; r++) {
                group.add(TYPE, ("g" + g + "r" + r).getBytes(StandardCharsets.UTF_8));
            }
            segment.append(group);
            group.clear();
        }
        segment.close();
        assertEquals(6, segment.records());
        List<String> seen = new ArrayList<>();
        assertEquals(6, WalSegment.read(file, (type, payload) -> {
            assertEquals(TYPE, type);
            seen.add(StandardCharsets.UTF_8.decode(payload).toString());
        }));
        assertEquals(List.of("g0r0", "g0r1", "g1r0", "g1r1", "g2r0", "g2r1"), seen);
        assertEquals(4096 - WalSegment.SEGMENT_HEADER_BYTES - 3 * (WalSegment.GROUP_HEADER_BYTES + 2 * (WalSegment.RECORD_HEADER_BYTES + 4)),
                segment.remaining());
    }

    /** The last group's write was cut half way (a power loss before it returned): the group before it is the end. */
    @Test
    void aFinalGroupTornHalfWayShouldReadAsTheCleanEndOfTheSegment() throws IOException {
        Path segment = crashedWithOneGroupPerRecord(10);
        int last = groups(segment).getLast();
        int length = ByteBuffer.wrap(Files.readAllBytes(segment)).getInt(last);
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            int from = last + WalSegment.GROUP_HEADER_BYTES + length / 2;
            ch.write(ByteBuffer.allocate(last + WalSegment.GROUP_HEADER_BYTES + length - from), from); // its second half never landed
        }
        List<String> seen = replayAll(dir);
        assertEquals(9, seen.size());
        assertEquals(record(8), seen.getLast());
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
        long offset = groups.get(victim) + WalSegment.GROUP_HEADER_BYTES + random.nextInt(length);
        System.out.println("WalSegmentTest seed " + seed + ": flipped a bit of group " + victim + " at " + offset);
        flip(segment, offset, 1 << random.nextInt(8));
        List<String> seen = new ArrayList<>();
        StrandException e = assertThrows(StrandException.class, () -> seen.addAll(replayAll(dir)));
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
        StrandException e = assertThrows(StrandException.class, () -> replayAll(dir));
        assertEquals(ErrorCode.CORRUPT, e.code());
        assertTrue(e.getMessage().contains("offset " + victim), e.getMessage());
        flip(segment, victim + 3, 0x40);
        flip(segment, victim, 0x80); // a negative length
        e = assertThrows(StrandException.class, () -> replayAll(dir));
        assertTrue(e.getMessage().contains("offset " + victim), e.getMessage());
    }

    /** After the last good group: random bytes (a group torn mid-write over a recycled file's old data), nothing valid. */
    @Test
    void garbageAfterTheLastGoodGroupShouldBeATornTailNotCorruption() throws IOException {
        Path segment = crashedWithOneGroupPerRecord(10);
        long end = endOfRecords(segment);
        long seed = System.nanoTime();
        System.out.println("WalSegmentTest garbage seed " + seed);
        byte[] garbage = new byte[3000];
        new java.util.Random(seed).nextBytes(garbage);
        ByteBuffer torn = ByteBuffer.wrap(garbage).putInt(0, 200); // a plausible group length, a wrong CRC
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            ch.write(torn, end);
        }
        List<String> seen = replayAll(dir);
        assertEquals(10, seen.size());
        assertEquals(record(9), seen.getLast());
    }

    /** A flip in the last group cannot be told from a torn write: that group is dropped, the start goes on. */
    @Test
    void aFlipInTheLastGroupShouldEndTheSegmentLikeATornTail() throws IOException {
        Path segment = crashedWithOneGroupPerRecord(10);
        flip(segment, groups(segment).getLast() + WalSegment.GROUP_HEADER_BYTES + 6, 1);
        assertEquals(9, replayAll(dir).size());
    }

    private static String record(int i) {
        return "a:" + i + "-" + "p".repeat(20);
    }

    /** Writers that logged {@code n} records "a:i", each acknowledged before the next: one group each; left open, as a crash leaves them. */
    private Path crashedWithOneGroupPerRecord(int n) throws IOException {
        Writers writers = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir, 1 << 20), x -> { });
        for (int i = 0; i < n; i++) {
            String record = record(i);
            writers.submit("a", c -> {
                c.log(TYPE, record.getBytes(StandardCharsets.UTF_8));
                return null;
            }).join();
        }
        return segmentWithRecords(dir);
    }

    /** The offsets of every group of {@code segment}, in order. */
    private static List<Integer> groups(Path segment) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(segment));
        List<Integer> at = new ArrayList<>();
        for (int g = WalSegment.SEGMENT_HEADER_BYTES; bytes.getInt(g) > 0; g += WalSegment.GROUP_HEADER_BYTES + bytes.getInt(g)) {
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
}

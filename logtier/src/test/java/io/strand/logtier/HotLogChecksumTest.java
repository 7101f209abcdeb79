package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.Durability;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Hot excerpts carry a CRC32C (format 2): a flipped byte is a {@code corrupt} error naming ws, log and seq. */
@Timeout(60)
class HotLogChecksumTest {
    @TempDir
    Path dir;

    private LogConfig config() {
        return LogConfig.defaults(dir, Durability.OS);
    }

    private HotLog open() {
        return HotLog.open("acme", "orders", dir.resolve("q"), config());
    }

    private static byte[] marked(long seq) {
        return String.format("{\"marker\":\"entry-%04d\"}", seq).getBytes(StandardCharsets.UTF_8);
    }

    private static List<Entry> readAll(HotLog hot, long from, long to) {
        List<Entry> got = new ArrayList<>();
        long next = from;
        while (next <= to) {
            int before = got.size();
            next = hot.reader().read(next, to, new LogReader.Limit(1000, Long.MAX_VALUE, EntrySink.of(got::add)));
            if (got.size() == before) {
                break;
            }
        }
        return got;
    }

    /** Flips one byte of the first occurrence of {@code text} in the queue's cycle files. */
    private void flipByteOf(String text) throws IOException {
        byte[] needle = text.getBytes(StandardCharsets.UTF_8);
        List<Path> files;
        try (Stream<Path> s = Files.list(dir.resolve("q"))) {
            files = s.filter(p -> p.toString().endsWith(".cq4")).toList();
        }
        for (Path f : files) {
            byte[] all = Files.readAllBytes(f);
            for (int i = 0; i + needle.length <= all.length; i++) {
                if (java.util.Arrays.equals(all, i, i + needle.length, needle, 0, needle.length)) {
                    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
                        raf.seek(i + needle.length - 1);
                        raf.write(all[i + needle.length - 1] ^ 0x01);
                    }
                    return;
                }
            }
        }
        throw new AssertionError(text + " not found in " + files);
    }

    private static void assertCorrupt(StrandException e, long seq) {
        assertEquals(ErrorCode.CORRUPT, e.code(), e.getMessage());
        assertEquals("acme", e.extras().get("ws"), e.getMessage());
        assertEquals("orders", e.extras().get("log"), e.getMessage());
        assertEquals(seq, e.extras().get("seq"), e.getMessage());
        assertTrue(e.getMessage().contains("acme/orders") && e.getMessage().contains("seq " + seq), e.getMessage());
    }

    @Test
    void readShouldReportCorruptNamingWsLogAndSeqWhenOneByteOfAStoredExcerptFlips() throws IOException {
        try (HotLog hot = open()) {
            for (long seq = 1; seq <= 20; seq++) {
                hot.appender().append(System.currentTimeMillis(), List.of(marked(seq)), Collections.singletonList(null), null, 0);
            }
        }
        flipByteOf("entry-0010");
        try (HotLog hot = open()) {
            assertEquals(20, hot.lastSeq());
            StrandException e = assertThrows(StrandException.class, () -> readAll(hot, 1, 20));
            assertCorrupt(e, 10);
            assertCorrupt(assertThrows(StrandException.class, () -> readAll(hot, 10, 20)), 10);
            assertCorrupt(assertThrows(StrandException.class, () -> hot.reader().tsOf(10)), 10);
            List<Entry> before = readAll(hot, 1, 9);
            assertEquals(9, before.size());
            for (Entry entry : before) {
                assertArrayEquals(marked(entry.seq()), entry.data());
            }
            assertEquals(10, readAll(hot, 11, 20).size(), "entries after the damaged one are still readable");
        }
    }

    @Test
    void readShouldReportTheBatchFirstSeqWhenAByteInsideABatchFlips() throws IOException {
        try (HotLog hot = open()) {
            hot.appender().append(1000, List.of(marked(1), marked(2)), Collections.nCopies(2, null), null, 0);
            hot.appender().append(1000, List.of(marked(3), marked(4), marked(5)), Collections.nCopies(3, null), "p", 7);
            hot.appender().append(1000, List.of(marked(6)), Collections.singletonList(null), null, 0);
        }
        flipByteOf("entry-0004");
        try (HotLog hot = open()) {
            assertCorrupt(assertThrows(StrandException.class, () -> readAll(hot, 4, 6)), 3);
            assertCorrupt(assertThrows(StrandException.class, () -> readAll(hot, 1, 6)), 3);
            assertEquals(2, readAll(hot, 1, 2).size());
            assertEquals(1, readAll(hot, 6, 6).size());
        }
    }

    @Test
    void openShouldTakeTheDamagedLastExcerptsSeqAsTheHeadAndReadsOfItReportCorrupt() throws IOException {
        try (HotLog hot = open()) {
            for (long seq = 1; seq <= 3; seq++) {
                hot.appender().append(1000 + seq, List.of(marked(seq)), Collections.singletonList(null), null, 0);
            }
        }
        flipByteOf("entry-0003");
        // found by BitFlipIT: a refused open made every page of the log answer corrupt, not only the damaged seq's
        try (HotLog hot = open()) {
            assertEquals(3, hot.lastSeq(), "the damaged excerpt's index says which seq it stands for");
            assertEquals(1002, hot.lastTs(), "the ts of the newest intact batch");
            assertCorrupt(assertThrows(StrandException.class, () -> readAll(hot, 3, 3)), 3);
            assertEquals(2, readAll(hot, 1, 2).size());
            assertEquals(4, hot.appender().append(2000, List.of(marked(4)), Collections.singletonList(null), null, 0));
            assertEquals(1, readAll(hot, 4, 4).size());
        }
    }

    @Test
    void openShouldIndexACycleWhoseFirstExcerptIsDamagedFromTheNextIntactOne() throws IOException {
        try (HotLog hot = open()) {
            hot.appender().append(1000, List.of(marked(1)), Collections.singletonList(null), null, 0);
            hot.appender().append(1000, List.of(marked(2), marked(3)), Collections.nCopies(2, null), null, 0);
            hot.appender().append(1000, List.of(marked(4)), Collections.singletonList(null), null, 0);
        }
        flipByteOf("entry-0001");
        try (HotLog hot = open()) {
            assertEquals(1, hot.firstSeq());
            assertEquals(4, hot.lastSeq());
            assertCorrupt(assertThrows(StrandException.class, () -> readAll(hot, 1, 4)), 1);
            List<Entry> rest = readAll(hot, 2, 4);
            assertEquals(List.of(2L, 3L, 4L), rest.stream().map(Entry::seq).toList(), "seqs after the damaged first excerpt keep their index");
            for (Entry entry : rest) {
                assertArrayEquals(marked(entry.seq()), entry.data());
            }
        }
    }

    @Test
    void replayShouldReportCorruptWhenTheWriteAheadCopyIsDamaged() {
        Bytes<?> out = Bytes.allocateElasticOnHeap(64);
        HotExcerptCodec.writeEntries(out, 1, 1000, List.of(marked(1)), Collections.singletonList(null), null, 0);
        byte[] excerpt = out.toByteArray();
        excerpt[excerpt.length - 7] ^= 0x10;
        try (HotLog hot = open()) {
            assertCorrupt(assertThrows(StrandException.class, () -> hot.appender().replay(excerpt)), 1);
            assertEquals(0, hot.lastSeq(), "nothing applied");
        }
    }

    @Test
    void replayShouldCheckTheQueueCopyOfABatchItAlreadyHolds() throws IOException {
        byte[][] walCopies = new byte[3][];
        try (HotLog hot = open()) {
            for (int seq = 1; seq <= 3; seq++) {
                hot.appender().append(1000, List.of(marked(seq)), Collections.singletonList(null), null, 0);
                Bytes<?> out = Bytes.allocateElasticOnHeap(64);
                HotExcerptCodec.writeEntries(out, seq, 1000, List.of(marked(seq)), Collections.singletonList(null), null, 0);
                walCopies[seq - 1] = out.toByteArray();
            }
        }
        flipByteOf("entry-0002");
        try (HotLog hot = open()) {
            assertTrue(hot.reader().checkStoredCopy(1));
            assertFalse(hot.reader().checkStoredCopy(2), "the damaged copy of seq 2 is found, not trusted unread");
            assertFalse(hot.appender().replay(walCopies[1]), "already held: not appended again");
            assertFalse(hot.appender().replay(walCopies[2]));
            assertEquals(3, hot.lastSeq());
        }
    }

    /** Writes excerpts in format 1 (no checksum), as a queue written before format 2 holds them. */
    private void writeFormat1(long firstSeq, List<byte[]> data) {
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(dir.resolve("q").toFile())
                .rollCycle(config().rollCycle()).blockSize(config().blockSize()).build();
             ExcerptAppender a = queue.createAppender()) {
            try (DocumentContext dc = a.writingDocument()) {
                dc.wire().bytes().write(format1Entries(firstSeq, data));
            }
            for (int i = 1; i < data.size(); i++) {
                try (DocumentContext dc = a.writingDocument()) {
                    Bytes<?> b = dc.wire().bytes();
                    b.writeByte((byte) 2);
                    b.writeLong(firstSeq + i);
                    b.writeLong(firstSeq);
                }
            }
        }
    }

    private static byte[] format1Entries(long firstSeq, List<byte[]> data) {
        Bytes<?> b = Bytes.allocateElasticOnHeap(64);
        b.writeByte((byte) 1);
        b.writeLong(firstSeq);
        b.writeLong(1000);
        b.writeInt(data.size());
        b.writeByte((byte) 0);
        for (byte[] d : data) {
            b.writeByte((byte) 0);
            b.writeStopBit(d.length);
            b.write(d);
        }
        return b.toByteArray();
    }

    @Test
    void format1ExcerptsShouldStillReadBesideFormat2Ones() {
        writeFormat1(1, List.of(marked(1), marked(2), marked(3)));
        writeFormat1(4, List.of(marked(4)));
        try (HotLog hot = open()) {
            assertEquals(4, hot.lastSeq());
            assertEquals(1, hot.firstSeq());
            assertTrue(hot.appender().replay(format1Entries(5, List.of(marked(5), marked(6)))), "a format 1 write-ahead copy replays");
            assertEquals(7, hot.appender().append(1000, List.of(marked(7), marked(8)), Collections.nCopies(2, null), null, 0));
        }
        try (HotLog hot = open()) {
            assertEquals(8, hot.lastSeq());
            List<Entry> all = readAll(hot, 1, 8);
            assertEquals(8, all.size());
            for (int i = 0; i < all.size(); i++) {
                assertEquals(i + 1, all.get(i).seq());
                assertArrayEquals(marked(i + 1), all.get(i).data());
            }
            List<Entry> fromMiddle = readAll(hot, 6, 8); // through a format 1 padding to its batch
            assertEquals(6, fromMiddle.getFirst().seq());
        }
    }
}

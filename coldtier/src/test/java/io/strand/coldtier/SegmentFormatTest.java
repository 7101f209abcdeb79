package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SegmentFormatTest {
    private static final String KEY = "w/l/seg/00000000000000000001-00000000000000000120.seg";

    @TempDir
    Path tmp;

    private byte[] write(List<Entry> entries, String prevChain, int blockBytes) throws Exception {
        Path f = tmp.resolve("s-" + System.nanoTime() + ".seg");
        try (SegmentWriter w = SegmentWriter.create(f, prevChain, blockBytes, 3)) {
            entries.forEach(w::append);
            SegmentTrailer t = w.finish();
            assertEquals(Files.size(f), t.size());
        }
        return Files.readAllBytes(f);
    }

    private static List<Entry> readAll(SegmentReader r) {
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < r.blocks().size(); i++) {
            out.addAll(r.readBlock(i));
        }
        return out;
    }

    @Test
    void roundtripShouldReturnEveryEntryExactlyAcrossManyBlocks() throws Exception {
        List<Entry> entries = TestEntries.range(1, 120);
        byte[] seg = write(entries, null, 1024);
        SegmentReader r = SegmentReader.open(KEY, seg);
        assertTrue(r.blocks().size() > 5, "small blocks → many blocks, got " + r.blocks().size());
        TestEntries.assertSame(entries, readAll(r));
        SegmentTrailer t = r.trailer();
        assertEquals(1, t.firstSeq());
        assertEquals(120, t.lastSeq());
        assertEquals(120, t.entries());
        assertEquals(TestEntries.ts(1), t.firstTs());
        assertEquals(TestEntries.ts(120), t.lastTs());
        List<Entry> streamed = new ArrayList<>();
        SegmentReader.verifyAll(KEY, seg, streamed::add);
        TestEntries.assertSame(entries, streamed);
    }

    @Test
    void roundtripShouldKeepEdgeCaseEntries() throws Exception {
        byte[] big = new byte[300_000];
        Arrays.fill(big, (byte) 'x');
        big[0] = '"';
        big[big.length - 1] = '"';
        List<Entry> entries = List.of(
                new Entry(41, 5, null, "{}".getBytes(StandardCharsets.UTF_8)),
                new Entry(42, 5, "", new byte[0]),
                new Entry(43, 6, "ключ-🔑", "[1,2]".getBytes(StandardCharsets.UTF_8)),
                new Entry(44, 6, "big", big),
                new Entry(45, 9, "after-big", "null".getBytes(StandardCharsets.UTF_8)));
        byte[] seg = write(entries, null, 4096);
        SegmentReader r = SegmentReader.open("x/y/seg/a.seg", seg);
        TestEntries.assertSame(entries, readAll(r));
        assertEquals(41, r.trailer().firstSeq());
        assertTrue(r.blockOf(44) >= 0, "lookup works");
        assertEquals(-1, r.blockOf(40));
        assertEquals(-1, r.blockOf(46));
    }

    @Test
    void layoutShouldMatchTheDocumentedTable() throws Exception {
        byte[] seg = write(TestEntries.range(1, 120), null, 1024);
        assertArrayEquals("STRNDSEG".getBytes(StandardCharsets.US_ASCII), Arrays.copyOf(seg, 8));
        assertArrayEquals("STRNDEND".getBytes(StandardCharsets.US_ASCII), Arrays.copyOfRange(seg, seg.length - 8, seg.length));
        ByteBuffer t = ByteBuffer.wrap(seg, seg.length - SegmentWriter.TRAILER_SIZE, SegmentWriter.TRAILER_SIZE);
        long footerOffset = t.getLong();
        int footerLength = t.getInt();
        assertEquals(seg.length, footerOffset + footerLength + SegmentWriter.TRAILER_SIZE);
        int blocks = ByteBuffer.wrap(seg).getInt((int) footerOffset);
        assertEquals(4 + 56 * blocks, footerLength);
        assertEquals(SegmentWriter.HEADER_SIZE, ByteBuffer.wrap(seg).getLong((int) footerOffset + 4 + 32), "block 0 starts after the header");
    }

    @Test
    void chainShouldNotDependOnSegmentBoundariesOrBlockSize() throws Exception {
        List<Entry> all = TestEntries.range(1, 90);
        SegmentReader whole = SegmentReader.open(KEY, write(all, null, 1024));
        SegmentReader a = SegmentReader.open(KEY, write(all.subList(0, 40), null, 4096));
        SegmentReader b = SegmentReader.open(KEY, write(all.subList(40, 90), a.trailer().chainSha256(), 2048));
        assertEquals(whole.trailer().chainSha256(), b.trailer().chainSha256());
        assertEquals(HexFormat.of().formatHex(new byte[32]), a.trailer().prevChainSha256());
    }

    @Test
    void bitFlipAnywhereShouldBeDetectedByFullVerify() throws Exception {
        byte[] seg = write(TestEntries.range(1, 60), null, 1024);
        int detected = 0;
        for (int pos = 0; pos < seg.length; pos++) {
            byte[] bad = seg.clone();
            bad[pos] ^= (byte) (1 << (pos % 8));
            StrandException e = assertThrows(StrandException.class,
                    () -> SegmentReader.verifyAll(KEY, bad, x -> { }), "flip at byte " + pos + " of " + seg.length);
            assertEquals(ErrorCode.CORRUPT, e.code(), "flip at " + pos);
            assertEquals(KEY, e.extras().get("segment"));
            detected++;
        }
        assertEquals(seg.length, detected);
    }

    @Test
    void bitFlipInABlockShouldFailOnlyThatBlocksRangedRead() throws Exception {
        List<Entry> entries = TestEntries.range(1, 120);
        byte[] seg = write(entries, null, 1024);
        SegmentReader clean = SegmentReader.open(KEY, seg);
        for (int i = 0; i < clean.blocks().size(); i++) {
            BlockIndex b = clean.blocks().get(i);
            for (long pos : new long[] {b.offset(), b.offset() + b.length() / 2, b.offset() + b.length() - 1}) {
                byte[] bad = seg.clone();
                bad[(int) pos] ^= 0x10;
                SegmentReader r = SegmentReader.open(KEY, bad);
                int block = i;
                StrandException e = assertThrows(StrandException.class, () -> r.readBlock(block));
                assertEquals(ErrorCode.CORRUPT, e.code());
                assertEquals(b.firstSeq(), e.extras().get("firstSeq"), "names the block's seq range");
                assertTrue(e.getMessage().contains(KEY), e.getMessage());
                int other = (i + 1) % clean.blocks().size();
                TestEntries.assertSame(clean.readBlock(other), r.readBlock(other));
            }
        }
    }

    @Test
    void bitFlipInFooterOrTrailerShouldFailOpen() throws Exception {
        byte[] seg = write(TestEntries.range(1, 120), null, 1024);
        long footerOffset = SegmentReader.open(KEY, seg).trailer().footerOffset();
        for (long pos = footerOffset; pos < seg.length; pos++) {
            byte[] bad = seg.clone();
            bad[(int) pos] ^= (byte) (1 << (pos % 8));
            StrandException e = assertThrows(StrandException.class, () -> SegmentReader.open(KEY, bad), "flip at " + pos);
            assertEquals(ErrorCode.CORRUPT, e.code());
            assertEquals(1L, e.extras().get("firstSeq"), "seq range from the key when the trailer cannot be trusted");
            assertEquals(120L, e.extras().get("lastSeq"));
        }
    }

    @Test
    void truncationAtAnyLengthShouldBeDetected() throws Exception {
        byte[] seg = write(TestEntries.range(1, 60), null, 1024);
        for (int len = 0; len < seg.length; len++) {
            byte[] cut = Arrays.copyOf(seg, len);
            // the manifest knows the real size: a short object is a truncation
            StrandException e1 = assertThrows(StrandException.class,
                    () -> SegmentReader.open(KEY, seg.length, SegmentReader.slice(cut)), "cut at " + len);
            assertEquals(ErrorCode.CORRUPT, e1.code());
            // and without knowing the size, the tail no longer parses
            assertThrows(StrandException.class, () -> SegmentReader.verifyAll(KEY, cut, x -> { }), "cut at " + len);
        }
    }

    @Test
    void writerShouldRejectGapsAndEmptySegments() throws Exception {
        Path f = tmp.resolve("gap.seg");
        try (SegmentWriter w = SegmentWriter.create(f, null)) {
            w.append(TestEntries.entry(1));
            StrandException e = assertThrows(StrandException.class, () -> w.append(TestEntries.entry(3)));
            assertEquals(ErrorCode.SEQ_MISMATCH, e.code());
        }
        assertTrue(Files.notExists(f), "an unfinished segment file is removed");
        try (SegmentWriter w = SegmentWriter.create(tmp.resolve("empty.seg"), null)) {
            assertThrows(IllegalStateException.class, w::finish);
        }
    }
}

package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirMirrorTest {
    private static final int B = DirMirror.BLOCK;
    @TempDir
    Path tmp;

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aFreshMirrorShouldCopyEveryFileAndDirectoryExceptSkippedOnes() throws IOException {
        Path from = tmp.resolve("from");
        Files.createDirectories(from.resolve("a/empty"));
        Files.write(from.resolve("a/data"), random(1, 3 * B + 17));
        Files.write(from.resolve("skip.me"), random(2, 10));
        Path to = tmp.resolve("to");

        DirMirror.Result r = DirMirror.mirror(from, to, rel -> rel.toString().equals("skip.me"), true, () -> false);

        assertArrayEquals(Files.readAllBytes(from.resolve("a/data")), Files.readAllBytes(to.resolve("a/data")));
        assertTrue(Files.isDirectory(to.resolve("a/empty")));
        assertFalse(Files.exists(to.resolve("skip.me")));
        assertEquals(1, r.files());
        assertEquals(3L * B + 17, r.bytesWritten());
    }

    /** Zero blocks past the copy's end stay holes (a log's cycle file is mostly unwritten): same bytes, far fewer written. */
    @Test
    void zeroBlocksOfANewCopyShouldStayHoles() throws IOException {
        Path from = tmp.resolve("from");
        Files.createDirectories(from);
        byte[] middle = new byte[8 * B];
        System.arraycopy(random(5, B), 0, middle, 0, B);
        System.arraycopy(random(6, B), 0, middle, 7 * B, B);
        Files.write(from.resolve("cycle"), middle);
        byte[] tail = new byte[4 * B + 10];
        System.arraycopy(random(7, B), 0, tail, 0, B);
        Files.write(from.resolve("ends-in-zeros"), tail);
        Path to = tmp.resolve("to");

        DirMirror.Result r = DirMirror.mirror(from, to, rel -> false, false, () -> false);

        assertArrayEquals(middle, Files.readAllBytes(to.resolve("cycle")));
        assertArrayEquals(tail, Files.readAllBytes(to.resolve("ends-in-zeros")));
        assertEquals(2 * B + B + 1, r.bytesWritten(), "the data blocks, and one byte to give the second its length");
        // a later mirror after a zero block got data: written over the hole
        middle[3 * B] = 9;
        Files.write(from.resolve("cycle"), middle);
        DirMirror.mirror(from, to, rel -> false, false, () -> false);
        assertArrayEquals(middle, Files.readAllBytes(to.resolve("cycle")));
    }

    @Test
    void aSecondMirrorShouldWriteOnlyTheBlocksThatChangedAndTheGrownTail() throws IOException {
        Path from = tmp.resolve("from");
        Files.createDirectories(from);
        byte[] data = random(3, 4 * B);
        Files.write(from.resolve("queue"), data);
        Path to = tmp.resolve("to");
        DirMirror.mirror(from, to, rel -> false, false, () -> false);

        data[B + 5] ^= 1; // a header or index page rewritten in place
        byte[] grown = new byte[data.length + 100]; // and an appended tail
        System.arraycopy(data, 0, grown, 0, data.length);
        System.arraycopy(random(4, 100), 0, grown, data.length, 100);
        Files.write(from.resolve("queue"), grown);

        DirMirror.Result r = DirMirror.mirror(from, to, rel -> false, false, () -> false);

        assertArrayEquals(grown, Files.readAllBytes(to.resolve("queue")));
        assertEquals(B + 100, r.bytesWritten(), "one changed block and the new partial block");
        assertEquals(grown.length, r.bytesRead());
    }

    @Test
    void aMirrorShouldTruncateShrunkFilesAndRemoveWhatTheSourceNoLongerHas() throws IOException {
        Path from = tmp.resolve("from");
        Files.createDirectories(from.resolve("keep"));
        Files.write(from.resolve("keep/f"), random(5, 2 * B));
        Path to = tmp.resolve("to");
        Files.createDirectories(to.resolve("gone/deeper"));
        Files.write(to.resolve("gone/deeper/x"), random(6, 10));
        Files.write(to.resolve("MANIFEST"), random(7, 10));
        Files.createDirectories(to.resolve("keep"));
        Files.write(to.resolve("keep/f"), random(5, 3 * B)); // same prefix, longer

        DirMirror.mirror(from, to, rel -> false, false, () -> false);

        assertArrayEquals(Files.readAllBytes(from.resolve("keep/f")), Files.readAllBytes(to.resolve("keep/f")));
        assertFalse(Files.exists(to.resolve("gone")));
        assertFalse(Files.exists(to.resolve("MANIFEST")));
    }

    @Test
    void aCancelledMirrorShouldStopAndALaterOneShouldStillEndExact() throws IOException {
        Path from = tmp.resolve("from");
        Files.createDirectories(from);
        Files.write(from.resolve("big"), random(8, 8 * B));
        Path to = tmp.resolve("to");
        AtomicInteger polls = new AtomicInteger();

        assertThrows(CancellationException.class, () -> DirMirror.mirror(from, to, rel -> false, false, () -> polls.incrementAndGet() > 3));
        DirMirror.mirror(from, to, rel -> false, false, () -> false);

        assertArrayEquals(Files.readAllBytes(from.resolve("big")), Files.readAllBytes(to.resolve("big")));
    }

    @Test
    void immutableFilesShouldBeLinkedAndALinkShouldNeverBeWrittenThrough() throws IOException {
        Path from = tmp.resolve("from");
        Files.createDirectories(from);
        Files.write(from.resolve("old.cq4"), random(9, 2 * B));
        Files.write(from.resolve("new.cq4"), random(10, B));
        Path to = tmp.resolve("to");

        DirMirror.Result r = DirMirror.mirror(from, to, rel -> false, false, p -> p.getFileName().toString().equals("old.cq4"), () -> false);

        assertEquals(1, r.linked());
        assertTrue(Files.isSameFile(from.resolve("old.cq4"), to.resolve("old.cq4")));
        assertEquals(B, r.bytesWritten(), "only the mutable file is copied");
        // the source replaces the file that was linked (a new file under the same name): the copy must
        // get its own file, and the linked one (shared with an older copy) must keep its content
        byte[] before = Files.readAllBytes(from.resolve("old.cq4"));
        Path older = tmp.resolve("older-copy");
        Files.createLink(older, to.resolve("old.cq4"));
        Files.delete(from.resolve("old.cq4"));
        Files.write(from.resolve("old.cq4"), random(11, 2 * B));

        DirMirror.mirror(from, to, rel -> false, false, p -> false, () -> false);

        assertArrayEquals(Files.readAllBytes(from.resolve("old.cq4")), Files.readAllBytes(to.resolve("old.cq4")));
        assertArrayEquals(before, Files.readAllBytes(older), "a file shared by links is never written through");
    }
}

package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ProcessMemory}: the two parsers on canned text, and this JVM read for real while it maps a queue-named file and holds it open. */
class ProcessMemoryTest {
    private static final String STATUS = """
            Name:	java
            VmRSS:	 1530880 kB
            RssAnon:	 1398784 kB
            RssFile:	  132096 kB
            RssShmem:	       0 kB
            Threads:	57
            """;

    private static final String MAPS = """
            7f1c00000000-7f1c04000000 rw-s 00000000 fe:01 1311 /data/logs/acme/chat/queue/20261207F.cq4
            7f1c04000000-7f1c08000000 rw-s 04000000 fe:01 1311 /data/logs/acme/chat/queue/20261207F.cq4
            7f1c08000000-7f1c08020000 rw-s 00000000 fe:01 1310 /data/logs/acme/chat/queue/metadata.cq4t
            7f1c09000000-7f1c09020000 rw-s 00000000 fe:01 1412 /data/logs/my log/queue/metadata.cq4t
            7f1c0a000000-7f1c0a800000 r--p 00000000 fe:01 99 /usr/lib/jvm/lib/modules
            7f1c0b000000-7f1c0b021000 rw-p 00000000 00:00 0
            7ffd5e000000-7ffd5e021000 rw-p 00000000 00:00 0 [stack]
            """;

    @Test
    void statusShouldGiveEachFieldInMibAndMinusOneWhenAbsent() {
        assertEquals(1495, ProcessMemory.statusMiB(STATUS, "VmRSS"));
        assertEquals(1366, ProcessMemory.statusMiB(STATUS, "RssAnon"));
        assertEquals(129, ProcessMemory.statusMiB(STATUS, "RssFile"));
        assertEquals(-1, ProcessMemory.statusMiB(STATUS, "VmSwap"));
    }

    @Test
    void mapsShouldCountEachQueueFileOnceWhateverItsMappingsOrSpaces() {
        assertEquals(3, ProcessMemory.mappedQueueFiles(MAPS));
        assertEquals(0, ProcessMemory.mappedQueueFiles("7f1c0b000000-7f1c0b021000 rw-p 00000000 00:00 0\n"));
    }

    @Test
    void thisJvmShouldShowAQueueFileItMapsAndItsResidentMemory(@TempDir Path dir) throws IOException {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "needs Linux /proc");
        long pid = ProcessHandle.current().pid();
        int before = ProcessMemory.mappedQueueFiles(pid);
        Path file = dir.resolve("20261207F.cq4");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 20);
            map.put(0, (byte) 1);
            assertEquals(before + 1, ProcessMemory.mappedQueueFiles(pid));
            String status = ProcessMemory.status(pid);
            long rss = ProcessMemory.statusMiB(status, "VmRSS");
            long anon = ProcessMemory.statusMiB(status, "RssAnon");
            long paged = ProcessMemory.statusMiB(status, "RssFile");
            assertTrue(rss > 0 && anon > 0 && paged > 0, rss + " " + anon + " " + paged);
            assertTrue(anon + paged <= rss + 2, "the parts within the whole: " + anon + " + " + paged + " vs " + rss);
            long open = ProcessMemory.openFiles(pid);
            assertTrue(open > 0, "this JVM holds the mapped file's channel and its jars open: " + open);
        }
    }
}

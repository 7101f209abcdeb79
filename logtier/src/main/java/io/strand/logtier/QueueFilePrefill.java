package io.strand.logtier;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

/**
 * Thread-safe (no state but a counter, a cache of name formats and a buffer nobody reads): before Chronicle creates a
 * queue file, puts exactly the pages it is about to touch into the page cache, as clean zero pages of
 * a sparse file, so that none of its first touches misses the cache.
 *
 * <p><b>Why.</b> A page fault on a file mapping that misses the page cache makes the kernel read
 * around the fault: the disk's {@code read_ahead_kb} on either side of it, clamped to the file's end.
 * For a new, sparse file every page of that window is allocated, zeroed and charged. On this VM
 * ({@code read_ahead_kb} = 8192) a new log's first append brought in 1,280 pages (5 MiB) of its
 * cycle file, and the first read of its metadata file all 32 of its pages (Chronicle maps that file
 * as 128 KiB). With the cycle file's first 128 KiB prefilled (the previous version of this class),
 * {@code perf} still put 26 % of the server's CPU in {@code memset} under {@code strand bench
 * many-logs}, half under that read, half under the metadata file's read-around (2026-12-03): about
 * 5 µs per zeroed page on this VM (26 % of 1.3 ms over 64 pages, derived from that profile; why a
 * page costs that much here was not measured).
 *
 * <p><b>What is touched.</b> A new cycle file: its header (page 0), the first entry of its index of
 * index arrays, right after the header (page 0); the first entry of its first index array, which
 * follows that array ({@code 8 × indexCount} bytes on); and its first excerpts, after the index array
 * ({@code 16 × indexCount} bytes on). With {@code FAST_HOURLY}'s 4,096 index entries those are pages
 * 0, 8 and 16, which is what {@code SEEK_DATA} found written in a new log's file. The metadata file
 * ({@code metadata.cq4t}): its header and key-value entries, all in page 0.
 *
 * <p><b>How.</b> Each range is read with {@code pread}: a read at offset 0 reads ahead up to four
 * pages, clamped to the file's end, so the file is one page long for that read; a later read of a
 * range that does not follow a cached page is a "standalone" read, taken as it is. The file's pages
 * stay clean zeros in the cache until Chronicle writes them (nothing is written to disk, the file
 * stays sparse). A cycle file is laid out as {@code <cycle name>.precreated}, which Chronicle renames
 * into place when it creates that cycle's file (its {@code PrecreatedFiles} hook); a prefill it did not
 * take (the cycle moved on between the two) is deleted after the append ({@link #discardUnused}). The
 * metadata file is created under its own name in a new queue directory: Chronicle initialises a
 * zero-filled table store exactly as the empty file it would have created. {@code
 * QueueFilePrefillTest} checks with {@code mincore} that no read-around happens for any roll cycle.
 */
final class QueueFilePrefill {
    static final int PAGE = 4096;
    /** Chronicle's metadata file in a queue directory. */
    static final String METADATA = "metadata.cq4t";
    private static final String SUFFIX = ".precreated";
    private static final ConcurrentHashMap<String, DateTimeFormatter> FORMATS = new ConcurrentHashMap<>();
    /**
     * Where the zeros read go, shared by every thread (each read uses its own view of it): nobody
     * looks at them. Not a thread-local: a new queue is opened on a request's virtual thread, new
     * for each request, so a thread-local buffer was allocated and zeroed per log (7 % of the
     * server's CPU under {@code strand bench many-logs} in {@code perf}).
     */
    private static final ByteBuffer SINK = ByteBuffer.allocateDirect(32 << 10);
    private static final AtomicLong UNUSED = new AtomicLong();

    private QueueFilePrefill() {
    }

    /**
     * Creates the directory of a new queue and its metadata file with page 0 cached. Best effort: when
     * the file cannot be made, none is left, and Chronicle creates it (the slow way).
     */
    static void prepareNewQueue(Path queueDir) {
        Path metadata = queueDir.resolve(METADATA);
        try {
            Files.createDirectories(queueDir);
            try (RandomAccessFile file = new RandomAccessFile(metadata.toFile(), "rw")) {
                file.setLength(PAGE);
                cache(file.getChannel(), 0, PAGE);
            }
        } catch (IOException e) {
            discard(metadata);
        }
    }

    /**
     * Lays out the prefill of {@code queue}'s cycle file for {@code cycle} if that file does not exist
     * yet, for a first write of {@code writeBytes} (excerpts with their headers); returns the
     * prefill's path (pass it to {@link #discardUnused} after the write that creates the cycle file),
     * or null when there is nothing to prefill or it could not be made (the write then just takes the
     * slow path).
     */
    static Path prepare(SingleChronicleQueue queue, int cycle, long writeBytes) {
        if (queue.epoch() != 0) {
            return null; // Chronicle shifts names by its epoch; Strand's queues never set one
        }
        Path dir = queue.file().toPath();
        String name = cycleName(queue.rollCycle(), cycle);
        if (Files.exists(dir.resolve(name + SingleChronicleQueue.SUFFIX))) {
            return null;
        }
        long array = 8L * queue.indexCount();
        long excerpts = 2 * array;
        long end = excerpts + 2 * PAGE + roundUp(writeBytes);
        Path prefill = dir.resolve(name + SUFFIX);
        try (RandomAccessFile file = new RandomAccessFile(prefill.toFile(), "rw")) {
            FileChannel channel = file.getChannel();
            file.setLength(PAGE);
            cache(channel, 0, PAGE); // header and the index of index arrays
            file.setLength(end);
            cache(channel, array, 2 * PAGE); // the first index array's first entries
            cache(channel, excerpts, end - excerpts); // the first excerpts
        } catch (IOException e) {
            discard(prefill);
            return null;
        }
        return prefill;
    }

    /** Reads {@code [from, from + bytes)} of {@code channel}, so those pages are cached. */
    private static void cache(FileChannel channel, long from, long bytes) throws IOException {
        ByteBuffer buffer = SINK.duplicate();
        for (long at = from, end = from + bytes; at < end; ) {
            buffer.clear().limit((int) Math.min(buffer.capacity(), end - at));
            int n = channel.read(buffer, at);
            if (n <= 0) {
                break;
            }
            at += n;
        }
    }

    private static long roundUp(long bytes) {
        return (bytes + PAGE - 1) / PAGE * PAGE;
    }

    /** After the write that was to create the cycle file: deletes the prefill if Chronicle did not rename it. */
    static void discardUnused(Path prefill) {
        if (prefill != null && Files.exists(prefill)) {
            UNUSED.incrementAndGet();
            discard(prefill);
        }
    }

    /** Chronicle's name of {@code cycle}'s file, without the suffix (its {@code RollingResourcesCache}, epoch 0). */
    static String cycleName(RollCycle rollCycle, int cycle) {
        DateTimeFormatter format = FORMATS.computeIfAbsent(rollCycle.format(),
                f -> DateTimeFormatter.ofPattern(f).withZone(ZoneOffset.UTC));
        return format.format(Instant.ofEpochMilli((long) cycle * rollCycle.lengthInMillis()));
    }

    /** Prefills Chronicle did not take (a wrong cycle name would show here); read by tests only, not reported as a metric. */
    static long unused() {
        return UNUSED.get();
    }

    private static void discard(Path prefill) {
        try {
            Files.deleteIfExists(prefill);
        } catch (IOException ignored) {
            // a leftover prefill is a hole of zeros: Chronicle renames it into place for its cycle or never looks at it
        }
    }
}

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
 * Thread-safe (no state but a counter and a per-thread read buffer): puts the first {@link #BYTES} of
 * a cycle file that Chronicle is about to create into the page cache, as clean zero pages of a sparse
 * file, so that Chronicle's first touches of the new mapping find their pages there.
 *
 * <p><b>Why.</b> Chronicle maps a new cycle file a block at a time (4 MiB plus 1 MiB overlap) and at
 * once writes its header and first index pages. A page fault on a file mapping that misses the page
 * cache makes the kernel read around the fault: the disk's {@code read_ahead_kb} on either side of it,
 * clamped to the file's end. For a new, sparse cycle file that means allocating, zeroing and charging
 * every page of the mapped block. On this VM ({@code read_ahead_kb} = 8192) every new log's first
 * append brought in 1,280 pages (5 MiB) of page cache; measured 2026-12-02 with a standalone loop of
 * 300 queue creations under page-cache pressure, the first append took 17.4 ms and the loop 15.4 s of
 * system time; with this prefill 0.39 ms (+0.37 ms for the prefill), 1.9 s of system time and 32
 * resident pages. In the server, {@code perf} put 87 % of the writer thread's CPU in that fault path
 * ({@code filemap_fault → page_cache_ra_order}) while logs were being created. The same happens to
 * every active log at each new cycle (hourly).
 *
 * <p><b>How.</b> When Chronicle creates a cycle file and a file {@code <cycle name>.precreated} is
 * there, it renames that file into place (its {@code PrecreatedFiles} hook). This class creates that
 * file as a hole of {@link #BYTES} and reads it once: the read's own readahead stops at the file's end,
 * so exactly those pages are cached, and nothing is written to disk (they stay clean zeros until
 * Chronicle writes them; the file stays sparse). 128 KiB covers what Chronicle touches when it
 * creates a file (header, index-of-indexes, first index array): with 64 KiB the read-around still
 * happened. A prefill Chronicle did not take (the cycle moved on between the two) is deleted after
 * the append ({@link #discardUnused}).
 */
final class CycleFilePrefill {
    static final int BYTES = 128 << 10;
    private static final String SUFFIX = ".precreated";
    private static final ConcurrentHashMap<String, DateTimeFormatter> FORMATS = new ConcurrentHashMap<>();
    private static final ThreadLocal<ByteBuffer> READ_BUFFER = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(32 << 10));
    private static final AtomicLong UNUSED = new AtomicLong();

    private CycleFilePrefill() {
    }

    /**
     * Lays out the prefill of {@code queue}'s cycle file for {@code cycle} if that file does not exist
     * yet; returns the prefill's path (pass it to {@link #discardUnused} after the write that creates
     * the cycle file), or null when there is nothing to prefill or it could not be made (the write
     * then just takes the slow path).
     */
    static Path prepare(SingleChronicleQueue queue, int cycle) {
        if (queue.epoch() != 0) {
            return null; // Chronicle shifts names by its epoch; Strand's queues never set one
        }
        Path dir = queue.file().toPath();
        String name = cycleName(queue.rollCycle(), cycle);
        if (Files.exists(dir.resolve(name + SingleChronicleQueue.SUFFIX))) {
            return null;
        }
        Path prefill = dir.resolve(name + SUFFIX);
        try (RandomAccessFile file = new RandomAccessFile(prefill.toFile(), "rw")) {
            file.setLength(BYTES);
            FileChannel channel = file.getChannel();
            ByteBuffer buffer = READ_BUFFER.get();
            for (long at = 0; at < BYTES; ) {
                buffer.clear();
                int n = channel.read(buffer, at);
                if (n <= 0) {
                    break;
                }
                at += n;
            }
        } catch (IOException e) {
            discard(prefill);
            return null;
        }
        return prefill;
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

    /** Prefills Chronicle did not take (a wrong cycle name would show here). */
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

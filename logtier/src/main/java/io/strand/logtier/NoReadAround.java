package io.strand.logtier;

import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.bytes.MappedBytesStore;
import net.openhft.posix.MAdviseFlag;
import net.openhft.posix.PosixAPI;

/**
 * Thread-safe (stateless but for a counter): tells the kernel not to read around page faults in the
 * mapped chunk of a cycle file that a log's appender writes into ({@code madvise(MADV_RANDOM)},
 * through OpenHFT's {@code posix}, which Chronicle itself uses).
 *
 * <p><b>Why.</b> Chronicle maps a cycle file 5 MiB at a time. When an append first touches a page
 * past the ones {@link QueueFilePrefill} cached, the fault misses the page cache and the kernel reads
 * around it: on this VM ({@code read_ahead_kb} = 8192) the whole 5 MiB mapping, each page a zeroed
 * hole. A small log thus held 1,280 pages (5 MiB) of page cache after its first 23 KiB of entries
 * ({@code fincore}, 2026-12-03), and every active log paid that each hour. A write fault takes one
 * fault per page either way (the kernel does not map the pages it read around into a shared
 * mapping), so with the advice each page costs one fault and one zeroing when it is first written,
 * and no page is zeroed that is never written. Reads of the chunk's older pages are not read ahead
 * while the log is open (they are normally still cached: they were just written); a queue opened
 * again maps its files without the advice.
 */
final class NoReadAround {
    private static final AtomicLong ADVISED = new AtomicLong();
    private static final AtomicLong REFUSED = new AtomicLong();

    private NoReadAround() {
    }

    /** Advises {@code store}'s whole mapping when it is a mapped chunk; any failure just leaves the kernel's default. */
    static void advise(BytesStore<?, ?> store) {
        if (!(store instanceof MappedBytesStore mapped)) {
            return;
        }
        try {
            int rc = PosixAPI.posix().madvise(mapped.address, mapped.realCapacity(), MAdviseFlag.MADV_RANDOM);
            (rc == 0 ? ADVISED : REFUSED).incrementAndGet();
        } catch (RuntimeException | LinkageError e) {
            REFUSED.incrementAndGet();
        }
    }

    /** Chunks advised so far, and those the kernel (or a missing native library) refused. */
    static long advised() {
        return ADVISED.get();
    }

    static long refused() {
        return REFUSED.get();
    }
}

package io.strand.logtier;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.bytes.MappedBytesStore;

/**
 * Thread-safe (stateless but for a count and a once-only warning): tells the kernel not to read
 * around page faults in the mapped chunk of a cycle file that a log's appender writes into
 * ({@code madvise(MADV_RANDOM)}, called through the JDK's foreign function API).
 *
 * <p><b>Why.</b> Chronicle maps a cycle file a chunk at a time (a block and a quarter: 40 MiB since
 * {@link LogConfig#DEFAULT_BLOCK_SIZE} is 32 MiB; 5 MiB when the figures below were taken). When an
 * append first touches a page past the ones {@link QueueFilePrefill} cached, the fault misses the page
 * cache and the kernel reads around it: on this VM ({@code read_ahead_kb} = 8192) the whole 5 MiB
 * mapping (up to 8 MiB of a larger one), each page a zeroed
 * hole. A small log thus held 1,280 pages (5 MiB) of page cache after its first 23 KiB of entries
 * ({@code fincore}, 2026-12-03), and every active log paid that each hour. A write fault takes one
 * fault per page either way (the kernel does not map the pages it read around into a shared
 * mapping), so with the advice each page costs one fault and one zeroing when it is first written,
 * and no page is zeroed that is never written.
 *
 * <p><b>Limits.</b> The advice is given once the appender holds the chunk, which is after
 * Chronicle's first touch of it: a log's first chunk is covered by the prefill, but a log that grows
 * into a later chunk (past the first block) still pays one read-around there, and so does a queue
 * opened again whose tail page is no longer cached. Reads of the chunk's older pages are not read ahead while the
 * log stays open (they are normally still cached: they were just written); a queue opened again maps
 * its files without the advice. Where {@code madvise} is missing or refuses, the kernel's default
 * stays and one warning is logged.
 */
final class NoReadAround {
    private static final System.Logger LOG = System.getLogger(NoReadAround.class.getName());
    /** Linux's {@code MADV_RANDOM}. */
    private static final int MADV_RANDOM = 1;
    /** {@code int madvise(void *addr, size_t length, int advice)}; null where the C library has none. */
    private static final MethodHandle MADVISE = Linker.nativeLinker().defaultLookup().find("madvise")
            .map(symbol -> Linker.nativeLinker().downcallHandle(symbol,
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT)))
            .orElse(null);
    private static final AtomicLong ADVISED = new AtomicLong();
    private static volatile boolean warned;

    private NoReadAround() {
    }

    /**
     * Advises {@code store}'s mapping when it is a mapped chunk: {@code [address, address + capacity)},
     * where Chronicle's {@code realCapacity()} is the chunk's end as a file offset, so the capacity is
     * that minus its {@code start()}.
     */
    static void advise(BytesStore<?, ?> store) {
        if (!(store instanceof MappedBytesStore mapped) || MADVISE == null) {
            return;
        }
        int rc = madvise(mapped.address, length(mapped), MADV_RANDOM);
        if (rc == 0) {
            ADVISED.incrementAndGet();
        } else if (!warned) {
            warned = true;
            LOG.log(System.Logger.Level.WARNING, "madvise(MADV_RANDOM) of a log's mapped chunk failed; new pages of"
                    + " small logs may be read around (page cache use, not correctness)");
        }
    }

    /**
     * {@code madvise(address, length, advice)}: 0 when the kernel took the advice, -1 when it refused
     * or the C library has no {@code madvise}. {@code address} must be page-aligned.
     */
    static int madvise(long address, long length, int advice) {
        if (MADVISE == null) {
            return -1;
        }
        try {
            return (int) MADVISE.invokeExact(MemorySegment.ofAddress(address), length, advice);
        } catch (Throwable t) {
            return -1;
        }
    }

    /** The bytes mapped for {@code mapped}, from its {@code address}. */
    static long length(MappedBytesStore mapped) {
        return mapped.realCapacity() - mapped.start();
    }

    /** Chunks advised so far (tests). */
    static long advised() {
        return ADVISED.get();
    }
}

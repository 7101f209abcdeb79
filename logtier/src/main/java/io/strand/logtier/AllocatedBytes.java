package io.strand.logtier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * Stateless: the bytes a file takes on disk ({@code st_blocks} × 512 from {@code stat(2)}, called
 * through the JDK's foreign function API), which for Chronicle's cycle files is what matters: they
 * are sparse, extended to the end of the mapped chunk ({@link LogConfig#DEFAULT_BLOCK_SIZE} plus a
 * quarter) long before anything is written there, so their length says 40 MiB for a log of three
 * entries. Where {@code stat} cannot be called (not Linux on x86-64 or AArch64, or it fails) the
 * file's length is returned instead.
 */
final class AllocatedBytes {
    /** {@code struct stat} on Linux x86-64 and AArch64 (glibc): 144 and 128 bytes; {@code st_blocks} at byte 64 in both. */
    private static final int STAT_BYTES = 256;
    private static final long ST_BLOCKS_OFFSET = 64;
    private static final MethodHandle STAT = statHandle();

    private AllocatedBytes() {
    }

    /** Bytes {@code file} takes on disk; its length where that cannot be read. */
    static long of(Path file) throws IOException {
        if (STAT != null) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment buf = arena.allocate(STAT_BYTES);
                int rc = (int) STAT.invokeExact(arena.allocateFrom(file.toString()), buf);
                if (rc == 0) {
                    return buf.get(ValueLayout.JAVA_LONG, ST_BLOCKS_OFFSET) * 512;
                }
            } catch (Throwable t) {
                // fall back to the length
            }
        }
        return Files.size(file);
    }

    private static MethodHandle statHandle() {
        if (!System.getProperty("os.name", "").startsWith("Linux")
                || !Set.of("amd64", "x86_64", "aarch64").contains(System.getProperty("os.arch", ""))) {
            return null;
        }
        return Linker.nativeLinker().defaultLookup().find("stat")
                .map(symbol -> Linker.nativeLinker().downcallHandle(symbol,
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS)))
                .orElse(null);
    }
}

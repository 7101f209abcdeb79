package io.strand.logtier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** How many pages of a file are in the page cache: Linux {@code mincore} over a mapping that is never touched. */
final class ResidentPages {
    private static final MethodHandle MINCORE = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("mincore").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));

    private ResidentPages() {
    }

    static long of(Path file) throws IOException {
        try (Arena arena = Arena.ofConfined(); FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size == 0) {
                return 0;
            }
            MemorySegment mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            long pages = (size + QueueFilePrefill.PAGE - 1) / QueueFilePrefill.PAGE;
            MemorySegment vec = arena.allocate(pages);
            int rc = (int) MINCORE.invokeExact(mapped, size, vec);
            if (rc != 0) {
                throw new IOException("mincore failed for " + file);
            }
            long resident = 0;
            for (long i = 0; i < pages; i++) {
                resident += vec.get(ValueLayout.JAVA_BYTE, i) & 1;
            }
            return resident;
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}

package io.strand.core;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

/**
 * {@code syncfs(2)} through the FFM API: writes back every dirty page of the file system holding a
 * directory, mapped queue and map files included, in one call. The write-ahead log's checkpoint
 * uses it, so the files its records describe need no per-file bookkeeping (a log closed when idle
 * may still have dirty pages). Linux only, like Chronicle.
 */
public final class FileSystemSync {
    /** Any descriptor on the file system will do for syncfs; O_DIRECTORY's value differs by architecture, so it is not used. */
    private static final int O_RDONLY = 0;
    private static final MethodHandle OPEN;
    private static final MethodHandle SYNCFS;
    private static final MethodHandle CLOSE;
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        OPEN = linker.downcallHandle(libc.find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
                errno, Linker.Option.firstVariadicArg(2));
        SYNCFS = linker.downcallHandle(libc.find("syncfs").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), errno);
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    private FileSystemSync() {
    }

    /** Blocks until every dirty page of {@code dir}'s file system is on disk. */
    public static void syncfs(Path dir) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment path = arena.allocateFrom(dir.toAbsolutePath().toString());
            int fd = (int) OPEN.invokeExact(state, path, O_RDONLY);
            if (fd < 0) {
                throw new IOException("open " + dir + " failed, errno " + (int) ERRNO.get(state, 0L));
            }
            try {
                if ((int) SYNCFS.invokeExact(state, fd) != 0) {
                    throw new IOException("syncfs " + dir + " failed, errno " + (int) ERRNO.get(state, 0L));
                }
            } finally {
                int ignored = (int) CLOSE.invokeExact(fd);
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("syncfs " + dir + ": " + t, t);
        }
    }
}

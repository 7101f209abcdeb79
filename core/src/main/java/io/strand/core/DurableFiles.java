package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Small-file durability for every module: write temp, fsync, rename, fsync the directory, so a
 * crash leaves the old file or the new one whole. Stateless.
 */
public final class DurableFiles {
    private DurableFiles() {
    }

    /** Replaces {@code target} with {@code content} so that a crash leaves either the old or the new file whole. */
    public static void writeAtomically(Path target, byte[] content) throws IOException {
        writeAtomically(target, content, true);
    }

    /**
     * As {@link #writeAtomically(Path, byte[])}; with {@code force} false nothing is fsynced, for
     * files whose loss costs only information that can be rebuilt (the rename is still atomic).
     */
    public static void writeAtomically(Path target, byte[] content, boolean force) throws IOException {
        Path tmp = temp(target);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            if (force) {
                ch.force(true);
            }
        }
        if (force) {
            commit(tmp, target);
        } else {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** The temp name {@code target} is written under before {@link #commit}. */
    public static Path temp(Path target) {
        return target.resolveSibling(target.getFileName() + ".tmp");
    }

    /** Renames an fsynced temp file onto {@code target} (the commit point), then fsyncs the directory. */
    public static void commit(Path tmp, Path target) throws IOException {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDirectory(target.toAbsolutePath().getParent());
    }

    /** Forces a file's data (including pages written through a shared mapping) to disk. */
    public static void fsync(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }

    public static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // some filesystems refuse to open a directory for fsync; the rename is then as durable as they allow
            if (!e.getClass().getSimpleName().equals("AccessDeniedException")) {
                throw e;
            }
        }
    }
}

package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real, small file system for disk-full tests: a tmpfs mounted on a directory (needs root on
 * Linux), with a ballast file that fills it and can be deleted again. {@link #mount} says when the
 * machine does not allow it, so a test can fall back to a simulated {@link DiskSpace.FreeSpace}.
 * Used by one test thread.
 */
public final class SmallFileSystem implements AutoCloseable {
    private final Path dir;
    private final Path ballast;

    private SmallFileSystem(Path dir) {
        this.dir = dir;
        this.ballast = dir.resolve("ballast.bin");
    }

    /** Mounts a tmpfs of {@code bytes} on {@code dir} (created); empty when mounting is not permitted here. */
    public static Optional<SmallFileSystem> mount(Path dir, long bytes) {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return Optional.empty();
        }
        try {
            Files.createDirectories(dir);
            Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + bytes, "tmpfs", dir.toString())
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                System.err.println("SmallFileSystem: cannot mount a tmpfs on " + dir + " (" + out.trim() + "): using a simulated full store");
                return Optional.empty();
            }
            return Optional.of(new SmallFileSystem(dir));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    public Path dir() {
        return dir;
    }

    public long free() throws IOException {
        return Files.getFileStore(dir).getUsableSpace();
    }

    /** Grows the ballast until at most {@code leaveBytes} are free (or the file system refuses more). */
    public void fillLeaving(long leaveBytes) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocateDirect(64 << 10);
        try (FileChannel ch = FileChannel.open(ballast, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            long free;
            while ((free = free()) > leaveBytes) {
                chunk.clear().limit((int) Math.min(chunk.capacity(), Math.max(4096, free - leaveBytes)));
                try {
                    ch.write(chunk);
                } catch (IOException e) {
                    return; // full
                }
            }
        }
    }

    /** Deletes the ballast: the space is back. */
    public void freeBallast() throws IOException {
        Files.deleteIfExists(ballast);
    }

    /** Unmounts (lazily, so a file a test left open cannot keep it mounted). */
    @Override
    public void close() {
        try {
            Process p = new ProcessBuilder("umount", "-l", dir.toString()).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(30, TimeUnit.SECONDS);
        } catch (IOException e) {
            System.err.println("SmallFileSystem: cannot unmount " + dir + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

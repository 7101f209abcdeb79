package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Makes a directory tree an exact copy of another one, writing only the {@link #BLOCK}-sized blocks
 * that differ: a copy brought up to date from a recent one writes what changed since (appended tails,
 * rewritten headers and index pages of append-only files), not the whole tree. Stateless; one call
 * owns its target directory for its duration.
 *
 * <p>Why not a plain copy: a shard snapshot is taken on the replica's apply thread, so its duration
 * is a stall of every write of the shard. Copying the whole store (245 MB) took 2.4 to 6.8 s per
 * snapshot on this machine with three nodes under load, and requests timed out behind it; reading
 * both trees and writing only the difference from a copy staged shortly before is bounded by read
 * speed instead (see {@code ShardSnapshots}).
 */
public final class DirMirror {
    /** Comparison and write granularity. */
    public static final int BLOCK = 64 * 1024;
    /** A block of zeros, to compare with (read only). */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(BLOCK).asReadOnlyBuffer();

    private DirMirror() {
    }

    /**
     * What one mirror pass did.
     *
     * @param crcs the CRC-32C of every file the pass compared and copied, by its path relative to the
     *             target (as {@link Path#toString()}): computed from the source blocks as they were read,
     *             so it is the CRC of what the target now holds, without reading the target again
     */
    public record Result(long files, long bytesRead, long bytesWritten, long linked, Map<String, Integer> crcs) {
        public Result {
            crcs = Map.copyOf(crcs);
        }

        /** A pass that reports no CRCs. */
        public Result(long files, long bytesRead, long bytesWritten, long linked) {
            this(files, bytesRead, bytesWritten, linked, Map.of());
        }
    }

    /**
     * As {@link #mirror(Path, Path, Predicate, boolean, Predicate, BooleanSupplier)} with no file
     * treated as immutable.
     */
    public static Result mirror(Path from, Path to, Predicate<Path> skip, boolean force, BooleanSupplier cancelled)
            throws IOException {
        return mirror(from, to, skip, force, p -> false, cancelled);
    }

    /**
     * Makes {@code to} equal to {@code from}, except the paths {@code skip} accepts (relative to
     * {@code from}; skipped files are also removed from {@code to}).
     *
     * @param force     force every file written to (and every directory) to disk before returning
     * @param immutable source files (absolute) that are never written again: hard-linked into {@code to}
     *                  instead of compared and copied, so they cost no read, write or disk space (a
     *                  link already there to the same file is kept)
     * @param cancelled polled between blocks; when it answers true the pass stops with
     *                  {@link CancellationException} and {@code to} is left partly updated
     * @throws IOException a file vanished or could not be read or written; {@code to} is then partial
     */
    public static Result mirror(Path from, Path to, Predicate<Path> skip, boolean force, Predicate<Path> immutable,
                                BooleanSupplier cancelled) throws IOException {
        Files.createDirectories(to);
        Set<Path> wanted = new HashSet<>();
        Map<String, Integer> crcs = new HashMap<>();
        long files = 0;
        long read = 0;
        long written = 0;
        long linked = 0;
        ByteBuffer a = ByteBuffer.allocateDirect(BLOCK);
        ByteBuffer b = ByteBuffer.allocateDirect(BLOCK);
        for (Path p : sortedTree(from)) {
            Path rel = from.relativize(p);
            if (skip.test(rel)) {
                continue;
            }
            Path target = to.resolve(rel.toString());
            wanted.add(rel);
            if (Files.isDirectory(p)) {
                Files.createDirectories(target);
                continue;
            }
            if (immutable.test(p)) {
                if (!Files.exists(target) || !Files.isSameFile(p, target)) {
                    deleteTree(target);
                    Files.createLink(target, p);
                }
                linked++;
                continue;
            }
            if (Files.isRegularFile(target) && (int) Files.getAttribute(target, "unix:nlink") > 1) {
                Files.delete(target); // a link to a file other copies share: never write through it
            }
            long[] rw = mirrorFile(p, target, a, b, force, cancelled);
            files++;
            read += rw[0];
            written += rw[1];
            crcs.put(rel.toString(), (int) rw[2]);
        }
        List<Path> existing = sortedTree(to);
        for (int i = existing.size() - 1; i >= 0; i--) { // children before their parents
            Path p = existing.get(i);
            if (!wanted.contains(to.relativize(p))) {
                deleteTree(p);
            }
        }
        if (force) {
            for (Path p : sortedTree(to)) {
                if (Files.isDirectory(p)) {
                    DurableFiles.fsyncDirectory(p);
                }
            }
            DurableFiles.fsyncDirectory(to);
        }
        return new Result(files, read, written, linked, crcs);
    }

    /** @return {bytes read from {@code from}, bytes written to {@code to}, CRC-32C of the content} */
    private static long[] mirrorFile(Path from, Path to, ByteBuffer a, ByteBuffer b, boolean force, BooleanSupplier cancelled)
            throws IOException {
        if (Files.isDirectory(to)) {
            deleteTree(to);
        }
        long read = 0;
        long written = 0;
        CRC32C crc = new CRC32C();
        try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(to, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = in.size();
            for (long pos = 0; pos < size; pos += BLOCK) {
                if (cancelled.getAsBoolean()) {
                    throw new CancellationException("mirror of " + from + " cancelled");
                }
                int len = (int) Math.min(BLOCK, size - pos);
                readFully(in, a, pos, len);
                crc.update(a);
                a.rewind();
                int have = readUpTo(out, b, pos, len);
                read += len;
                if (have == 0 && a.mismatch(ZEROS.duplicate().limit(len)) < 0) {
                    // past the copy's end and all zeros: left a hole, as in the source. A log's cycle file is
                    // sparse (32 MiB blocks, mostly unwritten), and a dense copy made every snapshot of a shard
                    // with many logs tens of MB per log (24 GB for the 3-node Durable Streams conformance run).
                    a.rewind();
                    continue;
                }
                if (have != len || a.mismatch(b) >= 0) {
                    a.rewind();
                    while (a.hasRemaining()) {
                        out.write(a, pos + a.position());
                    }
                    written += len;
                }
            }
            if (out.size() > size) {
                out.truncate(size);
            } else if (out.size() < size) { // it ended in a hole: the length still matches the source's
                out.write(ByteBuffer.allocate(1), size - 1);
                written++;
            }
            if (force && written > 0) {
                out.force(true);
            }
        }
        return new long[] {read, written, crc.getValue()};
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long pos, int len) throws IOException {
        buf.clear().limit(len);
        while (buf.hasRemaining()) {
            if (ch.read(buf, pos + buf.position()) < 0) {
                throw new IOException("file shrank while it was mirrored (at " + (pos + buf.position()) + ")");
            }
        }
        buf.flip();
    }

    private static int readUpTo(FileChannel ch, ByteBuffer buf, long pos, int len) throws IOException {
        buf.clear().limit(len);
        while (buf.hasRemaining()) {
            if (ch.read(buf, pos + buf.position()) < 0) {
                break;
            }
        }
        buf.flip();
        return buf.remaining();
    }

    /** Every path under {@code root} (not root itself), parents before children. Empty when root is missing. */
    private static List<Path> sortedTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> !p.equals(root)).sorted().toList();
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Deletes a file or a directory tree; a missing path is fine. */
    public static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.deleteIfExists(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}

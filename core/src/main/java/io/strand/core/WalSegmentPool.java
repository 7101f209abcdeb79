package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Thread-safe (a concurrent free list, names from atomics) keeper of the write-ahead directory's
 * segment files: names them, makes a lane's next segment ready before the lane needs it, on the
 * pool's agent ({@code wal-segment-pool}) or on a writer thread that cannot wait for one, and takes
 * segments back once a checkpoint let them go.
 *
 * <p>A segment is allocated and written in full before use, so a group's {@code O_DSYNC} write
 * changes no file size and needs no metadata journal commit. A checkpointed segment is recycled
 * (renamed to {@code free-N.wal}, up to {@link #MAX_FREE}) and reused by a later lane with a new
 * salt, so a busy server writes each segment's zeros once, not once per segment: zero-filling in
 * the background competed with the durable writes for the disk. How each step survives a crash:
 * {@link WalSegment}.
 */
final class WalSegmentPool implements AutoCloseable {
    /** Free segments kept for reuse; more are deleted. */
    static final int MAX_FREE = 4;
    private static final Pattern SEGMENT_NAME = Pattern.compile("(\\d+)-(\\d+)\\.wal");
    private static final Pattern FREE_NAME = Pattern.compile("free-(\\d+)\\.wal");
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(1 << 20);
    private static final SecureRandom SALTS = new SecureRandom();
    /** How often the agent looks for requests it was not woken for (it is woken for each). */
    private static final Duration IDLE_PASS = Duration.ofSeconds(1);

    /** A lane's segment file found in the directory: {@code <lane>-<number>.wal}. */
    record Listed(Path path, int lane, long number) {
    }

    private record Request(int lane, CompletableFuture<WalSegment> segment) {
    }

    private final Path dir;
    private final long segmentBytes;
    /** Asked before a new segment file is allocated (a recycled one needs no new space). */
    private final DiskSpace disk;
    /** Segments whose records are all checkpointed, ready for reuse. */
    private final ConcurrentLinkedDeque<Path> free = new ConcurrentLinkedDeque<>();
    private final AtomicLong nextNumber = new AtomicLong();
    private final AtomicLong nextFreeName = new AtomicLong();
    private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();
    private final Agent agent;

    /** @param firstNumber the number of the first segment this run names (above every leftover's) */
    WalSegmentPool(Path dir, long segmentBytes, DiskSpace disk, long firstNumber) throws IOException {
        this.dir = dir;
        this.segmentBytes = segmentBytes;
        this.disk = disk;
        this.nextNumber.set(firstNumber);
        listFree();
        this.agent = Agent.start("wal-segment-pool", IDLE_PASS, this::prepareRequested);
    }

    /** Bytes of one full-size segment. */
    long segmentBytes() {
        return segmentBytes;
    }

    /** Every lane segment in {@code dir}, by lane, then in the order they were written. */
    static List<Listed> listSegments(Path dir) throws IOException {
        List<Listed> found = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "*.wal")) {
            for (Path p : stream) {
                Matcher m = SEGMENT_NAME.matcher(p.getFileName().toString());
                if (m.matches()) {
                    found.add(new Listed(p, Integer.parseInt(m.group(1)), Long.parseLong(m.group(2))));
                }
            }
        }
        found.sort(Comparator.comparingInt(Listed::lane).thenComparingLong(Listed::number));
        return found;
    }

    /** Free segments of this run's size are reused; others (another segment size) are deleted. */
    private void listFree() throws IOException {
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "free-*.wal")) {
            for (Path p : stream) {
                Matcher m = FREE_NAME.matcher(p.getFileName().toString());
                try {
                    if (m.matches() && Files.size(p) == segmentBytes && free.size() < MAX_FREE) {
                        free.add(p);
                        nextFreeName.accumulateAndGet(Long.parseLong(m.group(1)) + 1, Math::max);
                    } else {
                        Files.delete(p);
                    }
                } catch (NoSuchFileException gone) {
                    // taken for reuse while listed (a test's "crashed" writers still run; a real crash has no threads)
                }
            }
        }
    }

    /** A full-size segment for {@code lane}, prepared on the pool's agent; fails as {@link #prepare} does. */
    CompletableFuture<WalSegment> prepareLater(int lane) {
        CompletableFuture<WalSegment> segment = new CompletableFuture<>();
        requests.add(new Request(lane, segment));
        agent.wake();
        return segment;
    }

    /**
     * The agent's pass. A failure (a full disk) goes to the lane that asked, which prepares the
     * segment itself before its next group and refuses that group when it still cannot.
     */
    private void prepareRequested() {
        for (Request r; (r = requests.poll()) != null; ) {
            try {
                r.segment().complete(prepare(r.lane(), segmentBytes));
            } catch (RuntimeException e) {
                r.segment().completeExceptionally(e);
            }
        }
    }

    /**
     * A segment of {@code bytes} ready for {@code O_DSYNC} writes, on the calling thread: a free one
     * with a new salt, or a new zero-filled one. The header is durable before the file gets a lane's
     * name, so no segment name ever carries groups of an earlier use under a salt that validates them.
     * @throws StrandException {@code storage_full} when a new file does not fit, {@code unavailable} on other I/O errors
     */
    WalSegment prepare(int lane, long bytes) {
        Path path = dir.resolve(lane + "-" + nextNumber.getAndIncrement() + ".wal");
        long salt = SALTS.nextLong();
        try {
            Path reused = bytes == segmentBytes ? free.poll() : null; // an oversized group gets a one-off segment
            if (reused != null) {
                try (FileChannel ch = FileChannel.open(reused, StandardOpenOption.WRITE)) {
                    WalSegment.stamp(ch, salt);
                    ch.force(false);
                }
                Files.move(reused, path, StandardCopyOption.ATOMIC_MOVE);
            } else {
                disk.require(bytes, "a new write-ahead segment"); // zero-filled below: refuse before, not half way
                try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                    for (long at = 0; at < bytes; ) {
                        ByteBuffer zeros = ZEROS.duplicate();
                        zeros.limit((int) Math.min(zeros.capacity(), bytes - at));
                        at += ch.write(zeros, at);
                    }
                    WalSegment.stamp(ch, salt);
                    ch.force(true);
                }
            }
            DurableFiles.fsyncDirectory(dir);
            return WalSegment.open(path, bytes, salt);
        } catch (IOException e) {
            StrandException full = disk.outOfSpace(e, "preparing write-ahead segment " + path);
            if (full != null) {
                try {
                    Files.deleteIfExists(path); // a half zero-filled file has no header: nothing to replay
                } catch (IOException ignored) {
                    // listed and deleted as an unused free segment next start
                }
                throw full;
            }
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot prepare write-ahead segment " + path + ": " + e.getMessage(), Map.of(), e);
        }
    }

    /**
     * Takes back segments whose records are durable in the stores: recycled while fewer than
     * {@link #MAX_FREE} wait (full-size ones only), deleted otherwise; then fsyncs the directory.
     */
    void release(List<Path> segments) throws IOException {
        for (Path p : segments) {
            if (!Files.exists(p)) {
                continue;
            }
            if (free.size() < MAX_FREE && Files.size(p) == segmentBytes) {
                Path target = dir.resolve("free-" + nextFreeName.getAndIncrement() + ".wal");
                Files.move(p, target, StandardCopyOption.ATOMIC_MOVE);
                free.add(target);
            } else {
                Files.delete(p);
            }
        }
        DurableFiles.fsyncDirectory(dir);
    }

    /** Stops the agent after its pass in progress. Call after every lane has its spare (or gave up on it). */
    @Override
    public void close() {
        agent.close();
        for (Request r; (r = requests.poll()) != null; ) {
            r.segment().completeExceptionally(new StrandException(ErrorCode.UNAVAILABLE, "the write-ahead log is closed"));
        }
    }
}

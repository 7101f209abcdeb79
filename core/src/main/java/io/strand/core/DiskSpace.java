package io.strand.core;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one free-space guard of a data directory, below every store: log appends, doc writes, new
 * write-ahead segments and new queue files ask it before they touch bytes the file system must
 * find room for. Chronicle maps its files sparse, so a write into a page the file system cannot
 * back is a SIGBUS the JVM reports as an {@link InternalError} — after part of an excerpt may be
 * written. Refusing before the write, with {@code 507 storage_full}, changes nothing.
 *
 * <p>Thread-safe: the reading is a volatile pair refreshed under this object's lock, and what
 * writers claimed since then is an {@link AtomicLong}. Writers do not {@code statfs} per write:
 * one {@link FileStore#getUsableSpace()} measured ≈1.2–1.3 µs on this box (tmpfs and ext4; a
 * fresh {@code Files.getFileStore(dir)} first costs ≈70–80 µs, so the store is looked up once),
 * so the reading is refreshed at most every {@link #DEFAULT_REFRESH} and, in between, every
 * {@link #require claim} is subtracted from it, so a burst cannot overshoot the reading. Space
 * freed by anyone is seen at the next refresh: writes resume by themselves.
 *
 * <p>The reserve is what the guard keeps free for writes it does not see byte by byte: the first
 * pages and index of a new queue cycle file, Chronicle Map pages, snapshots, other processes.
 */
public final class DiskSpace {
    /** Kept free on the data directory's file system ({@code --min-free-disk}). */
    public static final long DEFAULT_RESERVE_BYTES = 64L << 20;
    /** How old a free-space reading may get before a writer measures again. */
    public static final Duration DEFAULT_REFRESH = Duration.ofMillis(100);

    /** Where the free bytes come from: the real file system, or a test's simulated one. */
    @FunctionalInterface
    public interface FreeSpace {
        long usableBytes() throws IOException;
    }

    /** One reading for health and status: the directory, its free bytes and the reserve. */
    public record Reading(Path dir, long freeBytes, long reserveBytes, String error) {
        public boolean ok() {
            return error == null && freeBytes >= reserveBytes;
        }
    }

    private final Path dir;
    private final long reserveBytes;
    private final long refreshNanos;
    private final FreeSpace source;
    private volatile long measured;
    private volatile long measuredAt;
    private volatile String readError;
    /** Bytes writers were allowed to write since the last reading. */
    private final AtomicLong claimed = new AtomicLong();

    public DiskSpace(Path dir, long reserveBytes, Duration refresh, FreeSpace source) {
        if (reserveBytes < 0 || refresh.isNegative()) {
            throw new IllegalArgumentException("reserve and refresh must be ≥ 0");
        }
        this.dir = dir;
        this.reserveBytes = reserveBytes;
        this.refreshNanos = refresh.toNanos();
        this.source = source;
        refresh(System.nanoTime(), true);
    }

    /** The guard of {@code dir}'s file system (looked up once), keeping {@code reserveBytes} free. */
    public static DiskSpace of(Path dir, long reserveBytes) {
        FileStore store;
        try {
            Path existing = dir.toAbsolutePath();
            while (existing != null && !Files.exists(existing)) {
                existing = existing.getParent();
            }
            store = Files.getFileStore(existing == null ? dir : existing);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot find the file system of " + dir + ": " + e.getMessage(), Map.of(), e);
        }
        return new DiskSpace(dir, reserveBytes, DEFAULT_REFRESH, store::getUsableSpace);
    }

    /** A guard that never refuses (tests of other things, tools). */
    public static DiskSpace unlimited(Path dir) {
        return new DiskSpace(dir, 0, Duration.ofDays(1), () -> Long.MAX_VALUE);
    }

    /**
     * Claims {@code bytes} for {@code what}, or refuses with {@code storage_full} when the file
     * system would keep less than the reserve afterwards. Call before writing anything. Any thread.
     */
    public void require(long bytes, String what) {
        long free = available();
        if (free - bytes < reserveBytes) {
            throw full(what, bytes, free);
        }
        claimed.addAndGet(bytes);
    }

    /** Free bytes as last measured (at most {@link #DEFAULT_REFRESH} old) minus what was claimed since. */
    public long available() {
        long now = System.nanoTime();
        if (now - measuredAt >= refreshNanos) {
            refresh(now, false);
        }
        return measured - claimed.get();
    }

    /** The current reading, for health checks and status. */
    public Reading reading() {
        long free = available();
        return new Reading(dir, free, reserveBytes, readError);
    }

    public Path dir() {
        return dir;
    }

    public long reserveBytes() {
        return reserveBytes;
    }

    /**
     * Turns a failed write into {@code storage_full} when it is the file system running out (a
     * SIGBUS on a mapped page, {@code ENOSPC}, {@code EDQUOT}) and makes the next claim measure
     * again; anything else is returned as null. The caller must have undone what it wrote.
     */
    public StrandException outOfSpace(Throwable failure, String what) {
        if (!isOutOfSpace(failure)) {
            return null;
        }
        measuredAt = System.nanoTime() - refreshNanos; // measure again on the next claim
        return new StrandException(ErrorCode.STORAGE_FULL, what + " failed: the file system of " + dir
                + " is full (" + failure + "); nothing was written. Free space and writes resume",
                extras(available()), failure);
    }

    /** True when {@code t} (or a cause) says the file system is out of space. */
    public static boolean isOutOfSpace(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String m = String.valueOf(c.getMessage());
            if (c instanceof InternalError && m.contains("unsafe memory access")) {
                return true; // a SIGBUS on a mapped page the file system could not back
            }
            if (m.contains("No space left") || m.contains("Disk quota exceeded")) {
                return true;
            }
        }
        return false;
    }

    private StrandException full(String what, long bytes, long free) {
        return new StrandException(ErrorCode.STORAGE_FULL, "disk nearly full: " + what + " needs " + bytes
                + " bytes, the file system of " + dir + " has " + Math.max(0, free) + " bytes free and keeps "
                + reserveBytes + " in reserve; free space and writes resume by themselves", extras(free));
    }

    private Map<String, Object> extras(long free) {
        Map<String, Object> extras = new LinkedHashMap<>();
        extras.put("dataDir", dir.toString());
        extras.put("freeBytes", Math.max(0, free));
        extras.put("reserveBytes", reserveBytes);
        return extras;
    }

    private synchronized void refresh(long now, boolean first) {
        if (!first && now - measuredAt < refreshNanos) {
            return; // another thread measured meanwhile
        }
        try {
            measured = source.usableBytes();
            readError = null;
        } catch (IOException | RuntimeException e) {
            readError = "cannot read free space of " + dir + ": " + e.getMessage();
            if (first) {
                measured = Long.MAX_VALUE / 2; // unknown: do not refuse what may well fit
            }
        }
        claimed.set(0);
        measuredAt = now;
    }
}

package io.strand.docstore;

import io.strand.core.DiskSpace;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Thread-safe (its counters are {@code synchronized}): what the doc store may still take. Live docs and stored
 * bytes against the configured capacity ({@link DocStoreConfig#maxEntries()}, {@link DocStoreConfig#byteBudget()}),
 * and free space on the data directory's disk.
 *
 * <p>Turns reserve a change's doc and byte deltas before anything is written and release them when the change
 * is abandoned; start-up counts what the map already holds. Chronicle's journal and map are mapped files, where
 * a page the disk cannot back is a SIGBUS, so a write asks {@link DiskSpace} first and a failed journal append is
 * classified here ({@code storage_full} when the disk ran out, else {@code unavailable}).
 */
final class DocCapacity {
    private static final System.Logger LOG = System.getLogger(DocCapacity.class.getName());

    private final long maxDocs;
    private final long maxBytes;
    /** The data directory's free-space guard, shared with the other stores; asked before each change is written. */
    private final DiskSpace disk;
    private long docs;
    private long bytes;

    DocCapacity(DocStoreConfig config, DiskSpace disk) {
        this.maxDocs = config.maxEntries();
        this.maxBytes = config.byteBudget();
        this.disk = disk;
    }

    /**
     * Refuses with {@code storage_full} unless the disk has room for {@code key}'s journal record and map entry
     * holding {@code json} (null for a delete).
     */
    void requireDisk(String key, byte[] json) {
        // the journal record and the map entry: both are mapped files, where a page the disk cannot back is a SIGBUS
        disk.require(2L * (json == null ? 0 : json.length) + 2L * key.length() + 256, "writing doc '" + key + "'");
    }

    /** Claims {@code docDelta} docs and {@code byteDelta} bytes, or refuses with {@code storage_full}. */
    synchronized void reserve(long docDelta, long byteDelta) {
        if (docDelta > 0 && docs + docDelta > maxDocs) {
            throw new StrandException(ErrorCode.STORAGE_FULL, "doc store is full: " + docs + " of " + maxDocs
                    + " docs (maxEntries); delete docs or raise the capacity");
        }
        if (byteDelta > 0 && bytes + byteDelta > maxBytes) {
            throw new StrandException(ErrorCode.STORAGE_FULL, "doc store is full: storing " + byteDelta
                    + " more bytes would pass the " + maxBytes + "-byte budget (maxEntries × (averageKeyBytes"
                    + " + averageValueBytes + 8)); delete docs or raise the capacity");
        }
        docs += docDelta;
        bytes += byteDelta;
    }

    /** Gives back what {@link #reserve} claimed for a change that will not be written. */
    synchronized void release(long docDelta, long byteDelta) {
        docs -= docDelta;
        bytes -= byteDelta;
    }

    /** Counts one doc the map held at start-up ({@code docBytes}: its key and encoded value). */
    synchronized void load(long docBytes) {
        docs++;
        bytes += docBytes;
    }

    /** After start-up has {@link #load loaded} every doc: warns when the store already holds more than it accepts. */
    void warnIfOver(Path dir) {
        long d;
        long b;
        synchronized (this) {
            d = docs;
            b = bytes;
        }
        if (d > maxDocs || b > maxBytes) {
            LOG.log(System.Logger.Level.WARNING, "doc store {0} holds {1} docs / {2} bytes, over its configured capacity"
                    + " ({3} docs / {4} bytes): new docs are refused", dir, d, b, maxDocs, maxBytes);
        }
    }

    synchronized long docs() {
        return docs;
    }

    synchronized long bytes() {
        return bytes;
    }

    /** A failed journal append as the error its caller gets: {@code storage_full} when the disk ran out. */
    RuntimeException classifyAppendFailure(Throwable e) {
        if (e instanceof StrandException se) {
            return se;
        }
        StrandException full = disk.outOfSpace(e, "doc journal append");
        if (full != null) {
            return full;
        }
        return new StrandException(ErrorCode.UNAVAILABLE, "doc journal append failed: " + e, Map.of(), e);
    }
}

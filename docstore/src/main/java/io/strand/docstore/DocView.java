package io.strand.docstore;

import io.strand.core.DurableFiles;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BiConsumer;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ChronicleMapBuilder;

/**
 * Thread-safe (a Chronicle Map): any thread reads; each key is written only by its workspace's writer thread
 * (after the group sync, {@link DocPublisher}) or by start-up. The map view of the docs ({@code DATA/docs.cm3}):
 * key {@code ws/doc}, value a {@link StoredDoc}. It holds only values already durable in the {@link DocJournal}
 * and is rebuilt from snapshot + journal whenever it cannot be trusted.
 *
 * <p>Sizing: Chronicle Map has a fixed capacity, so the map is created for {@link #HEADROOM} × the
 * configured entries with {@link #MAX_BLOAT} extra tiers, while {@link DocCapacity} refuses writes past the
 * configured entries and byte budget: the map itself never runs out in normal use.
 */
final class DocView implements AutoCloseable {
    static final double HEADROOM = 1.25;
    static final double MAX_BLOAT = 4.0;
    /** Changes when the sizing rules or the value format change; a mismatch forces a rebuild. */
    private static final long FORMAT = 1;

    private final Path file;
    private final ChronicleMap<String, byte[]> map;

    private DocView(Path file, ChronicleMap<String, byte[]> map) {
        this.file = file;
        this.map = map;
    }

    /** Identifies the map's on-disk sizing, recorded in the checkpoint: a different one needs a rebuild. */
    static long fingerprint(DocStoreConfig c) {
        long h = FORMAT;
        h = h * 31 + c.maxEntries();
        h = h * 31 + c.averageKeyBytes();
        h = h * 31 + c.averageValueBytes();
        h = h * 31 + Double.hashCode(HEADROOM);
        h = h * 31 + Double.hashCode(MAX_BLOAT);
        return h;
    }

    private static ChronicleMapBuilder<String, byte[]> builder(DocStoreConfig c) {
        return ChronicleMap.of(String.class, byte[].class)
                .name("strand-docs")
                .averageKeySize(c.averageKeyBytes())
                .averageValueSize(c.averageValueBytes() + 8)
                .entries((long) Math.ceil(c.maxEntries() * HEADROOM) + 16)
                .maxBloatFactor(MAX_BLOAT)
                .skipCloseOnExitHook(true);
    }

    /** A new, empty map file (an old one is deleted first). */
    static DocView create(Path file, DocStoreConfig c) {
        try {
            Files.deleteIfExists(file);
            return new DocView(file, builder(c).createPersistedTo(file.toFile()));
        } catch (IOException | RuntimeException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot create doc map " + file + ": " + e, java.util.Map.of(), e);
        }
    }

    /** Opens a map file that was closed cleanly (no dead process can hold a segment lock). */
    static DocView openClean(Path file, DocStoreConfig c) throws IOException {
        return new DocView(file, builder(c).createPersistedTo(file.toFile()));
    }

    /** Opens a map file a crashed process may have been writing: Chronicle's recovery, sole access. */
    static DocView recover(Path file, DocStoreConfig c) throws IOException {
        return new DocView(file, builder(c).recoverPersistedTo(file.toFile(), true));
    }

    StoredDoc get(String key) {
        byte[] v = map.get(key);
        return v == null ? null : StoredDoc.decode(v);
    }

    void put(String key, StoredDoc doc) {
        map.put(key, doc.encode());
    }

    void put(String key, byte[] encoded) {
        map.put(key, encoded);
    }

    void remove(String key) {
        map.remove(key);
    }

    long size() {
        return map.longSize();
    }

    /** Visits every entry (values encoded as {@link StoredDoc}); concurrent writes may or may not be seen. */
    void forEach(BiConsumer<String, byte[]> visitor) {
        map.forEach(visitor);
    }

    /** Forces the map file's pages to disk. */
    void force() throws IOException {
        DurableFiles.fsync(file);
    }

    Path file() {
        return file;
    }

    @Override
    public void close() {
        map.close();
    }
}

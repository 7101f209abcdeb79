package io.strand.coldtier;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * An object store holding cold segments and manifests: a local directory ({@link FileColdStore})
 * or an S3-compatible bucket ({@link S3ColdStore}). Implementations are thread-safe.
 *
 * <p>Keys are relative ({@code ws/log/seg/…}); a store applies its own root or prefix. Failures are
 * {@link io.strand.core.StrandException}s classified at this edge: {@code NOT_FOUND} when the object
 * is absent, {@code COLD_UNAVAILABLE} when the store cannot answer (down, 5xx, timeout, denied).
 * Conditional writes report a failed precondition as an empty result, never as an exception, so the
 * caller (the manifest) decides whether it lost a race or its own retried write landed.
 */
public interface ColdStore extends AutoCloseable {

    /** One stored object as listed: its relative key, size and last-modified time. */
    record ObjectInfo(String key, long size, Instant lastModified) {
    }

    /** An object's bytes with the entity tag a later {@link #putIfMatch} must present. */
    record Versioned(byte[] bytes, String etag) {
    }

    /** Uploads a local file under {@code key}, replacing any object there (keys are deterministic, so this is harmless). */
    void put(String key, Path file);

    /** Writes {@code bytes} under {@code key}, replacing any object there. */
    void put(String key, byte[] bytes);

    /** The whole object. */
    byte[] get(String key);

    /**
     * Up to {@code length} bytes starting at {@code offset}; shorter (possibly empty) when the
     * object ends first, so callers detect truncation themselves.
     */
    byte[] getRange(String key, long offset, int length);

    /** The whole object with its entity tag, or empty when absent. */
    Optional<Versioned> getVersioned(String key);

    /** Size and time of the object, or empty when absent. */
    Optional<ObjectInfo> head(String key);

    /** Every object whose key starts with {@code prefix}, in key order. */
    List<ObjectInfo> list(String prefix);

    /** Deletes the object; deleting an absent object is not an error. */
    void delete(String key);

    /** Creates the object only if none exists ({@code If-None-Match: *}); the new etag, or empty if one existed. */
    Optional<String> putIfAbsent(String key, byte[] bytes);

    /** Replaces the object only if its etag is still {@code etag} ({@code If-Match}); the new etag, or empty otherwise. */
    Optional<String> putIfMatch(String key, byte[] bytes, String etag);

    /** Where this store points, for messages and logs (never credentials). */
    String describe();

    @Override
    void close();
}

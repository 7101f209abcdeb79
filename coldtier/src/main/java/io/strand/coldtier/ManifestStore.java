package io.strand.coldtier;

import java.util.Arrays;
import java.util.Optional;

/**
 * Reads a log's manifest and commits the next generation with a conditional write: create-if-absent
 * for generation 1, If-Match on the etag read for every later one. Two writers racing from the same
 * generation cannot both win; the loser gets a {@link Conflict} with what is stored now. Stateless
 * apart from the store, so thread-safe.
 *
 * <p>A failed precondition is not trusted blindly: after an SDK-internal retry, a 412 may answer our
 * own first attempt that already landed (STACK.md). So on any failed precondition the manifest is
 * re-read, and if the stored bytes are exactly the bytes we wrote, the commit succeeded.
 */
public final class ManifestStore {
    private final ColdStore store;

    /** A manifest with the etag it was read at ({@code null} when none is stored: generation 0). */
    public record Snapshot(Manifest manifest, String etag) {
    }

    /** The outcome of a commit: it landed, or someone else committed first. */
    public sealed interface Commit permits Committed, Conflict {
    }

    /** Our generation is stored; {@code snapshot} carries its etag for the next commit. */
    public record Committed(Snapshot snapshot) implements Commit {
    }

    /** Another writer committed first; {@code current} is what is stored now (generation 0 if deleted). */
    public record Conflict(Snapshot current) implements Commit {
    }

    public ManifestStore(ColdStore store) {
        this.store = store;
    }

    /** The stored manifest, or an empty generation-0 manifest when none exists. */
    public Snapshot read(String key, String ws, String log) {
        Optional<ColdStore.Versioned> v = store.getVersioned(key);
        if (v.isEmpty()) {
            return new Snapshot(Manifest.empty(ws, log), null);
        }
        Manifest m = Manifest.fromJson(v.get().bytes(), key);
        if (!m.ws().equals(ws) || !m.log().equals(log)) {
            throw ColdErrors.corrupt(key, "manifest belongs to " + m.ws() + "/" + m.log());
        }
        return new Snapshot(m, v.get().etag());
    }

    /**
     * Stores {@code next}, which must be {@code base}'s generation + 1, only if the stored manifest
     * is still {@code base}.
     */
    public Commit commit(String key, Snapshot base, Manifest next) {
        if (next.generation() != base.manifest().generation() + 1) {
            throw new IllegalArgumentException("generation " + next.generation() + " does not follow "
                    + base.manifest().generation());
        }
        next.validate(key);
        byte[] bytes = next.toJson();
        Optional<String> etag = base.etag() == null
                ? store.putIfAbsent(key, bytes)
                : store.putIfMatch(key, bytes, base.etag());
        if (etag.isPresent() && !etag.get().isEmpty()) {
            return new Committed(new Snapshot(next, etag.get()));
        }
        // Precondition failed (possibly an ambiguous answer to a retried attempt), or no etag came back: re-read.
        Optional<ColdStore.Versioned> now = store.getVersioned(key);
        if (now.isPresent() && Arrays.equals(now.get().bytes(), bytes)) {
            return new Committed(new Snapshot(next, now.get().etag()));
        }
        if (now.isEmpty()) {
            return new Conflict(new Snapshot(Manifest.empty(next.ws(), next.log()), null));
        }
        return new Conflict(new Snapshot(Manifest.fromJson(now.get().bytes(), key), now.get().etag()));
    }
}

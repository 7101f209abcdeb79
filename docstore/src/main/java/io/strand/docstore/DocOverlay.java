package io.strand.docstore;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Thread-safe (a concurrent map), and each key is touched only by its workspace's writer thread: the changes
 * committed to the journal but not yet published to the map view. A turn reads a doc here first, so a later turn
 * in the same group sees an earlier turn's change before it is durable; readers never look here.
 */
final class DocOverlay {
    private final ConcurrentHashMap<String, PendingChange> pending = new ConcurrentHashMap<>();
    private final DocPublisher publisher;

    DocOverlay(DocPublisher publisher) {
        this.publisher = publisher;
    }

    /** The newest change to {@code id} the view does not show yet (pending, or refused by the view), or null. */
    PendingChange latest(DocId id) {
        PendingChange p = pending.get(id.key());
        return p != null ? p : publisher.unpublished(id.key());
    }

    /** {@code p} was appended to the journal: later turns see it from now on. */
    void add(PendingChange p) {
        pending.put(p.id.key(), p);
    }

    /** {@code p} was published (or replaced by a newer change, which stays). */
    void remove(PendingChange p) {
        pending.remove(p.id.key(), p);
    }
}

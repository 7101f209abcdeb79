package io.strand.docstore;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs on the writer thread that committed a change, once its group is durable; readers on any thread: shows
 * durable changes to readers by writing them into the {@link DocView} and the {@link DocIndex}.
 *
 * <p>A group's after-durable hooks run in turn order, so what is published is exactly what is durable, and the
 * changes of a group whose write failed are never published. If the map view refuses a durable change (it has a
 * fixed size, and its pages are mapped), the change is kept in {@code unpublished}, which reads consult first so
 * it is not hidden, and every later doc write is refused until a restart rebuilds the map.
 */
final class DocPublisher {
    private static final System.Logger LOG = System.getLogger(DocPublisher.class.getName());

    private final DocView view;
    private final DocIndex index;
    private final DocMetrics metrics;
    /** Durable changes the view refused (normally empty); reads consult it first so none is hidden. */
    private final ConcurrentHashMap<String, PendingChange> unpublished = new ConcurrentHashMap<>();
    private volatile String viewFailure;

    DocPublisher(DocView view, DocIndex index, DocMetrics metrics) {
        this.view = view;
        this.index = index;
        this.metrics = metrics;
    }

    /** Writes a durable change into the view and the name index. Writer thread, after the group sync. */
    void publish(PendingChange p) {
        String key = p.id.key();
        try {
            if (p.state == null) {
                view.remove(key);
            } else {
                view.put(key, p.state);
            }
            if (!unpublished.isEmpty()) {
                unpublished.remove(key);
            }
        } catch (RuntimeException | InternalError e) { // InternalError: a map page the disk could not back
            metrics.viewError();
            unpublished.put(key, p);
            viewFailure = "the doc map view could not store a durable change to '" + key + "' (" + e.getMessage()
                    + "); doc writes are refused until a restart rebuilds the map (raise the doc capacity settings)";
            LOG.log(System.Logger.Level.ERROR, viewFailure, e);
        }
        if (p.state == null) {
            index.remove(p.id.ws(), p.id.doc());
        } else {
            index.add(p.id.ws(), p.id.doc());
        }
    }

    /** The durable doc at {@code key} as readers see it, or null when it does not exist. Any thread. */
    StoredDoc durable(String key) {
        if (!unpublished.isEmpty()) {
            PendingChange u = unpublished.get(key);
            if (u != null) {
                return u.state;
            }
        }
        return view.get(key);
    }

    /** A durable change to {@code key} the view refused, or null (the normal case). */
    PendingChange unpublished(String key) {
        return unpublished.isEmpty() ? null : unpublished.get(key);
    }

    /** Why doc writes are refused, or null while the view takes every change. */
    String failure() {
        return viewFailure;
    }

    /** True when the view holds every durable change it was given (a clean shutdown may be recorded). */
    boolean allPublished() {
        return unpublished.isEmpty();
    }
}

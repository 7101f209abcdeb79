package io.strand.docstore;

import io.strand.core.Names;

/**
 * A doc's identity: its workspace and its name, validated once, and the {@code ws/doc} key the journal, the
 * map view and the snapshot store it under. Immutable.
 *
 * <p>Build one with {@link #of} where a request enters the server (the HTTP route, the WebSocket frame) and pass
 * it down: nothing below re-validates the names.
 */
public final class DocId {
    private final String ws;
    private final String doc;
    private final String key;

    private DocId(String ws, String doc, String key) {
        this.ws = ws;
        this.doc = doc;
        this.key = key;
    }

    /**
     * Validates {@code ws} as a workspace name, then {@code doc} as a doc name ({@code invalid_name} on the first
     * that fails).
     */
    public static DocId of(String ws, String doc) {
        Names.workspace(ws);
        Names.object("doc", doc);
        return new DocId(ws, doc, ws + "/" + doc);
    }

    /** The id of a doc this store already holds under {@code ws}; its names were validated when it was written. */
    static DocId known(String ws, String doc) {
        return new DocId(ws, doc, ws + "/" + doc);
    }

    /** The id of a key this store wrote (a journal record, a map entry); its names were validated then. */
    static DocId fromKey(String key) {
        int slash = key.indexOf('/');
        return new DocId(key.substring(0, slash), key.substring(slash + 1), key);
    }

    public String ws() {
        return ws;
    }

    public String doc() {
        return doc;
    }

    /** {@code ws/doc}: the key in the journal, the map view and the snapshot. */
    String key() {
        return key;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DocId other && other.key.equals(key);
    }

    @Override
    public int hashCode() {
        return key.hashCode();
    }

    @Override
    public String toString() {
        return key;
    }
}

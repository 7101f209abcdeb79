package io.strand.app.stores;

/**
 * Which logs hold a Durable Streams stream (SPEC §14), asked by {@link LocalWrites} before a native
 * write changes one. A stream's rules (closure, content type, producers, offsets that are never
 * reused) live in the DS endpoint, so a native append or delete would bypass them: a closed stream
 * would grow, a byte stream could get an entry no DS read decodes, a deleted log would hand out the
 * stream's old offsets again. Native reads (pages, subscriptions) stay open; trim and retention stay
 * open too, and DS reads below the trimmed start answer {@code 410}. Implementations are thread-safe.
 */
public interface StreamBackedLogs {
    /** No log holds a stream (tests, and stores without a DS endpoint). */
    StreamBackedLogs NONE = (stores, ws, log) -> null;

    /** The DS path of the stream {@code ws}/{@code log} holds in {@code stores}, or null when it holds none. */
    String streamPath(Stores stores, String ws, String log);
}

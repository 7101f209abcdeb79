package io.strand.app.stores;

/**
 * What a cluster replica hands to the Durable Streams endpoint (SPEC §14): the stream writes it
 * applies from its shard's log, the moment before a snapshot of its stores, and the moment they
 * close. Called on the shard's apply thread only; implementations keep their state per store set.
 */
public interface ReplicatedStreams extends StreamBackedLogs {
    /**
     * Applies one Durable Streams write ({@code call}, bytes the endpoint wrote) to {@code stores} as
     * of the leader's stamp, after every earlier command took effect; returns the answer's bytes. A
     * refused request is an answer, the same on every replica; an exception means this replica cannot
     * apply it (an I/O failure).
     */
    byte[] apply(Stores stores, byte[] call, long stampedAtMillis);

    /** Writes what the endpoint keeps in memory for {@code stores} into their directory, which a snapshot copies next. */
    void beforeSnapshot(Stores stores);

    /** {@code stores} close (a snapshot replaces them, the replica moves, the node stops): forget what was built on them. */
    void closing(Stores stores);

    /** None, unless the endpoint keeps streams in {@code stores} ({@link StreamBackedLogs}). */
    @Override
    default String streamPath(Stores stores, String ws, String log) {
        return null;
    }
}

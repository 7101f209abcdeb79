package io.strand.app.stores;

import java.util.List;

/**
 * Where each workspace's data lives on this node and how writes reach it: the seam between the
 * HTTP/WebSocket services and the stores. A single node ({@link SingleNode}) has one store set and
 * writes straight into it; a cluster node has one set per shard replica and writes through the
 * shard's Raft group. Services never hold a store directly: they ask here per request.
 */
public interface Placement extends AutoCloseable {
    /** This node's copy of {@code ws}'s stores (reads, subscriptions). */
    Stores local(String ws);

    /**
     * Returns once this node's copy of {@code ws} holds every write acknowledged (on any node)
     * before the call, so a read that follows sees them; at once on a single node. Throws a
     * {@code 503 unavailable} {@link io.strand.core.StrandException} when that cannot be known in time.
     */
    void awaitCaughtUp(String ws);

    /** Where writes go. */
    WritePath writes();

    /** Every store set on this node (listings across workspaces, node-wide metrics). */
    List<Stores> all();

    /** What an acknowledged write's {@code durable} field says: {@code fsync}, {@code os} or {@code quorum}. */
    String durableWire();

    /** True in cluster mode. */
    default boolean clustered() {
        return false;
    }

    @Override
    void close();
}

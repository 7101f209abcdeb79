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
     * Returns true once this node's copy of {@code ws} holds every write acknowledged (on any node)
     * before the call, so a read that follows sees them; at once on a single node. Returns false
     * when a cluster node cannot reach a majority of the shard's replicas: the read may go on from the
     * local copy as it is (it can miss writes acknowledged just before the majority was lost). Throws
     * a {@code 503 unavailable} {@link io.strand.core.StrandException} when the shard is up but this
     * copy does not catch up in time.
     */
    boolean awaitCaughtUp(String ws);

    /** Where writes go. */
    WritePath writes();

    /** Every store set on this node (listings across workspaces, node-wide metrics). */
    List<Stores> all();

    /** What an acknowledged write's {@code durable} field says: {@code fsync}, {@code os} or {@code quorum}. */
    String durableWire();

    /** True when this node decides {@code ws}'s background changes (expiries): always on a single node, its shard's leader on a cluster. */
    default boolean leads(String ws) {
        return true;
    }

    /**
     * The HTTP address of a node to relay {@code ws}'s requests to when this node does not replicate
     * its shard (a cluster with more nodes than replicas); empty when this node serves it.
     */
    default java.util.Optional<String> relayFor(String ws) {
        return java.util.Optional.empty();
    }

    /**
     * The workspaces ({@code GET /v1/ws} objects) of the shards this node does not replicate, asked of
     * nodes that do, with the caller's {@code authorization} (a cluster with more nodes than replicas);
     * empty otherwise.
     */
    default List<com.fasterxml.jackson.databind.JsonNode> workspacesElsewhere(String authorization) {
        return List.of();
    }

    /**
     * Who is told of the retention worker's policy trims on this node's store sets, those opened later
     * too (on a cluster only a shard's leader makes them). Set once, when the audit log exists.
     */
    default void onPolicyTrim(io.strand.logtier.Retention.PolicyTrims trims) {
        // no retention worker of its own (test placements)
    }

    /** True in cluster mode. */
    default boolean clustered() {
        return false;
    }

    @Override
    void close();
}

package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.stores.Placement;
import io.strand.core.Agent;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.docstore.DocId;
import io.strand.docstore.DocValue;
import java.time.Duration;
import java.util.Optional;

/**
 * Owns the {@code strand-node-directory} agent, whose thread alone writes this node's entry; reads
 * are lock-free from the local replica. Where each node of the cluster serves HTTP: the doc
 * {@code _system/nodes}, in the system shard every node replicates ({@link io.strand.cluster.ClusterSpec#systemShard}).
 *
 * <p>Doc value (JSON): {@code {"n1":"http://10.0.0.1:8081","n2":…}}, one entry per node: the host of its
 * Raft address in {@code --cluster} (where the other nodes reach it) and its HTTP port. Each node sets
 * its own entry with a doc {@code apply} once it serves, and again whenever the stored entry differs (a
 * restart on another port, a wiped system replica); the commit point is the apply's Raft commit.
 */
final class NodeDirectory implements AutoCloseable {
    static final DocId ID = DocId.of(Names.SYSTEM_WORKSPACE, "nodes");
    static final Duration CHECK_EVERY = Duration.ofSeconds(1);

    private final Placement placement;
    private final String nodeId;
    private Agent writer;
    private volatile String selfUrl;

    NodeDirectory(Placement placement, String nodeId) {
        this.placement = placement;
        this.nodeId = nodeId;
    }

    /**
     * Publishes {@code selfUrl} as this node's address once its HTTP port listens, checking each
     * {@link #CHECK_EVERY} that the system shard holds it (retrying while it cannot take it). Once.
     */
    synchronized void publish(String url) {
        if (writer != null) {
            throw new IllegalStateException("already publishing " + selfUrl);
        }
        this.selfUrl = url;
        this.writer = Agent.start("strand-node-directory", CHECK_EVERY, this::publishPass, true);
    }

    /** One pass: writes this node's entry unless the local replica already holds it. */
    private void publishPass() {
        String url = selfUrl;
        if (urlOf(nodeId).filter(url::equals).isPresent()) {
            return;
        }
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.putArray("ops").addObject().put("op", "set").put("path", nodeId).put("value", url);
        placement.writes().doc("apply", ID, body).join();
    }

    /** Node {@code id}'s HTTP address as this node's replica of the system shard holds it; empty until it published one. */
    Optional<String> urlOf(String id) {
        try {
            return placement.local(Names.SYSTEM_WORKSPACE).docs().get(ID).map(DocValue::value)
                    .map(v -> v.path(id)).filter(JsonNode::isTextual).map(JsonNode::asText);
        } catch (RuntimeException e) {
            return Optional.empty(); // the system replica is being rebuilt: unknown for now
        }
    }

    @Override
    public synchronized void close() {
        if (writer != null) {
            writer.close();
        }
    }
}

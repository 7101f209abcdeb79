package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.audit.AuditLog;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.app.http.HttpIo;
import io.strand.cluster.ClusterSpec;
import io.strand.cluster.ClusterStatus;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /v1/cluster}, {@code GET /v1/cluster/shard?ws=} and {@code POST /v1/cluster/replace}
 * (SPEC §13): root or an admin token ({@code --auth false}: open). Stateless.
 */
public final class ClusterHttp implements HttpService {
    private final ClusterPlacement cluster;
    private final HttpIo io;
    private final AuditLog audit;
    /** This node's HTTP address, for its own row (other nodes' are not known to it). */
    private final java.util.function.Supplier<String> selfHttp;

    public ClusterHttp(ClusterPlacement cluster, HttpIo io, AuditLog audit, java.util.function.Supplier<String> selfHttp) {
        this.cluster = cluster;
        this.io = io;
        this.audit = audit;
        this.selfHttp = selfHttp;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/cluster", this::status)
                .get("/cluster/shard", this::shard)
                .post("/cluster/replace", this::replace);
    }

    private static Principal admin(ServerRequest req) {
        Principal who = req.context().get(Principal.class).orElseThrow();
        if (!who.isRoot() && who.scope() != Scope.ADMIN) {
            throw new StrandException(ErrorCode.FORBIDDEN, "the cluster's status needs the root token or an admin token");
        }
        return who;
    }

    private void status(ServerRequest req, ServerResponse res) {
        admin(req);
        ClusterStatus s = cluster.node().status();
        ObjectNode body = Json.MAPPER.createObjectNode().put("node", s.node());
        ArrayNode nodes = body.putArray("nodes");
        for (ClusterStatus.NodeStatus n : s.nodes()) {
            ObjectNode o = nodes.addObject().put("id", n.id()).put("raft", n.raft());
            String http = n.id().equals(s.node()) ? selfHttp.get() : cluster.httpOf(n.id()).orElse(null);
            if (http == null) {
                o.putNull("http"); // not published yet (NodeDirectory)
            } else {
                o.put("http", http);
            }
            o.put("up", n.up());
        }
        ArrayNode shards = body.putArray("shards");
        for (ClusterStatus.ShardStatus sh : s.shards()) {
            shards.add(shardJson(sh));
        }
        HttpIo.ok(res, body);
    }

    private static ObjectNode shardJson(ClusterStatus.ShardStatus sh) {
        ObjectNode o = Json.MAPPER.createObjectNode().put("shard", sh.shard());
        if (sh.leader() == null) {
            o.putNull("leader");
        } else {
            o.put("leader", sh.leader());
        }
        o.put("term", sh.term());
        ArrayNode replicas = o.putArray("replicas");
        sh.replicas().forEach(replicas::add);
        o.put("commitIndex", sh.commitIndex()).put("appliedIndex", sh.lastApplied()).put("applyLag", sh.applyLag())
                .put("snapshotIndex", sh.snapshotIndex()).put("role", sh.role()).put("leaderChanges", sh.leaderChanges());
        return o;
    }

    private void shard(ServerRequest req, ServerResponse res) {
        admin(req);
        String ws = req.query().first("ws").orElseThrow(() -> StrandException.badRequest("'ws' is required"));
        Names.workspace(ws);
        int shard = cluster.spec().shardOf(ws);
        ObjectNode o = shardJson(cluster.node().status().shard(shard));
        ObjectNode body = Json.MAPPER.createObjectNode().put("ws", ws).put("shard", shard);
        body.set("leader", o.get("leader"));
        body.set("replicas", o.get("replicas"));
        body.set("term", o.get("term"));
        HttpIo.ok(res, body);
    }

    private void replace(ServerRequest req, ServerResponse res) {
        Principal who = admin(req);
        JsonNode b = io.json(req);
        String old = text(b, "old");
        String replacement = text(b, "new");
        ClusterSpec.Member member;
        try {
            member = ClusterSpec.Member.parse(replacement);
        } catch (IllegalArgumentException e) {
            throw StrandException.badRequest("'new' must be ID=HOST:RAFTPORT: " + e.getMessage());
        }
        if (cluster.spec().member(old).isEmpty() && cluster.node().status().nodes().stream().noneMatch(n -> n.id().equals(old))) {
            throw StrandException.notFound("node '" + old + "' is not a member of this cluster");
        }
        List<Integer> moved = audit.perform(who, "cluster.replace", "node:" + old, Map.of("old", old, "new", replacement), () -> {
            try {
                return cluster.node().replace(old, member.id(), member.address());
            } catch (java.io.IOException e) {
                throw new StrandException(ErrorCode.UNAVAILABLE, "replacing " + old + " failed: " + e.getMessage(),
                        Map.of("retryable", true), e);
            }
        }, shards -> Map.of("shards", shards));
        ObjectNode body = Json.MAPPER.createObjectNode().put("old", old).put("new", replacement);
        ArrayNode arr = body.putArray("shards");
        moved.forEach(arr::add);
        HttpIo.ok(res, body);
    }

    private static String text(JsonNode b, String field) {
        JsonNode v = b == null ? null : b.get(field);
        if (v == null || !v.isTextual() || v.asText().isBlank()) {
            throw StrandException.badRequest("'" + field + "' is required");
        }
        return v.asText();
    }
}

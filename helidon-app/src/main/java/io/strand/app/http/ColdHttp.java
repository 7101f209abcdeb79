package io.strand.app.http;

import static io.strand.app.http.HttpIo.path;
import static io.strand.app.http.HttpIo.require;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.LogRequests;
import io.strand.app.audit.AuditLog;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.app.stores.Placement;
import io.strand.coldtier.ColdLog;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.ColdStore;
import io.strand.coldtier.VerifyReport;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.LogStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * Cold-tier operations per log for {@code strand cold status|roll|compact|verify} (admin scope):
 * {@code /v1/ws/{ws}/logs/{log}/cold[/roll|/compact|/verify|/orphans]}. Stateless.
 *
 * <p>On a cluster node (SPEC §13) the status and verify reads run on any node, against the shared
 * store and this node's replica; roll, compact and orphan clean-up write the store, so they run
 * only on the node leading the workspace's shard, and elsewhere answer {@code 503 unavailable}
 * naming the {@code leader} to send them to ({@link ColdWriters}).
 */
public final class ColdHttp implements HttpService {
    /** Largest {@code minAgeSeconds} of an orphan deletion: 100 years (larger would overflow the time arithmetic). */
    static final long MAX_ORPHAN_MIN_AGE_SECONDS = 100L * 366 * 24 * 3600;

    /** Where a workspace's cold writes may run: anywhere on a single node, on its shard's leader in a cluster. */
    @FunctionalInterface
    public interface ColdWriters {
        ColdWriters ANY_NODE = ws -> { };

        /** Returns when this node may write {@code ws}'s cold tier; throws the error to answer otherwise. */
        void require(String ws);
    }

    private final Placement placement;
    private final HttpIo io;
    private final AuditLog audit;
    private final ColdWriters writers;

    public ColdHttp(Placement placement, HttpIo io, AuditLog audit, ColdWriters writers) {
        this.placement = placement;
        this.io = io;
        this.audit = audit;
        this.writers = writers;
    }

    /** Runs an admin action that changes the cold tier through {@link AuditLog#perform}. */
    private <T> T audited(ServerRequest req, ColdLog cold, String action, Map<String, ?> details,
            java.util.function.Supplier<T> act, java.util.function.Function<? super T, Map<String, ?>> results) {
        Principal who = req.context().get(Principal.class).orElseThrow();
        return audit.perform(who, action, "log:" + cold.ws() + "/" + cold.log(), details, act, results);
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/ws/{ws}/logs/{log}/cold", this::status)
                .post("/ws/{ws}/logs/{log}/cold/roll", this::roll)
                .post("/ws/{ws}/logs/{log}/cold/compact", this::compact)
                .get("/ws/{ws}/logs/{log}/cold/verify", this::verify)
                .delete("/ws/{ws}/logs/{log}/cold/orphans", this::deleteOrphans);
    }

    private ColdLog cold(ServerRequest req, Scope scope) {
        String ws = Names.workspace(path(req, "ws"));
        String log = Names.object("log", path(req, "log"));
        require(req, ws, scope);
        LogStore logs = logs(ws);
        if (logs.coldTier() == null) {
            throw StrandException.badRequest(placement.clustered() ? "this cluster has no cold tier (start every node with the"
                    + " same --cold)" : "this server has no cold tier");
        }
        return logs.coldTier().log(ws, log);
    }

    /** This node's copy of {@code ws}'s logs. */
    private LogStore logs(String ws) {
        return placement.local(ws).logs();
    }

    /** As {@link #cold}, for a request that writes the cold tier: only where {@link ColdWriters} allows. */
    private ColdLog coldWriter(ServerRequest req) {
        ColdLog cold = cold(req, Scope.ADMIN);
        writers.require(cold.ws());
        return cold;
    }

    private void status(ServerRequest req, ServerResponse res) {
        ColdLog cold = cold(req, Scope.READ);
        LogStore logs = logs(cold.ws());
        var manifest = cold.refresh();
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("store", logs.coldTier().store().describe());
        body.put("generation", manifest.generation());
        body.put("firstSeq", manifest.firstSeq());
        body.put("lastSeq", manifest.lastSeq());
        body.put("segments", manifest.segments().size());
        body.put("entries", manifest.totalEntries());
        body.put("bytes", manifest.totalBytes());
        body.put("pendingDeletes", manifest.pendingDeletes().size());
        logs.info(cold.ws(), cold.log()).ifPresent(info -> body.put("head", info.head()).put("hotFirst", info.hotFirst())
                .put("hotStoredFirst", logs.hotStoredFirst(cold.ws(), cold.log())));
        body.set("node", Json.MAPPER.valueToTree(logs.coldStats()));
        if (placement.clustered()) {
            long term = logs.coldTier().writerTerm().current(); // this node rolls and compacts the log while it leads
            body.put("writer", term >= 0).put("term", term);
        }
        HttpIo.ok(res, body);
    }

    private void roll(ServerRequest req, ServerResponse res) {
        ColdLog cold = coldWriter(req);
        LogStore logs = logs(cold.ws());
        long rolled = audited(req, cold, "cold.roll", Map.of(), () -> logs.rollNow(cold.ws(), cold.log()),
                n -> Map.of("rolledEntries", n));
        HttpIo.ok(res, Json.MAPPER.createObjectNode().put("rolledEntries", rolled).put("coldLastSeq", cold.lastSeq()));
    }

    private void compact(ServerRequest req, ServerResponse res) {
        ColdLog cold = coldWriter(req);
        JsonNode body = req.content().hasEntity() ? io.json(req) : Json.MAPPER.createObjectNode();
        Long target = LogRequests.optionalLong(body, "targetBytes", 1);
        Long grace = LogRequests.optionalLong(body, "graceSeconds", 0);
        long targetBytes = target == null ? ColdLogConfig.DEFAULT_COMPACTION_TARGET_BYTES : target;
        Duration graceAfter = grace == null ? ColdLogConfig.DEFAULT_COMPACTION_GRACE : Duration.ofSeconds(grace);
        ObjectNode out = audited(req, cold, "cold.compact", Map.of("targetBytes", targetBytes, "graceSeconds", graceAfter.toSeconds()), () -> {
            ObjectNode o = (ObjectNode) Json.MAPPER.valueToTree(cold.compact(targetBytes, graceAfter));
            return o.put("garbageCollectedNow", cold.collectGarbage(Instant.now()));
        }, o -> Map.of("segmentsBefore", o.get("segmentsBefore"), "segmentsAfter", o.get("segmentsAfter"),
                "garbageCollected", o.get("garbageCollectedNow")));
        HttpIo.ok(res, out);
    }

    private void verify(ServerRequest req, ServerResponse res) {
        ColdLog cold = cold(req, Scope.ADMIN);
        HttpIo.ok(res, verifyJson(cold.verify()));
    }

    /** The report as JSON, orphans with their {@code lastModified} as ISO-8601 (the shared mapper has no java.time module). */
    static ObjectNode verifyJson(VerifyReport report) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.put("ok", report.ok());
        out.put("ws", report.ws()).put("log", report.log()).put("generation", report.generation())
                .put("segments", report.segments()).put("blocks", report.blocks()).put("entries", report.entries())
                .put("bytes", report.bytes());
        out.set("problems", Json.MAPPER.valueToTree(report.problems()));
        ArrayNode orphans = out.putArray("orphans");
        for (ColdStore.ObjectInfo o : report.orphans()) {
            orphans.addObject().put("key", o.key()).put("size", o.size())
                    .put("lastModified", o.lastModified() == null ? null : o.lastModified().toString());
        }
        return out;
    }

    private void deleteOrphans(ServerRequest req, ServerResponse res) {
        ColdLog cold = coldWriter(req);
        String minAgeText = HttpIo.param(req, "minAgeSeconds");
        Duration minAge = minAgeText == null ? ColdLogConfig.DEFAULT_ORPHAN_MIN_AGE
                : Duration.ofSeconds(LogRequests.boundedLong(minAgeText, "minAgeSeconds", 0, MAX_ORPHAN_MIN_AGE_SECONDS));
        int deleted = audited(req, cold, "cold.deleteOrphans", Map.of("minAgeSeconds", minAge.toSeconds()),
                () -> cold.deleteOrphans(minAge), n -> Map.of("deleted", n));
        HttpIo.ok(res, Json.MAPPER.createObjectNode().put("deleted", deleted));
    }
}

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
import io.strand.coldtier.ColdLog;
import io.strand.coldtier.ColdStore;
import io.strand.coldtier.Compactor;
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
 * {@code /v1/ws/{ws}/logs/{log}/cold[/roll|/compact|/verify|/orphans]}.
 */
public final class ColdHttp implements HttpService {
    private final LogStore logs;
    private final HttpIo io;
    private final AuditLog audit;

    public ColdHttp(LogStore logs, HttpIo io, AuditLog audit) {
        this.logs = logs;
        this.io = io;
        this.audit = audit;
    }

    /** Admin actions that change the cold tier go to the audit log before the reply. */
    private void audited(ServerRequest req, ColdLog cold, String action, Map<String, ?> details) {
        Principal who = req.context().get(Principal.class).orElseThrow();
        audit.record(who, action, "log:" + cold.ws() + "/" + cold.log(), details);
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
        if (logs.coldTier() == null) {
            throw StrandException.badRequest("this server has no cold tier");
        }
        return logs.coldTier().log(ws, log);
    }

    private void status(ServerRequest req, ServerResponse res) {
        ColdLog cold = cold(req, Scope.READ);
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
        HttpIo.ok(res, body);
    }

    private void roll(ServerRequest req, ServerResponse res) {
        ColdLog cold = cold(req, Scope.ADMIN);
        long rolled = logs.rollNow(cold.ws(), cold.log());
        audited(req, cold, "cold.roll", Map.of("rolledEntries", rolled));
        HttpIo.ok(res, Json.MAPPER.createObjectNode().put("rolledEntries", rolled).put("coldLastSeq", cold.lastSeq()));
    }

    private void compact(ServerRequest req, ServerResponse res) {
        ColdLog cold = cold(req, Scope.ADMIN);
        JsonNode body = req.content().hasEntity() ? io.json(req) : Json.MAPPER.createObjectNode();
        Long target = LogRequests.optionalLong(body, "targetBytes", 1);
        Long grace = LogRequests.optionalLong(body, "graceSeconds", 0);
        Compactor.Report report = cold.compact(target == null ? 64L << 20 : target,
                grace == null ? Duration.ofMinutes(10) : Duration.ofSeconds(grace));
        int collected = cold.collectGarbage(Instant.now());
        audited(req, cold, "cold.compact", Map.of("segmentsBefore", report.segmentsBefore(),
                "segmentsAfter", report.segmentsAfter(), "garbageCollected", collected));
        ObjectNode out = (ObjectNode) Json.MAPPER.valueToTree(report);
        out.put("garbageCollectedNow", collected);
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
        ColdLog cold = cold(req, Scope.ADMIN);
        String minAge = HttpIo.param(req, "minAgeSeconds");
        int deleted = minAge == null ? cold.deleteOrphans() : cold.deleteOrphans(Duration.ofSeconds(Long.parseLong(minAge)));
        audited(req, cold, "cold.deleteOrphans", Map.of("deleted", deleted));
        HttpIo.ok(res, Json.MAPPER.createObjectNode().put("deleted", deleted));
    }
}

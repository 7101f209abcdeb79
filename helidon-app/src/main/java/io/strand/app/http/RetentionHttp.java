package io.strand.app.http;

import static io.strand.app.http.HttpIo.path;
import static io.strand.app.http.HttpIo.require;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.audit.AuditLog;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.app.stores.WritePath;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Stateless (thread-safe): trim and retention of one log (SPEC §12, admin scope), each through {@link AuditLog#perform}:
 * {@code POST /v1/ws/{ws}/logs/{log}/trim {"before":N}} and
 * {@code PUT /v1/ws/{ws}/logs/{log}/retention {"maxAgeSeconds"?,"maxEntries"?,"maxBytes"?}}.
 */
public final class RetentionHttp implements HttpService {
    private static final Set<String> POLICY_FIELDS = Set.of("maxAgeSeconds", "maxEntries", "maxBytes");
    private final WritePath writes;
    private final HttpIo io;
    private final AuditLog audit;

    /** {@code writes}: a single node's own stores, or a cluster node's proposals to the workspace's shard. */
    public RetentionHttp(WritePath writes, HttpIo io, AuditLog audit) {
        this.writes = writes;
        this.io = io;
        this.audit = audit;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/ws/{ws}/logs/{log}/trim", this::trim)
                .put("/ws/{ws}/logs/{log}/retention", this::retention);
    }

    private void trim(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        String log = Names.object("log", path(req, "log"));
        Principal caller = require(req, ws, Scope.ADMIN);
        JsonNode body = object(io.json(req));
        JsonNode before = body.get("before");
        if (before == null || !before.canConvertToLong() || !before.isIntegralNumber() || before.asLong() < 0) {
            throw StrandException.badRequest("'before' must be a seq (an integer ≥ 0)");
        }
        for (var it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!"before".equals(f)) {
                throw StrandException.badRequest("unknown field '" + f + "' (a trim takes only 'before')");
            }
        }
        long n = before.asLong();
        Retention.Trimmed t = audit.perform(caller, "log.trim", "log:" + ws + "/" + log, Map.of("ws", ws, "log", log, "before", n),
                () -> writes.trim(ws, log, n).join(), done -> Map.of("first", done.first(), "head", done.head()));
        HttpIo.ok(res, Map.of("first", t.first(), "head", t.head()));
    }

    private void retention(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        String log = Names.object("log", path(req, "log"));
        Principal caller = require(req, ws, Scope.ADMIN);
        RetentionPolicy policy = policy(object(io.json(req)));
        Map<String, Object> details = new HashMap<>();
        details.put("ws", ws);
        details.put("log", log);
        details.put("retention", policy);
        RetentionPolicy set = audit.perform(caller, "log.retention", "log:" + ws + "/" + log, details,
                () -> writes.retention(ws, log, policy).join(), p -> Map.of());
        HttpIo.ok(res, Map.of("retention", set));
    }

    private static JsonNode object(JsonNode body) {
        if (!body.isObject()) {
            throw StrandException.badRequest("the body must be a JSON object");
        }
        return body;
    }

    /** The policy a body names: each limit an integer ≥ 1, missing or null = unlimited; other fields are refused. */
    static RetentionPolicy policy(JsonNode body) {
        for (var it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!POLICY_FIELDS.contains(f)) {
                throw StrandException.badRequest("unknown field '" + f + "' (a retention policy has maxAgeSeconds, maxEntries, maxBytes)");
            }
        }
        return new RetentionPolicy(limit(body, "maxAgeSeconds"), limit(body, "maxEntries"), limit(body, "maxBytes"));
    }

    private static Long limit(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw StrandException.badRequest("'" + field + "' must be an integer ≥ 1 or null (unlimited)");
        }
        return v.asLong();
    }
}

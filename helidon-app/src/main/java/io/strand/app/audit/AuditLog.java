package io.strand.app.audit;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Principal;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.LogStore;
import java.util.Map;

/**
 * Admin actions (token mint and revoke, log delete; later compaction and config) as entries of
 * the log {@code audit} in the reserved workspace {@code _system}: one ordinary O(1) append each,
 * durable before the action's reply goes out. Root reads it over the normal log endpoints
 * ({@code GET /v1/ws/_system/logs/audit/entries}); nobody writes it through the API
 * ({@link Principal#require}). Thread-safe: the workspace's writer orders the appends.
 *
 * <p>Entry data: {@code {"action":"token.mint","actor":{"jti":…,"ws":…},"target":"token:…", …details}}.
 */
public final class AuditLog {
    public static final String LOG = "audit";

    private final LogStore logs;

    public AuditLog(LogStore logs) {
        this.logs = logs;
    }

    /** Appends one entry and waits until it is durable; throws if it could not be recorded. */
    public AppendResult record(Principal actor, String action, String target, Map<String, ?> details) {
        ObjectNode data = Json.MAPPER.createObjectNode();
        data.put("action", action);
        data.putObject("actor").put("jti", actor.jti()).put("ws", actor.ws());
        data.put("target", target);
        details.forEach((k, v) -> data.set(k, Json.MAPPER.valueToTree(v)));
        return logs.append(Names.SYSTEM_WORKSPACE, LOG, AppendRequest.of(Json.bytes(data))).join();
    }
}

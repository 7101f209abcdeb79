package io.strand.app.audit;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Principal;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.LogStore;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Admin actions (token mint and revoke, log delete, cold roll, compact and orphan deletion) as
 * entries of the log {@code audit} in the reserved workspace {@code _system}, written through
 * {@link #perform}, the one way every admin route acts. Root reads it over the normal log endpoints
 * ({@code GET /v1/ws/_system/logs/audit/entries}); nobody writes it through the API
 * ({@link Principal#require}). Thread-safe: the workspace's writer orders the appends.
 *
 * <p>The rule (issue 10: an error answer must not have changed anything): an action's
 * {@code intent} entry is durable <em>before</em> the action runs, so an audit log that cannot be
 * written refuses the action with nothing changed. After it, a {@code done} entry (with the
 * action's results) or a {@code failed} entry (with the error) names the intent by its seq. An
 * action that took effect is always answered as such: if its {@code done} entry cannot be written,
 * the reply still reports the action and the server logs a warning; the intent entry without an
 * outcome then reads "outcome unknown" to an auditor, never "did not happen".
 *
 * <p>Entry data: {@code {"action":"token.mint","phase":"intent","actor":{"jti":…,"ws":…},"target":"token:…", …details}};
 * {@code done} and {@code failed} add {@code "intent":seq}, and {@code failed} adds {@code "error":{"code","message"}}.
 */
public final class AuditLog {
    public static final String LOG = "audit";
    /** The actor of what the retention worker does by itself. */
    public static final Principal RETENTION_WORKER = new Principal("*", io.strand.app.auth.Scope.ADMIN, "retention-worker",
            Long.MAX_VALUE);
    private static final System.Logger LOGGER = System.getLogger("strand.audit");

    /** How an audit entry reaches the {@code _system} log: the store itself, or the node's write path. */
    @FunctionalInterface
    public interface Appender {
        java.util.concurrent.CompletableFuture<io.strand.logtier.AppendResult> append(String ws, String log, AppendRequest req);
    }

    private final Appender logs;

    public AuditLog(LogStore logs) {
        this(logs::append);
    }

    /** Audit entries go through the node's write path (replicated in a cluster, like any append). */
    public AuditLog(io.strand.app.stores.Placement placement) {
        this(placement.writes()::append);
    }

    public AuditLog(Appender logs) {
        this.logs = logs;
    }

    /**
     * Runs {@code act} between its audit entries: the intent (with {@code details}) durable first,
     * then the action, then its outcome (with {@code results} of what {@code act} returned).
     *
     * @throws StrandException when the intent cannot be recorded (the action did not run), or what
     *         {@code act} threw
     */
    public <T> T perform(Principal actor, String action, String target, Map<String, ?> details,
            Supplier<T> act, Function<? super T, Map<String, ?>> results) {
        ObjectNode intent = entry(actor, action, "intent", target);
        details.forEach((k, v) -> intent.set(k, Json.MAPPER.valueToTree(v)));
        long intentSeq;
        try {
            intentSeq = append(intent);
        } catch (RuntimeException e) {
            StrandException cause = strand(e);
            // The action did not run, whatever became of its intent entry: the reply says "not done"
            // and drops an "outcome":"unknown" that belonged to the audit entry's write alone.
            Map<String, Object> extras = new java.util.LinkedHashMap<>(cause.extras());
            boolean entryUnknown = extras.remove("outcome") != null;
            throw new StrandException(cause.code(), "the audit log cannot be written, so " + action + " was not done"
                    + (entryUnknown ? " (its audit intent entry may or may not be recorded)" : "") + "; retry it. The audit write: "
                    + cause.getMessage(), extras, e);
        }
        T result;
        try {
            result = act.get();
        } catch (RuntimeException e) {
            StrandException cause = strand(e);
            ObjectNode failed = entry(actor, action, "failed", target).put("intent", intentSeq);
            failed.putObject("error").put("code", cause.code().wire()).put("message", cause.getMessage());
            appendOrWarn(failed, action, target, intentSeq);
            throw e;
        }
        ObjectNode done = entry(actor, action, "done", target).put("intent", intentSeq);
        details.forEach((k, v) -> done.set(k, Json.MAPPER.valueToTree(v)));
        results.apply(result).forEach((k, v) -> done.set(k, Json.MAPPER.valueToTree(v)));
        appendOrWarn(done, action, target, intentSeq);
        return result;
    }

    /**
     * Records an action the server took by itself (a retention policy's trim, SPEC §12) as one
     * {@code done} entry with {@code details}: it already happened, so there is no intent before it.
     * A failure to write it is logged, not thrown (the action stands either way).
     */
    public void recordDone(Principal actor, String action, String target, Map<String, ?> details) {
        ObjectNode done = entry(actor, action, "done", target);
        details.forEach((k, v) -> done.set(k, Json.MAPPER.valueToTree(v)));
        try {
            append(done);
        } catch (RuntimeException e) {
            LOGGER.log(System.Logger.Level.WARNING, "audit: the entry of " + action + " " + target
                    + " by " + actor.jti() + " could not be written: " + e.getMessage());
        }
    }

    private static ObjectNode entry(Principal actor, String action, String phase, String target) {
        ObjectNode data = Json.MAPPER.createObjectNode();
        data.put("action", action);
        data.put("phase", phase);
        data.putObject("actor").put("jti", actor.jti()).put("ws", actor.ws());
        data.put("target", target);
        return data;
    }

    /** Appends one entry and waits until it is durable; returns its seq. */
    private long append(ObjectNode data) {
        try {
            return logs.append(Names.SYSTEM_WORKSPACE, LOG, AppendRequest.of(Json.bytes(data))).join().firstSeq();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    /** An outcome entry: the action's reply must not depend on it, so a failure is logged, not thrown. */
    private void appendOrWarn(ObjectNode data, String action, String target, long intentSeq) {
        try {
            append(data);
        } catch (RuntimeException e) {
            LOGGER.log(System.Logger.Level.WARNING, "audit: the " + data.get("phase").asText() + " entry of " + action + " "
                    + target + " (intent seq " + intentSeq + ") could not be written; its outcome stays unknown in the audit log: "
                    + e.getMessage());
        }
    }

    private static StrandException strand(RuntimeException e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return t instanceof StrandException s ? s : new StrandException(ErrorCode.INTERNAL, String.valueOf(t.getMessage()));
    }
}

package io.strand.app.http;

import static io.strand.app.http.HttpIo.param;
import static io.strand.app.http.HttpIo.path;
import static io.strand.app.http.HttpIo.require;

import io.strand.app.EntryJson;
import io.strand.app.LogRequests;
import io.strand.app.StrandMetrics;
import io.strand.app.audit.AuditLog;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.EntrySink;
import io.strand.logtier.LogInfo;
import io.strand.logtier.LogStore;
import io.strand.logtier.PageInfo;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.stores.Placement;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** The log rows of SPEC §5 under {@code /v1/ws/{ws}/logs}. */
public final class LogsHttp implements HttpService {
    private final Placement placement;
    private final HttpIo io;
    private final StrandMetrics metrics;
    private final AuditLog audit;
    private final LogNotes notes;

    /** Adds fields another layer knows about a log to its info (the Durable Streams path and content type). */
    public interface LogNotes {
        void annotate(String ws, String log, com.fasterxml.jackson.databind.node.ObjectNode info);
    }

    /** @param audit where log deletes are recorded ({@link AuditLog#perform}) */
    public LogsHttp(Placement placement, HttpIo io, StrandMetrics metrics, AuditLog audit) {
        this(placement, io, metrics, audit, (ws, log, info) -> { });
    }

    /** @param notes adds fields to {@code GET …/logs/{log}} and, with {@code ?ds=true}, to the listing's {@code ds} map */
    public LogsHttp(Placement placement, HttpIo io, StrandMetrics metrics, AuditLog audit, LogNotes notes) {
        this.notes = notes;
        this.placement = placement;
        this.io = io;
        this.metrics = metrics;
        this.audit = java.util.Objects.requireNonNull(audit, "audit");
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/ws/{ws}/logs/{log}/entries", this::append)
                .get("/ws/{ws}/logs/{log}/entries", this::read)
                .get("/ws/{ws}/logs/{log}", this::info)
                .delete("/ws/{ws}/logs/{log}", this::delete)
                .get("/ws/{ws}/logs", this::list);
    }

    private void append(ServerRequest req, ServerResponse res) {
        CompletableFuture<AppendResult> ack;
        AppendRequest append;
        try {
            String ws = Names.workspace(path(req, "ws"));
            String log = Names.object("log", path(req, "log"));
            require(req, ws, Scope.RW);
            append = LogRequests.append(io.appendJson(req));
            ack = placement.writes().append(ws, log, append);
        } catch (RuntimeException e) {
            metrics.appendRefused();
            throw e;
        }
        AppendResult result = metrics.timeAppend(append, ack).join();
        HttpIo.send(res, 200, Replies.appendJson(result));
    }

    private void read(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        String log = Names.object("log", path(req, "log"));
        require(req, ws, Scope.READ);
        LogRequests.ReadSpec spec = LogRequests.read(name -> param(req, name));
        EntryJson body = EntryJson.page(spec.limit());
        placement.awaitCaughtUp(ws);
        PageInfo page = read(placement.local(ws).logs(), ws, log, spec, body);
        byte[] json = body.endPage(page, spec.before() != null).bytes();
        body.release();
        HttpIo.send(res, 200, json);
    }

    /** One read for HTTP and WebSocket, its entries streamed into {@code sink}. */
    public static PageInfo read(LogStore logs, String ws, String log, LogRequests.ReadSpec spec, EntrySink sink) {
        if (spec.before() != null) {
            return logs.readBackward(ws, log, spec.before(), spec.limit(), sink);
        }
        if (spec.fromTime() != null) {
            return logs.readFromTime(ws, log, spec.fromTime(), spec.limit(), sink);
        }
        return logs.readForward(ws, log, spec.from(), spec.limit(), sink);
    }

    private void info(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        String log = Names.object("log", path(req, "log"));
        require(req, ws, Scope.READ);
        placement.awaitCaughtUp(ws);
        LogInfo info = placement.local(ws).logs().info(ws, log).orElseThrow(() -> StrandException.notFound("log '" + log + "' does not exist in workspace '" + ws + "'"));
        com.fasterxml.jackson.databind.node.ObjectNode body = Json.MAPPER.valueToTree(info);
        notes.annotate(ws, log, body);
        HttpIo.ok(res, body);
    }

    private void delete(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        String log = Names.object("log", path(req, "log"));
        Principal caller = require(req, ws, Scope.ADMIN);
        audit.perform(caller, "log.delete", "log:" + ws + "/" + log, Map.of("ws", ws, "log", log), () -> {
            if (!placement.writes().deleteLog(ws, log).join()) {
                throw StrandException.notFound("log '" + log + "' does not exist in workspace '" + ws + "'");
            }
            return true;
        }, deleted -> Map.of());
        HttpIo.ok(res, Map.of("deleted", true));
    }

    private void list(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        require(req, ws, Scope.READ);
        int limit = LogRequests.limit(param(req, "limit"));
        String after = param(req, "after");
        placement.awaitCaughtUp(ws);
        var names = placement.local(ws).logs().list(ws, after, limit);
        var body = Json.MAPPER.createObjectNode();
        var arr = body.putArray("logs");
        names.forEach(arr::add);
        if ("true".equals(param(req, "ds"))) { // opt-in, so the plain listing stays names only
            var ds = body.putObject("ds");
            for (String log : names) {
                var note = Json.MAPPER.createObjectNode();
                notes.annotate(ws, log, note);
                if (!note.isEmpty()) {
                    ds.set(log, note);
                }
            }
        }
        if (names.size() == limit) {
            body.put("after", names.getLast());
        }
        HttpIo.ok(res, body);
    }
}

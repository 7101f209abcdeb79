package io.strand.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.docstore.DocOps;
import io.strand.docstore.DocStore;
import io.strand.docstore.DocValue;
import java.util.concurrent.CompletableFuture;

/**
 * The doc operations of SPEC §5/§6 with their reply bodies, shared by HTTP ({@code DocsHttp}) and
 * the WebSocket ({@code doc.*} ops): one parse, one scope check, one reply shape.
 */
public final class DocApi {
    private final DocStore docs;
    private final StrandMetrics metrics;

    public DocApi(DocStore docs, StrandMetrics metrics) {
        this.docs = docs;
        this.metrics = metrics;
    }

    public DocStore store() {
        return docs;
    }

    /**
     * Runs {@code op} (get, put, cas, incr, apply, delete) on {@code ws}/{@code doc} with the request
     * body fields; {@code expectVersion} overrides the body's (HTTP DELETE takes it from the query).
     */
    public CompletableFuture<ObjectNode> call(String op, String ws, String doc, JsonNode body, Principal who) {
        Names.workspace(ws);
        Names.object("doc", doc);
        who.require(ws, "get".equals(op) ? Scope.READ : Scope.RW);
        JsonNode b = body == null ? Json.MAPPER.createObjectNode() : body;
        CompletableFuture<ObjectNode> result = switch (op) {
            case "get" -> {
                DocValue v = docs.get(ws, doc).orElseThrow(() -> StrandException.notFound("doc '" + doc + "' does not exist in workspace '" + ws + "'"));
                yield CompletableFuture.completedFuture(value(v.version(), v.value()));
            }
            case "put" -> {
                DocOps.Put put = DocOps.parsePut(b);
                yield docs.put(ws, doc, put.value(), put.expectVersion()).thenApply(v -> Json.MAPPER.createObjectNode().put("version", v));
            }
            case "cas" -> docs.cas(ws, doc, DocOps.parseCas(b)).thenApply(v -> value(v.version(), v.value()));
            case "incr" -> docs.incr(ws, doc, DocOps.parseIncr(b))
                    .thenApply(r -> Json.MAPPER.createObjectNode().put("value", r.value()).put("version", r.version()));
            case "apply" -> {
                DocOps.Apply apply = DocOps.parseApply(b);
                yield docs.apply(ws, doc, apply.ops(), apply.expectVersion()).thenApply(v -> value(v.version(), v.value()));
            }
            case "delete" -> docs.delete(ws, doc, DocOps.expectVersion(b))
                    .thenApply(v -> Json.MAPPER.createObjectNode().put("deleted", true).put("version", v));
            default -> throw new StrandException(ErrorCode.UNKNOWN_OP, "unknown doc op '" + op + "'");
        };
        return result.whenComplete((r, t) -> count(t));
    }

    private static ObjectNode value(long version, JsonNode value) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("version", version);
        o.set("value", value);
        return o;
    }

    private void count(Throwable t) {
        if (t == null) {
            metrics.docOp();
            return;
        }
        StrandException e = ApiErrors.classify(t);
        switch (e.code()) {
            case VERSION_CONFLICT, CAS_CONFLICT -> metrics.docConflict();
            case FLOOR_VIOLATION, CEILING_VIOLATION -> metrics.boundRejection();
            default -> { }
        }
    }
}

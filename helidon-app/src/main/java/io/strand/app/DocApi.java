package io.strand.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Scope;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.docstore.DocId;
import io.strand.docstore.DocOps;
import io.strand.docstore.DocStore;
import io.strand.docstore.DocValue;
import java.util.concurrent.CompletableFuture;

/**
 * The doc operations of SPEC §5/§6 with their reply bodies, shared by HTTP ({@code DocsHttp}) and
 * the WebSocket ({@code doc.*} ops): one parse, one reply shape. Stateless. Each caller validates the
 * names once (into a {@link DocId}) and checks the principal's scope once, before calling here.
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
     * Runs {@code op} (get, put, cas, incr, apply, delete) on doc {@code id} with the request body fields
     * (HTTP DELETE puts its query's {@code expectVersion} there). The caller has checked the scope: {@link Scope#READ}
     * for get, {@link Scope#RW} for the rest.
     */
    public CompletableFuture<ObjectNode> call(String op, DocId id, JsonNode body) {
        JsonNode b = body == null ? Json.MAPPER.createObjectNode() : body;
        CompletableFuture<ObjectNode> result = switch (op) {
            case "get" -> {
                DocValue v = docs.get(id).orElseThrow(() -> StrandException.notFound("doc '" + id.doc() + "' does not exist in workspace '" + id.ws() + "'"));
                yield CompletableFuture.completedFuture(value(v.version(), v.value()));
            }
            case "put" -> {
                DocOps.Put put = DocOps.parsePut(b);
                yield docs.put(id, put.value(), put.expectVersion()).thenApply(v -> Json.MAPPER.createObjectNode().put("version", v));
            }
            case "cas" -> docs.cas(id, DocOps.parseCas(b)).thenApply(v -> value(v.version(), v.value()));
            case "incr" -> docs.incr(id, DocOps.parseIncr(b))
                    .thenApply(r -> Json.MAPPER.createObjectNode().put("value", r.value()).put("version", r.version()));
            case "apply" -> {
                DocOps.Apply apply = DocOps.parseApply(b);
                yield docs.apply(id, apply.ops(), apply.expectVersion()).thenApply(v -> value(v.version(), v.value()));
            }
            case "delete" -> docs.delete(id, DocOps.expectVersion(b))
                    .thenApply(v -> Json.MAPPER.createObjectNode().put("deleted", true).put("version", v));
            default -> throw new StrandException(ErrorCode.UNKNOWN_OP, "unknown doc op '" + op + "'");
        };
        return op.equals("get") ? result : result.whenComplete((r, t) -> count(t));
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
        metrics.docRefused(ApiErrors.classify(t).code());
    }
}

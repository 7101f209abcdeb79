package io.strand.app.http;

import static io.strand.app.http.HttpIo.param;
import static io.strand.app.http.HttpIo.path;
import static io.strand.app.http.HttpIo.requireDocs;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.stores.Placement;
import io.strand.app.LogRequests;
import io.strand.app.auth.Scope;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.docstore.DocId;
import io.strand.docstore.DocOps;
import io.strand.docstore.DocPage;

/** The doc rows of SPEC §5 under {@code /v1/ws/{ws}/docs}. */
public final class DocsHttp implements HttpService {
    private static final java.util.Set<String> DELETE_PARAMS = java.util.Set.of("expectVersion");
    private final Placement placement;
    private final HttpIo io;

    public DocsHttp(Placement placement, HttpIo io) {
        this.placement = placement;
        this.io = io;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/ws/{ws}/docs", this::list)
                .get("/ws/{ws}/docs/{doc}", (req, res) -> run("get", req, res, false))
                .put("/ws/{ws}/docs/{doc}", (req, res) -> run("put", req, res, true))
                .delete("/ws/{ws}/docs/{doc}", this::delete)
                .post("/ws/{ws}/docs/{doc}/cas", (req, res) -> run("cas", req, res, true))
                .post("/ws/{ws}/docs/{doc}/incr", (req, res) -> run("incr", req, res, true))
                .post("/ws/{ws}/docs/{doc}/apply", (req, res) -> run("apply", req, res, true));
    }

    private void run(String op, ServerRequest req, ServerResponse res, boolean hasBody) {
        DocId id = DocId.of(path(req, "ws"), path(req, "doc"));
        requireDocs(req, id.ws(), "get".equals(op) ? Scope.READ : Scope.RW);
        ObjectNode reply = placement.writes().doc(op, id, hasBody ? io.json(req) : null).join();
        HttpIo.ok(res, reply);
    }

    private void delete(ServerRequest req, ServerResponse res) {
        DocId id = DocId.of(path(req, "ws"), path(req, "doc"));
        requireDocs(req, id.ws(), Scope.RW);
        HttpIo.onlyParams(req, DELETE_PARAMS);
        ObjectNode body = Json.MAPPER.createObjectNode();
        String expect = param(req, "expectVersion");
        if (expect != null) {
            body.put("expectVersion", DocOps.expectVersion(expect));
        }
        HttpIo.ok(res, placement.writes().doc("delete", id, body).join());
    }

    private void list(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        requireDocs(req, ws, Scope.READ);
        int limit = LogRequests.limit(param(req, "limit"));
        placement.awaitCaughtUp(ws);
        DocPage page = placement.local(ws).docs().list(ws, param(req, "after"), limit);
        ObjectNode body = Json.MAPPER.createObjectNode();
        page.docs().forEach(body.putArray("docs")::add);
        if (page.next() != null) {
            body.put("after", page.next());
        }
        HttpIo.ok(res, body);
    }
}

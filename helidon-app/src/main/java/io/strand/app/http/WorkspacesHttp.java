package io.strand.app.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.app.stores.Placement;
import io.strand.core.Json;
import io.strand.docstore.DocStore;
import io.strand.logtier.LogStore;
import java.util.List;
import java.util.TreeSet;

/**
 * {@code GET /v1/ws}: the inventory. Root sees every workspace that holds a log or a doc (the
 * reserved {@code _system} one included); any other token sees its own workspace only, even when
 * empty. Stateless.
 */
public final class WorkspacesHttp implements HttpService {
    /** Most logs per workspace read for the totals; past it the reply says {@code "partial": true}. */
    static final int MAX_LOGS_COUNTED = 100_000;
    private final Placement placement;

    public WorkspacesHttp(Placement placement) {
        this.placement = placement;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/ws", this::list);
    }

    private void list(ServerRequest req, ServerResponse res) {
        Principal who = req.context().get(Principal.class).orElseThrow();
        List<String> names;
        if (who.isRoot()) {
            TreeSet<String> all = new TreeSet<>();
            for (var stores : placement.all()) {
                all.addAll(stores.logs().workspaces());
                all.addAll(stores.docs().workspaces());
            }
            names = List.copyOf(all);
        } else {
            who.require(who.ws(), Scope.READ);
            names = List.of(who.ws());
        }
        ObjectNode body = Json.MAPPER.createObjectNode();
        ArrayNode arr = body.putArray("workspaces");
        for (String ws : names) {
            arr.add(describe(ws));
        }
        HttpIo.ok(res, body);
    }

    private ObjectNode describe(String ws) {
        LogStore logs = placement.local(ws).logs();
        DocStore docs = placement.local(ws).docs();
        List<String> logNames = logs.list(ws, null, MAX_LOGS_COUNTED + 1);
        boolean partial = logNames.size() > MAX_LOGS_COUNTED;
        if (partial) {
            logNames = logNames.subList(0, MAX_LOGS_COUNTED);
        }
        long logBytes = 0;
        long entries = 0;
        for (String log : logNames) {
            var info = logs.info(ws, log);
            if (info.isPresent()) {
                logBytes += info.get().bytes();
                entries += info.get().entries();
            }
        }
        DocStore.DocUsage usage = docs.usage(ws);
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("ws", ws).put("logs", logNames.size()).put("entries", entries).put("logBytes", logBytes)
                .put("docs", usage.docs()).put("docBytes", usage.bytes());
        if (partial) {
            o.put("partial", true);
        }
        return o;
    }
}

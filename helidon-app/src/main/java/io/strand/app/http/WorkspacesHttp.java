package io.strand.app.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
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
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * {@code GET /v1/ws}: the inventory. Root sees every workspace that holds a log or a doc (the
 * reserved {@code _system} one included; on a cluster node, those of the shards it does not replicate
 * too, asked of nodes that do); any other token sees its own workspace only, even when empty. Stateless.
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
        Map<String, JsonNode> rows = new TreeMap<>();
        if (who.isRoot()) {
            TreeSet<String> all = new TreeSet<>();
            for (var stores : placement.all()) {
                all.addAll(stores.logs().workspaces());
                all.addAll(stores.docs().workspaces());
            }
            all.forEach(ws -> rows.put(ws, describe(ws)));
            if (!req.headers().contains(HttpIo.FORWARDED_BY)) { // a node gathering its peers' rows asks each for its own alone
                String auth = req.headers().first(HeaderNames.AUTHORIZATION).orElse(null);
                placement.workspacesElsewhere(auth).forEach(row -> rows.putIfAbsent(row.path("ws").asText(), row));
            }
        } else {
            who.require(who.ws(), Scope.READ);
            rows.put(who.ws(), describe(who.ws()));
        }
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.putArray("workspaces").addAll(rows.values());
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

package io.strand.app.http;

import static io.strand.app.http.HttpIo.path;
import static io.strand.app.http.HttpIo.require;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.stores.WritePath;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.core.Names;

/** {@code POST /v1/ws/{ws}/txn} (SPEC §5): docs and log appends of one workspace, all or nothing. */
public final class TxnHttp implements HttpService {
    private final WritePath txn;
    private final HttpIo io;

    public TxnHttp(WritePath txn, HttpIo io) {
        this.txn = txn;
        this.io = io;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/ws/{ws}/txn", this::run);
    }

    private void run(ServerRequest req, ServerResponse res) {
        String ws = Names.workspace(path(req, "ws"));
        Principal who = require(req, ws, Scope.RW);
        HttpIo.ok(res, txn.txn(ws, io.json(req), who).join());
    }
}

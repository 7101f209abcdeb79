package io.strand.app.cluster;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;

/**
 * The routes a cluster node answers with {@code 501 not_implemented}: the cold tier, trim and
 * retention, and Durable Streams keep node-local state (a manifest writer, retention files, the
 * stream registry) that is not replicated yet, so they run on a single node only. Stateless.
 */
public final class SingleNodeOnly implements HttpService {
    @Override
    public void routing(HttpRules rules) {
        rules.get("/ws/{ws}/logs/{log}/cold", SingleNodeOnly::refuse)
                .post("/ws/{ws}/logs/{log}/cold/roll", SingleNodeOnly::refuse)
                .post("/ws/{ws}/logs/{log}/cold/compact", SingleNodeOnly::refuse)
                .get("/ws/{ws}/logs/{log}/cold/verify", SingleNodeOnly::refuse)
                .delete("/ws/{ws}/logs/{log}/cold/orphans", SingleNodeOnly::refuse)
                .post("/ws/{ws}/logs/{log}/trim", SingleNodeOnly::refuse)
                .put("/ws/{ws}/logs/{log}/retention", SingleNodeOnly::refuse);
    }

    /** Also the handler of {@code /ds/*} on a cluster node. */
    public static void refuse(ServerRequest req, ServerResponse res) {
        HttpIo.error(res, new StrandException(ErrorCode.NOT_IMPLEMENTED, req.prologue().method().text() + " "
                + req.path().path() + " is not available in cluster mode yet (the cold tier, trim/retention and Durable "
                + "Streams run on a single node); see README \"Cluster\""));
    }
}

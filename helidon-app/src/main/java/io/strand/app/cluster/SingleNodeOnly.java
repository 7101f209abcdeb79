package io.strand.app.cluster;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;

/**
 * The routes a cluster node answers with {@code 501 not_implemented}: trim and retention, and
 * Durable Streams keep node-local state (retention files, the stream registry) that is not
 * replicated yet, so they run on a single node only. (The cold tier's routes are served in a
 * cluster by {@link io.strand.app.http.ColdHttp}.) Stateless.
 */
public final class SingleNodeOnly implements HttpService {
    @Override
    public void routing(HttpRules rules) {
        rules.post("/ws/{ws}/logs/{log}/trim", SingleNodeOnly::refuse)
                .put("/ws/{ws}/logs/{log}/retention", SingleNodeOnly::refuse);
    }

    /** Also the handler of {@code /ds/*} on a cluster node. */
    public static void refuse(ServerRequest req, ServerResponse res) {
        HttpIo.error(res, new StrandException(ErrorCode.NOT_IMPLEMENTED, req.prologue().method().text() + " "
                + req.path().path() + " is not available in cluster mode yet (trim/retention and Durable "
                + "Streams run on a single node); see README \"Cluster\""));
    }
}

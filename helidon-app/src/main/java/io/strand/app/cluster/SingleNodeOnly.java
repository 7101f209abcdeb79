package io.strand.app.cluster;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;

/**
 * What a cluster node answers on {@code /ds/*}: {@code 501 not_implemented}. Durable Streams keeps
 * node-local state (the stream registry) that is not replicated yet, so it runs on a single node
 * only. Stateless.
 */
public final class SingleNodeOnly {
    private SingleNodeOnly() {
    }

    /** The handler of {@code /ds/*} on a cluster node. */
    public static void refuse(ServerRequest req, ServerResponse res) {
        HttpIo.error(res, new StrandException(ErrorCode.NOT_IMPLEMENTED, req.prologue().method().text() + " "
                + req.path().path() + " is not available in cluster mode yet (Durable Streams runs on a single node); "
                + "see README \"Cluster\""));
    }
}

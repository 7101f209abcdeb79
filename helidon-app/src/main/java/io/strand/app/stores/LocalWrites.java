package io.strand.app.stores;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Principal;
import io.strand.docstore.DocId;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Writes applied to this node's own stores: the whole write path of a single node, and what every
 * cluster replica runs when it applies a committed command. Stateless; the stores own their state.
 */
public final class LocalWrites implements WritePath {
    private final Function<String, Stores> stores;

    public LocalWrites(Function<String, Stores> stores) {
        this.stores = stores;
    }

    @Override
    public CompletableFuture<AppendResult> append(String ws, String log, AppendRequest req) {
        return stores.apply(ws).logs().append(ws, log, req);
    }

    @Override
    public CompletableFuture<ObjectNode> doc(String op, DocId id, JsonNode body) {
        return stores.apply(id.ws()).docApi().call(op, id, body);
    }

    @Override
    public CompletableFuture<ObjectNode> txn(String ws, JsonNode body, Principal who) {
        return stores.apply(ws).txnApi().call(ws, body, who);
    }

    @Override
    public CompletableFuture<Boolean> deleteLog(String ws, String log) {
        try {
            return CompletableFuture.completedFuture(stores.apply(ws).logs().delete(ws, log));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Retention.Trimmed> trim(String ws, String log, long before) {
        return stores.apply(ws).retention().trimAsync(ws, log, before, false);
    }

    @Override
    public CompletableFuture<RetentionPolicy> retention(String ws, String log, RetentionPolicy policy) {
        return stores.apply(ws).retention().policyAsync(ws, log, policy);
    }
}

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
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.Map;
import java.util.function.Function;

/**
 * Writes applied to this node's own stores: the whole write path of a single node, and what every
 * cluster replica runs when it applies a committed command. Stateless; the stores own their state.
 * Native appends and deletes of a log that holds a Durable Streams stream are refused
 * ({@link StreamBackedLogs}); on a cluster that check runs where the command is applied, in log order,
 * so every replica answers alike.
 */
public final class LocalWrites implements WritePath {
    private final Function<String, Stores> stores;
    private final StreamBackedLogs streams;

    public LocalWrites(Function<String, Stores> stores) {
        this(stores, StreamBackedLogs.NONE);
    }

    /** @param streams which logs hold a Durable Streams stream (their native appends and deletes are refused) */
    public LocalWrites(Function<String, Stores> stores, StreamBackedLogs streams) {
        this.stores = stores;
        this.streams = streams;
    }

    @Override
    public CompletableFuture<AppendResult> append(String ws, String log, AppendRequest req) {
        Stores s = stores.apply(ws);
        try {
            refuseIfStream(s, ws, log, "append to it through POST");
            return s.logs().append(ws, log, req);
        } catch (StrandException e) { // a refusal is the future's, as a failed write's is
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Throws {@code 409 stream_conflict} when {@code log} holds a Durable Streams stream. */
    private void refuseIfStream(Stores s, String ws, String log, String instead) {
        String path = streams.streamPath(s, ws, log);
        if (path != null) {
            throw new StrandException(ErrorCode.STREAM_CONFLICT, "log '" + log + "' holds the Durable Streams stream '"
                    + path + "': " + instead + " /ds/" + ws + "/" + path + " (a native write would bypass the stream's"
                    + " closure, content type and producers); native reads are open", Map.of("log", log, "dsPath", path));
        }
    }

    @Override
    public CompletableFuture<ObjectNode> doc(String op, DocId id, JsonNode body) {
        return stores.apply(id.ws()).docApi().call(op, id, body);
    }

    @Override
    public CompletableFuture<ObjectNode> txn(String ws, JsonNode body, Principal who) {
        return txn(ws, body, who, null);
    }

    /** A txn whose entries are stamped {@code stampedAt} (a cluster leader's clock), or this node's clock for null. */
    public CompletableFuture<ObjectNode> txn(String ws, JsonNode body, Principal who, Long stampedAt) {
        Stores s = stores.apply(ws);
        try {
            for (JsonNode part : body.path("append")) {
                if (part.path("log").isTextual()) {
                    refuseIfStream(s, ws, part.path("log").asText(), "append to it through POST");
                }
            }
        } catch (StrandException e) {
            return CompletableFuture.failedFuture(e);
        }
        return s.txnApi().call(ws, body, who, stampedAt);
    }

    @Override
    public CompletableFuture<Boolean> deleteLog(String ws, String log) {
        try {
            Stores s = stores.apply(ws);
            refuseIfStream(s, ws, log, "delete it through DELETE");
            return CompletableFuture.completedFuture(s.logs().delete(ws, log));
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

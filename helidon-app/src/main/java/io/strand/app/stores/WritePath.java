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

/**
 * Every change a client can make to a workspace's logs and docs, as one interface: applied to the
 * local stores on a single node ({@link LocalWrites}), proposed to the shard's Raft group in a
 * cluster (and applied by every replica through a {@link LocalWrites} of its own). Callers have
 * validated names and checked the caller's scope; implementations check again where they apply.
 */
public interface WritePath {
    CompletableFuture<AppendResult> append(String ws, String log, AppendRequest req);

    /** A doc op of SPEC §5 ({@code put}, {@code cas}, {@code incr}, {@code apply}, {@code delete}; {@code get} reads); scope checked by the caller. */
    CompletableFuture<ObjectNode> doc(String op, DocId id, JsonNode body);

    CompletableFuture<ObjectNode> txn(String ws, JsonNode body, Principal who);

    /** Deletes a log's data; false when it did not exist. */
    CompletableFuture<Boolean> deleteLog(String ws, String log);

    /** SPEC §12: entries below {@code before} become unreadable, durably ({@code not_found}, or {@code bad_request} past {@code head+1}). */
    CompletableFuture<Retention.Trimmed> trim(String ws, String log, long before);

    /** SPEC §12: sets a log's retention policy, durably ({@code not_found} for a missing log). */
    CompletableFuture<RetentionPolicy> retention(String ws, String log, RetentionPolicy policy);

    /**
     * A Durable Streams write ({@code call}: bytes of the DS endpoint's own, see
     * {@link ReplicatedStreams}) proposed to the workspace's shard; completes with the answer's bytes.
     * Only a cluster node proposes: a single node's endpoint applies its writes itself.
     */
    default CompletableFuture<byte[]> dsWrite(String ws, byte[] call) {
        throw new UnsupportedOperationException("a single node applies Durable Streams writes in place");
    }
}

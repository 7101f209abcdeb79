package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.app.stores.Placement;
import io.strand.app.stores.WritePath;
import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.docstore.DocId;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.ToIntFunction;

/**
 * Writes on a cluster node: each one encoded as a {@link ShardCommands command} and proposed to its
 * workspace's shard group (batched with others into one Raft entry by the proposer), acknowledged
 * once a majority of the shard's replicas hold it and the leader's replica applied it; the reply is
 * that replica's answer. Doc {@code get}s are reads: served here after the read barrier.
 * Stateless.
 */
final class ReplicatedWrites implements WritePath {
    static final String QUORUM = "quorum";
    private final ToIntFunction<String> shardOf;
    private final BiFunction<Integer, byte[], CompletableFuture<byte[]>> propose;
    private final Placement placement;
    /** A cluster with {@code --cold}: log deletes are refused (see {@link #deleteLog}). */
    private final boolean sharedColdTier;

    ReplicatedWrites(ToIntFunction<String> shardOf, BiFunction<Integer, byte[], CompletableFuture<byte[]>> propose, Placement placement,
                     boolean sharedColdTier) {
        this.shardOf = shardOf;
        this.propose = propose;
        this.placement = placement;
        this.sharedColdTier = sharedColdTier;
    }

    private CompletableFuture<byte[]> submit(String ws, byte[] command) {
        return propose.apply(shardOf.applyAsInt(ws), command);
    }

    @Override
    public CompletableFuture<AppendResult> append(String ws, String log, AppendRequest req) {
        Names.workspace(ws);
        Names.object("log", log);
        return submit(ws, ShardCommands.append(ws, log, req)).thenApply(r -> ShardCommands.readAppend(r, QUORUM));
    }

    @Override
    public CompletableFuture<ObjectNode> doc(String op, DocId id, JsonNode body) {
        if ("get".equals(op)) {
            placement.awaitCaughtUp(id.ws());
            return placement.local(id.ws()).docApi().call(op, id, body);
        }
        return submit(id.ws(), ShardCommands.doc(op, id.ws(), id.doc(), body)).thenApply(r -> quorum(ShardCommands.readJson(r)));
    }

    @Override
    public CompletableFuture<ObjectNode> txn(String ws, JsonNode body, Principal who) {
        Names.workspace(ws);
        who.require(ws, Scope.RW);
        return submit(ws, ShardCommands.txn(ws, body)).thenApply(r -> quorum(ShardCommands.readJson(r)));
    }

    /**
     * Proposes a log delete. With a shared cold tier, {@code 501}: the log's cold manifest must go
     * before a log of the same name can be created again, yet replicas apply (and, after a restart,
     * replay) a delete long after it was committed, so no replica may delete shared objects when it
     * applies one, and the leader's roller may commit the manifest again meanwhile. Doing it safely
     * needs the delete itself to be fenced in the manifest (a deleted-at-index tombstone), which is
     * not built yet.
     */
    @Override
    public CompletableFuture<Boolean> deleteLog(String ws, String log) {
        if (sharedColdTier) {
            return CompletableFuture.failedFuture(new StrandException(ErrorCode.NOT_IMPLEMENTED, "deleting a log is not"
                    + " available yet in a cluster with a cold tier (its shared cold manifest cannot be retired safely"
                    + " by replicas); see README \"Cluster\""));
        }
        return submit(ws, ShardCommands.deleteLog(ws, log)).thenApply(ShardCommands::readBoolean);
    }

    @Override
    public CompletableFuture<Retention.Trimmed> trim(String ws, String log, long before) {
        Names.workspace(ws);
        Names.object("log", log);
        return submit(ws, ShardCommands.trim(ws, log, before, false)).thenApply(ShardCommands::readTrimmed);
    }

    @Override
    public CompletableFuture<RetentionPolicy> retention(String ws, String log, RetentionPolicy policy) {
        Names.workspace(ws);
        Names.object("log", log);
        return submit(ws, ShardCommands.retention(ws, log, policy)).thenApply(r -> {
            ShardCommands.readEmpty(r);
            return policy;
        });
    }

    /** The replica ran without a write-ahead log of its own: the durability clients get is the Raft quorum. */
    private static ObjectNode quorum(ObjectNode reply) {
        if (reply.has("durable")) {
            reply.put("durable", QUORUM);
        }
        return reply;
    }
}

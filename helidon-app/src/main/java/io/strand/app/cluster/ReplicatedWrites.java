package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.app.stores.Placement;
import io.strand.app.stores.WritePath;
import io.strand.core.Names;
import io.strand.docstore.DocId;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
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

    ReplicatedWrites(ToIntFunction<String> shardOf, BiFunction<Integer, byte[], CompletableFuture<byte[]>> propose, Placement placement) {
        this.shardOf = shardOf;
        this.propose = propose;
        this.placement = placement;
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

    @Override
    public CompletableFuture<Boolean> deleteLog(String ws, String log) {
        return submit(ws, ShardCommands.deleteLog(ws, log)).thenApply(ShardCommands::readBoolean);
    }

    /** The replica ran without a write-ahead log of its own: the durability clients get is the Raft quorum. */
    private static ObjectNode quorum(ObjectNode reply) {
        if (reply.has("durable")) {
            reply.put("durable", QUORUM);
        }
        return reply;
    }
}

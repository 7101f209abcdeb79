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
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
    /** A cluster with {@code --cold}: a delete's reply waits for its cold part (see {@link #deleteLog}). */
    private final boolean sharedColdTier;
    /** How long a delete's reply waits for the leader to empty the log's cold part. */
    static final long COLD_DELETE_WAIT_MILLIS = 5_000;
    /** Where a delete's reply waits (a virtual thread each): never on the Raft or timer thread that completed the proposal. */
    private static final java.util.concurrent.Executor WAITS = task -> Thread.ofVirtual().name("cold-delete-wait").start(task);

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
     * Proposes a log delete; every replica deletes its hot files when it applies it. With a shared
     * cold tier the shard's leader then empties the log's manifest (term-fenced) and proposes that in
     * turn (see {@link io.strand.logtier.LogStore#coldDeleted}); the reply waits for that to be
     * applied on this node, at most {@link #COLD_DELETE_WAIT_MILLIS}, so a log created again under the
     * name right after the reply starts from an empty cold part. Past the wait the delete is still
     * answered (it is committed): the leader finishes the cold part before any roll of the name.
     */
    @Override
    public CompletableFuture<Boolean> deleteLog(String ws, String log) {
        CompletableFuture<Boolean> deleted = submit(ws, ShardCommands.deleteLog(ws, log)).thenApply(ShardCommands::readBoolean);
        if (!sharedColdTier) {
            return deleted;
        }
        return deleted.thenApplyAsync(existed -> {
            try {
                placement.awaitCaughtUp(ws); // this replica has applied the delete (it may lag the leader that answered)
                placement.local(ws).logs().whenColdDeleted(ws, log).get(COLD_DELETE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (RuntimeException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // not caught up, the stores being replaced, or the clean-up still running: the delete is committed
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return existed;
        }, WAITS);
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

    @Override
    public CompletableFuture<byte[]> dsWrite(String ws, byte[] call) {
        Names.workspace(ws);
        return submit(ws, ShardCommands.ds(ws, call)).thenApply(ShardCommands::readDs);
    }

    /** The replica ran without a write-ahead log of its own: the durability clients get is the Raft quorum. */
    private static ObjectNode quorum(ObjectNode reply) {
        if (reply.has("durable")) {
            reply.put("durable", QUORUM);
        }
        return reply;
    }
}

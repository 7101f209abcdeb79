package io.strand.cluster;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;

/**
 * Linearizable read barriers of one node ({@link RaftNode#readBarrier}). Thread-safe: each barrier is a
 * chain of futures driven by Ratis client threads and the node's timer thread; the only shared state
 * is a counter.
 *
 * <p>How: a read-only request to the shard's leader, which confirms it still leads (ReadIndex,
 * LINEARIZABLE: a heartbeat round acked by a majority) and, once it has applied everything up to its
 * read index, answers the index of the last command entry it applied; this replica then waits until
 * it has applied that entry ({@link ShardStateMachine#awaitCommand}). Ratis can serve the ReadIndex on
 * a follower too, but measured here a follower's ReadIndex request to a restarted leader could hang
 * for good, so the request goes to the leader through the node's client, which reconnects; on the
 * leader itself it is submitted in-process ({@link RaftNode#submitLocally}).
 */
final class ReadBarrier {
    private static final Message BARRIER = Message.valueOf("strand-read-barrier");
    private static final long TRY_MS = 500;

    private final RaftNode node;
    private final ScheduledExecutorService timers;
    private final AtomicLong nudges = new AtomicLong();

    ReadBarrier(RaftNode node, ScheduledExecutorService timers) {
        this.node = node;
        this.timers = timers;
    }

    /**
     * Completes once this node's replica of {@code shard} has applied (and its engine shows the effects
     * of) every entry committed before the call. Fails with {@code unavailable} (503, retryable) within
     * the request timeout when no leader answers, and at once when this node holds no replica.
     */
    CompletableFuture<Void> await(int shard) {
        node.spec().checkShard(shard);
        if (!node.hosts(shard)) {
            return CompletableFuture.failedFuture(new StrandException(ErrorCode.INTERNAL, "node " + node.spec().nodeId()
                    + " holds no replica of shard " + shard + "; read it on one of " + RaftNode.ids(node.peersOf(shard))));
        }
        long deadline = System.nanoTime() + node.spec().requestTimeout().toNanos();
        CompletableFuture<Void> done = new CompletableFuture<>();
        ShardProposer.failUnavailableAfter(timers, done, shard, node.spec().requestTimeout(),
                "no read index within " + node.spec().requestTimeout().toMillis() + " ms");
        tryBarrier(shard, deadline, done);
        return done;
    }

    /**
     * One try of at most {@link #TRY_MS}. A try that fails fast (no leader known yet, leader just
     * changed) is retried after 50 ms; a try that hangs gets a no-op entry proposed to the shard before
     * the next try: in an idle group right after a leader change Ratis 3.3.0 can leave a follower's
     * commit index one (METADATA) entry behind, and the leader's ReadIndex waits for heartbeat acks from
     * followers whose commit index reached the read index, so a read hangs until the next write.
     */
    private void tryBarrier(int shard, long deadline, CompletableFuture<Void> done) {
        if (done.isDone()) {
            return;
        }
        long left = deadline - System.nanoTime();
        long tryMs = Math.max(1, Math.min(TRY_MS, left / 1_000_000));
        CompletableFuture<Long> leaderIndex;
        try {
            leaderIndex = node.submitLocally(shard, BARRIER, RaftClientRequest.readRequestType())
                    .orElseGet(() -> node.readClient(shard).async().sendReadOnlyUnordered(BARRIER)).thenApply(reply -> {
                if (!reply.isSuccess()) {
                    throw new java.util.concurrent.CompletionException(reply.getException());
                }
                return reply.getMessage().getContent().asReadOnlyByteBuffer().getLong();
            });
        } catch (RuntimeException e) {
            leaderIndex = CompletableFuture.failedFuture(e);
        }
        ShardProposer.timeOut(timers, leaderIndex.thenCompose(index -> node.machine(shard).map(m -> m.awaitCommand(index))
                        .orElseGet(() -> CompletableFuture.failedFuture(new IllegalStateException("replica closed")))), tryMs)
                .whenComplete((v, e) -> {
                    Throwable cause = e == null ? null : ShardProposer.unwrap(e);
                    if (cause == null) {
                        done.complete(null);
                    } else if (deadline - System.nanoTime() > 60_000_000L) {
                        if (cause instanceof TimeoutException) {
                            nudge(shard);
                            tryBarrier(shard, deadline, done);
                        } else {
                            timers.schedule(() -> tryBarrier(shard, deadline, done), 50, TimeUnit.MILLISECONDS);
                        }
                    } else {
                        done.completeExceptionally(ShardProposer.unavailable(shard, (cause instanceof TimeoutException
                                ? "no read index within " + node.spec().requestTimeout().toMillis() + " ms" : String.valueOf(cause))
                                + "; local replica " + describe(shard)));
                    }
                });
    }

    /** Proposes an entry with no command (the engine sees nothing) so the shard's commit index moves. */
    private void nudge(int shard) {
        nudges.incrementAndGet();
        RaftClient c = node.client(shard);
        try {
            c.async().send(Message.valueOf(ShardEntry.proposal(List.of()))).whenComplete((r, e) -> {
                if (e != null && ShardProposer.closesWindow(ShardProposer.unwrap(e))) {
                    node.clientFailed(shard, c);
                }
            });
        } catch (RuntimeException e) {
            node.clientFailed(shard, c);
        }
    }

    long nudges() {
        return nudges.get();
    }

    private String describe(int shard) {
        return node.division(shard).map(d -> d.getInfo().getCurrentRole() + " leader=" + d.getInfo().getLeaderId()
                + " commit=" + d.getRaftLog().getLastCommittedIndex() + " applied=" + d.getInfo().getLastAppliedIndex()
                + " sm=" + node.machine(shard).map(m -> m.getLastAppliedTermIndex() + " tail done=" + m.tailDone()).orElse("-"))
                .orElse("none");
    }

}

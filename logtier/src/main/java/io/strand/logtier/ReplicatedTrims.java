package io.strand.logtier;

import java.util.concurrent.CompletableFuture;

/**
 * How a cluster replica's retention worker ({@link Retention}) moves a log's {@code first}: only the
 * shard's leader decides a policy trim (its clock and its view of the log), and proposes it to the
 * shard's Raft log, so every replica (the leader too) applies the same {@code before} in log order
 * with {@link Retention#trimAsync}. Implementations are thread-safe.
 */
public interface ReplicatedTrims {
    /** True while this replica leads its shard; a follower's worker decides no trim and only gives back its own space. */
    boolean leads();

    /** Proposes "trim {@code ws/log} to its policy at {@code before}"; completes once it is applied on this replica. */
    CompletableFuture<?> proposeTrim(String ws, String log, long before);
}

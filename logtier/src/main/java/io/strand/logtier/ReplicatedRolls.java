package io.strand.logtier;

import java.util.concurrent.CompletableFuture;

/**
 * How a cluster replica's roller hands step 6 of a roll to its shard (SPEC §13): the leader has
 * committed a manifest holding every entry of {@code ws/log} up to {@code coldLast}; rather than
 * drop its own hot files, it proposes this to the shard's Raft log, and every replica (the leader
 * too) applies it in log order with {@link LogStore#dropCovered}. Implementations are thread-safe.
 */
@FunctionalInterface
public interface ReplicatedRolls {
    /** Proposes "{@code ws/log} is cold up to {@code coldLast}"; completes once it is applied on this replica. */
    CompletableFuture<?> proposeCovered(String ws, String log, long coldLast);
}

package io.strand.logtier;

import java.util.concurrent.CompletableFuture;

/**
 * How a cluster replica's roller hands its shared-store changes to its shard's Raft log, so every
 * replica (the leader too) applies them in log order. Step 6 of a roll: the leader has committed a
 * manifest holding every entry of {@code ws/log} up to {@code coldLast}; rather than drop its own hot
 * files, it proposes this, and each replica applies it with {@link LogStore#dropCovered}. A deleted
 * log's cold part: the leader has emptied its manifest (see {@link ColdDeletes}); each replica applies
 * that with {@link LogStore#coldDeleted}. Implementations are thread-safe.
 */
public interface ReplicatedRolls {
    /** Proposes "{@code ws/log} is cold up to {@code coldLast}"; completes once it is applied on this replica. */
    CompletableFuture<?> proposeCovered(String ws, String log, long coldLast);

    /** Proposes "the deleted {@code ws/log}'s manifest is empty at {@code generation}"; completes once it is applied here. */
    CompletableFuture<?> proposeColdDeleted(String ws, String log, long generation);
}

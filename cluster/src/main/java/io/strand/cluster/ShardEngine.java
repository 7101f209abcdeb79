package io.strand.cluster;

import io.strand.core.DirMirror;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * One shard replica's state (the Strand stores for the shard's workspaces). Owned by the shard's apply
 * thread (the Ratis state machine updater of the shard's group on this node).
 */
public interface ShardEngine extends AutoCloseable {
    /**
     * Applies one committed command, in Raft log order, called on the apply thread. Deterministic given
     * the same prior state, command and {@code stampedAtMillis} (the leader's clock, carried in the log
     * entry; never below the previous command's on this shard, see {@link ShardStateMachine}). Request errors (validation, expected-seq mismatch…) are encoded in the reply, never a
     * failed future; a failed future means the replica cannot go on (I/O), which stops this replica's
     * state machine loudly. The future may complete on another thread; effects of successive apply calls
     * happen in call order.
     */
    CompletableFuture<byte[]> apply(long stampedAtMillis, byte[] command);

    /**
     * Called on the apply thread with no apply in progress: wait for every applied command's effects to
     * be in the engine's files, then make {@code dir} a consistent, self-contained copy of the state.
     * {@code dir} is empty or holds an older copy from {@link #prestageTo}, which may be reused.
     *
     * @return what was compared, written and linked (for the snapshot's log line)
     */
    DirMirror.Result snapshotTo(Path dir) throws IOException;

    /**
     * Called on a background thread while applies go on, shortly before a snapshot is due: brings
     * {@code dir} close to the engine's current files (forced to disk), so that {@link #snapshotTo} on
     * the apply thread has little left to write. The result need not be consistent. Stops with
     * {@link java.util.concurrent.CancellationException} when {@code cancelled} answers true. By
     * default nothing is staged.
     */
    default DirMirror.Result prestageTo(Path dir, BooleanSupplier cancelled) throws IOException {
        return new DirMirror.Result(0, 0, 0, 0);
    }

    @Override
    void close();
}

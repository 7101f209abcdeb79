package io.strand.app.cluster;

import io.strand.app.auth.Principal;
import io.strand.app.stores.LocalWrites;
import io.strand.app.stores.ReplicatedStreams;
import io.strand.app.stores.Stores;
import io.strand.cluster.ShardEngine;
import io.strand.core.DirMirror;
import io.strand.core.StrandException;
import io.strand.docstore.DocStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;

/**
 * One shard replica's {@link Stores}, applying committed commands ({@link ShardCommands}) through
 * the same {@link LocalWrites} a single node uses. Owned by the shard's apply thread (Ratis's state
 * machine updater): {@link #apply} and {@link #snapshotTo} run there only; the effects run on the
 * stores' writer threads in the order {@code apply} was called (one workspace, one writer).
 *
 * <p>Deterministic: entry timestamps come from the leader (carried in the Raft entry), and every
 * outcome — seqs, doc versions, duplicate and expected-seq checks — is decided by the stores from
 * their state and the command. A request error (4xx) is the reply on every replica alike. An error
 * a replica cannot share (5xx: its disk full, an I/O failure) fails the apply, which stops this
 * replica's state machine rather than let it diverge.
 */
final class StoresEngine implements ShardEngine {
    private final Stores stores;
    private final LocalWrites writes;
    /** Runs before the stores close, so what reads them lets go first. */
    private final Runnable beforeClose;
    /** The Durable Streams endpoint's writes and state over these stores. */
    private final ReplicatedStreams streams;
    /** Completes when every command applied so far has taken effect (apply thread only). */
    private CompletableFuture<?> applied = CompletableFuture.completedFuture(null);

    StoresEngine(Stores stores, Runnable beforeClose, ReplicatedStreams streams) {
        this.stores = stores;
        stores.logs().applyInLogOrder(); // every command's effect in apply order, appends included
        this.writes = new LocalWrites(ws -> stores, streams == null ? io.strand.app.stores.StreamBackedLogs.NONE : streams);
        this.beforeClose = beforeClose;
        this.streams = streams;
    }

    Stores stores() {
        return stores;
    }

    @Override
    public CompletableFuture<byte[]> apply(long stampedAtMillis, byte[] command) {
        CompletableFuture<byte[]> reply;
        try {
            ShardCommands.Command c = ShardCommands.read(command);
            reply = switch (c.type()) {
                case ShardCommands.APPEND -> writes.append(c.ws(), c.name(), c.append().withStampedAt(stampedAtMillis))
                        .thenApply(ShardCommands::appendReply);
                case ShardCommands.DOC -> writes.doc(c.op(), io.strand.docstore.DocId.of(c.ws(), c.name()), c.body()).thenApply(ShardCommands::jsonReply);
                case ShardCommands.TXN -> writes.txn(c.ws(), c.body(), Principal.ROOT, stampedAtMillis).thenApply(ShardCommands::jsonReply);
                case ShardCommands.DELETE_LOG -> writes.deleteLog(c.ws(), c.name()).thenApply(ShardCommands::booleanReply);
                case ShardCommands.COLD_COVERED -> stores.logs().dropCovered(c.ws(), c.name(), c.seq()).thenApply(ShardCommands::countReply);
                case ShardCommands.TRIM, ShardCommands.TRIM_TO_POLICY -> stores.retention().trimAsync(c.ws(), c.name(), c.seq(),
                        c.type() == ShardCommands.TRIM_TO_POLICY).thenApply(ShardCommands::trimReply);
                case ShardCommands.COLD_DELETED -> stores.logs().coldDeleted(c.ws(), c.name(), c.seq()).thenApply(ShardCommands::emptyReply);
                case ShardCommands.RETENTION -> writes.retention(c.ws(), c.name(), ShardCommands.policy(c)).thenApply(ShardCommands::emptyReply);
                case ShardCommands.DS -> { // the endpoint reads heads and rows as every earlier command left them: wait for those
                    applied.join();
                    yield CompletableFuture.completedFuture(ShardCommands.dsReply(streams.apply(stores, c.call(), stampedAtMillis)));
                }
                default -> throw new IllegalStateException("unknown command type " + c.type());
            };
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<byte[]> answered = reply.handle((bytes, t) -> {
            if (t == null) {
                return bytes;
            }
            Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
            if (cause instanceof StrandException se && se.code().httpStatus() < 500) {
                return ShardCommands.errorReply(se); // the same answer on every replica
            }
            throw new CompletionException("shard replica cannot apply a committed command (stopping it, not diverging): "
                    + cause.getMessage(), cause);
        });
        applied = CompletableFuture.allOf(applied, answered.exceptionally(t -> null));
        return answered;
    }

    /**
     * Waits for every applied command, writes the doc store's compact snapshot ({@code docs.snapshot},
     * every doc, after which the journal holds nothing older), then makes {@code dir} a copy of the
     * store files ({@link DirMirror}: only blocks that differ from the copy staged by
     * {@link #prestageTo} are written) except the doc map view, its checkpoint and lock. The map file is
     * sized by doc capacity, not content (173 MB at the default 200,000 docs, for a shard with no doc at
     * all), so copying it made every snapshot, and every install sent to a follower, that big; the
     * stores opened over the copy rebuild the map from the doc snapshot and the journal.
     */
    @Override
    public DirMirror.Result snapshotTo(Path dir) throws IOException {
        applied.join();
        streams.beforeSnapshot(stores);
        stores.docs().snapshotNow();
        return DirMirror.mirror(stores.dir(), dir, StoresEngine::derived, false, new ClosedCycleFiles(), () -> false);
    }

    /** Stages the store files while applies go on (read by this background thread, written by the apply thread). */
    @Override
    public DirMirror.Result prestageTo(Path dir, BooleanSupplier cancelled) throws IOException {
        return DirMirror.mirror(stores.dir(), dir, StoresEngine::derived, true, new ClosedCycleFiles(), cancelled);
    }

    /**
     * Chronicle cycle files ({@code .cq4}: log queues and the doc journal) older than the newest one in
     * their queue directory: the appender wrote their end-of-file marker (and trimmed them) when it
     * moved to the next cycle, inside one append, and never writes to them again, so a snapshot
     * hard-links them. Only the newest cycle file of each queue is compared and copied. Asked for one
     * mirror pass (it caches each directory's newest file); with no append running, as in
     * {@link #snapshotTo}, the answer is exact.
     */
    private static final class ClosedCycleFiles implements java.util.function.Predicate<Path> {
        private static final String SUFFIX = ".cq4";
        private final java.util.Map<Path, String> newest = new java.util.HashMap<>();

        @Override
        public boolean test(Path file) {
            String name = file.getFileName().toString();
            if (!name.endsWith(SUFFIX)) {
                return false;
            }
            String last = newest.computeIfAbsent(file.getParent(), ClosedCycleFiles::newestIn);
            return last != null && name.compareTo(last) < 0;
        }

        private static String newestIn(Path dir) {
            try (java.util.stream.Stream<Path> s = java.nio.file.Files.list(dir)) {
                return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(SUFFIX)).max(String::compareTo).orElse(null);
            } catch (IOException e) {
                return null; // then nothing in it is treated as closed
            }
        }
    }

    /** The files of a doc store that {@link #snapshotTo} leaves out: derived from the rest, or per process. */
    private static boolean derived(Path relative) {
        String name = relative.getFileName().toString();
        return relative.getNameCount() == 2 && relative.getName(0).toString().equals("docs")
                && (name.equals(DocStore.MAP_FILE) || name.equals(DocStore.CHECKPOINT_FILE) || name.equals(DocStore.LOCK_FILE));
    }

    /** Tells {@code beforeClose} (subscriptions on these stores end) and the streams endpoint, then closes the stores. */
    @Override
    public void close() {
        try {
            beforeClose.run();
        } finally {
            streams.closing(stores);
            stores.close();
        }
    }
}

package io.strand.app.cluster;

import io.strand.app.auth.Principal;
import io.strand.app.stores.LocalWrites;
import io.strand.app.stores.Stores;
import io.strand.cluster.ShardEngine;
import io.strand.core.StrandException;
import io.strand.docstore.DocStore;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

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
    /** Completes when every command applied so far has taken effect (apply thread only). */
    private CompletableFuture<?> applied = CompletableFuture.completedFuture(null);

    StoresEngine(Stores stores, Runnable beforeClose) {
        this.stores = stores;
        this.writes = new LocalWrites(ws -> stores);
        this.beforeClose = beforeClose;
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
                case ShardCommands.TXN -> writes.txn(c.ws(), c.body(), Principal.ROOT).thenApply(ShardCommands::jsonReply);
                case ShardCommands.DELETE_LOG -> writes.deleteLog(c.ws(), c.name()).thenApply(ShardCommands::booleanReply);
                case ShardCommands.COLD_COVERED -> stores.logs().dropCovered(c.ws(), c.name(), c.seq()).thenApply(ShardCommands::countReply);
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
     * every doc, after which the journal holds nothing older), then copies the store files into
     * {@code dir} except the doc map view, its checkpoint and lock. The map file is sized by doc
     * capacity, not content (173 MB at the default 200,000 docs, for a shard with no doc at all), so
     * copying it made every snapshot, and every install sent to a follower, that big; the stores
     * opened over the copy rebuild the map from the doc snapshot and the journal.
     */
    @Override
    public void snapshotTo(Path dir) throws IOException {
        applied.join();
        stores.docs().snapshotNow();
        copyTree(stores.dir(), dir);
    }

    /** The files of a doc store that {@link #snapshotTo} leaves out: derived from the rest, or per process. */
    private static boolean derived(Path relative) {
        String name = relative.getFileName().toString();
        return relative.getNameCount() == 2 && relative.getName(0).toString().equals("docs")
                && (name.equals(DocStore.MAP_FILE) || name.equals(DocStore.CHECKPOINT_FILE) || name.equals(DocStore.LOCK_FILE));
    }

    static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                Files.createDirectories(to.resolve(from.relativize(d).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                if (derived(from.relativize(f))) {
                    return FileVisitResult.CONTINUE;
                }
                Files.copy(f, to.resolve(from.relativize(f).toString()), StandardCopyOption.REPLACE_EXISTING);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** Tells {@code beforeClose} (subscriptions on these stores end), then closes the stores. */
    @Override
    public void close() {
        try {
            beforeClose.run();
        } finally {
            stores.close();
        }
    }
}

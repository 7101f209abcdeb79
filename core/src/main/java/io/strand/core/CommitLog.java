package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * The commit-log seam: where {@link Writers}' group commit hands each group's records before it
 * acknowledges the group's turns, and what hands records left by an unclean stop back to the stores
 * at the next start. Implementations are thread-safe; each {@link Lane} is used only by the writer
 * thread it was made for.
 *
 * <p>Implementations: {@link WriteAheadLog}, the single-node log ({@code fsync} durability: a group
 * is durable when its lane's {@link Lane#write} returns), and {@link #none()}, which logs nothing
 * ({@code os} durability: the page cache is the durability, or the stores sit behind a log of their
 * own that makes them durable).
 */
public interface CommitLog extends AutoCloseable {

    /** Re-applies one record at start-up; completes when applied (e.g. as a turn on the owner's writer). Must be idempotent. */
    @FunctionalInterface
    interface Replayer {
        CompletableFuture<?> replay(ByteBuffer payload);
    }

    /** One writer thread's way into the log. Writer thread only. */
    interface Lane {
        /** True when records must be logged to be durable (so owners can skip encoding them otherwise). */
        boolean logging();

        /**
         * Makes sure the next {@link #write} needs no new space, before the group's turns run (a
         * failure after them would leave their changes in the stores, unacknowledged). Throws
         * {@code storage_full} when it cannot; nothing is written then.
         */
        void ensureRoom();

        /** Writes one group's records and returns once they are durable: the group's commit point. */
        void write(GroupRecords group) throws IOException;
    }

    /** The lane of writer thread number {@code writer}. */
    Lane lane(int writer);

    /** Routes records of {@code type} ({@link WalRecordType}) to {@code replayer} in {@link #recover()}; a store reopened on the same writers replaces its own. */
    void register(byte type, Replayer replayer);

    /**
     * Replays what the last run left, then makes the stores durable and lets the replayed records
     * go. Call once, after every replayer is registered and before traffic.
     * @return the number of records replayed
     */
    long recover();

    /** Makes everything logged durable in the stores, so the next start replays nothing. Call after the writers stopped. */
    @Override
    void close();

    /** Logs nothing, replays nothing: the commit log of {@code os} durability. Stateless. */
    static CommitLog none() {
        return None.LOG;
    }

    /** The {@link #none()} log and its lane. */
    enum None implements CommitLog, Lane {
        LOG;

        @Override
        public Lane lane(int writer) {
            return this;
        }

        @Override
        public void register(byte type, Replayer replayer) {
        }

        @Override
        public long recover() {
            return 0;
        }

        @Override
        public void close() {
        }

        @Override
        public boolean logging() {
            return false;
        }

        @Override
        public void ensureRoom() {
        }

        @Override
        public void write(GroupRecords group) {
        }
    }
}

package io.strand.docstore;

import io.strand.core.Writers;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Thread-safe registry (a concurrent map) of one {@link Lane} per writer that has written docs; each lane
 * is used only by whoever holds its writer's turn ({@link Writers}). A lane appends that writer's changes to the {@link DocJournal} and keeps
 * them, oldest first, until their group is durable and they are published.
 *
 * <p>From the lanes the checkpointer learns how far the map view reflects the journal: {@link #appliedThrough()}
 * is the highest journal index at or below which every record is published.
 */
final class JournalLanes {
    private final DocJournal journal;
    private final DocCapacity capacity;
    /** Publishes one durable change (view, index, overlay); called by the holder of the lane's writer's turn. */
    private final Consumer<PendingChange> publish;
    private final ConcurrentHashMap<String, Lane> lanes = new ConcurrentHashMap<>();
    /** Highest journal index appended (or replayed); a lower bound for indexes not yet appended. */
    private final AtomicLong lastAppended;

    JournalLanes(DocJournal journal, long lastIndex, DocCapacity capacity, Consumer<PendingChange> publish) {
        this.journal = journal;
        this.capacity = capacity;
        this.publish = publish;
        this.lastAppended = new AtomicLong(lastIndex);
    }

    /** The lane of the writer whose turn the calling thread holds, created on first use; refuses any other thread. */
    Lane lane() {
        requireWriterThread();
        return lanes.computeIfAbsent(Writers.currentWriter(), w -> new Lane(journal.appender()));
    }

    static void requireWriterThread() {
        if (!Writers.onWriterThread()) {
            throw new IllegalStateException("doc turns run on a Writers thread only");
        }
    }

    /** Highest journal index such that every record at or below it is in the map view. Any thread. */
    long appliedThrough() {
        long y = lastAppended.get();
        for (Lane l : lanes.values()) {
            y = Math.min(y, l.marker);
        }
        return y;
    }

    /** True when no lane holds a change waiting to be published. */
    boolean idle() {
        return lanes.values().stream().allMatch(Lane::idle);
    }

    /** Closes every lane's appender; only once the writers are idle (at close). */
    void close() {
        for (Lane l : lanes.values()) {
            l.appender.close();
        }
        lanes.clear();
    }

    /**
     * One writer's journal appender and the changes it appended that are not yet published.
     * Owned by the holder of that writer's turn; the checkpointer only reads {@link #marker}.
     */
    final class Lane {
        /** Replaced after a failed append: a Chronicle appender whose write faulted is not reusable. */
        private DocJournal.Appender appender;
        private final ArrayDeque<PendingChange> pending = new ArrayDeque<>();
        /** Lower bound of (the oldest pending record's index − 1); MAX_VALUE when nothing is pending. */
        private volatile long marker = Long.MAX_VALUE;

        private Lane(DocJournal.Appender appender) {
            this.appender = appender;
        }

        /** Appends {@code record} (the journal encoding of {@code p}) and holds {@code p} until it is published. */
        void append(PendingChange p, byte[] record) {
            boolean first = pending.isEmpty();
            if (first) {
                marker = lastAppended.get();
            }
            long idx;
            try {
                idx = appender.append(record);
            } catch (RuntimeException | Error e) { // a SIGBUS on a mapped page the disk cannot back is an InternalError
                if (first) {
                    marker = Long.MAX_VALUE;
                }
                try {
                    appender.close();
                } catch (RuntimeException | Error ignored) {
                    // a new appender finds the journal's end by itself
                }
                appender = journal.appender();
                throw capacity.classifyAppendFailure(e);
            }
            p.journalIndex = idx;
            pending.add(p);
            lastAppended.accumulateAndGet(idx, Math::max);
        }

        /**
         * After-durable hook: publishes this lane's changes up to and including {@code last}, oldest first.
         * A group's hooks run in turn order once the group is durable, so what is published is exactly
         * what is durable; the changes of a group whose write failed are never published.
         */
        void publishThrough(PendingChange last) {
            PendingChange p;
            do {
                p = pending.poll();
                if (p == null) {
                    break;
                }
                publish.accept(p);
            } while (p != last);
            PendingChange oldest = pending.peek();
            marker = oldest == null ? Long.MAX_VALUE : oldest.journalIndex - 1;
        }

        boolean idle() {
            return pending.isEmpty();
        }
    }
}

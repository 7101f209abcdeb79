package io.strand.app.ds;

import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.LogStore;
import java.util.ArrayList;
import java.util.List;

/**
 * Stateless (the log store is thread-safe), used by the thread that holds the stream's lock or, for
 * a stream nobody sees yet, its creator: writes a stream's entries into its Strand log in batches
 * within the log's limits, the last batch of a producer append carrying the native producer pair.
 */
final class DsLogWriter {
    /** Entries and bytes per log append (and per batch a fork copies). */
    static final int BATCH_ENTRIES = 1000;
    static final long BATCH_BYTES = 3L << 20;

    private final LogStore logs;

    DsLogWriter(LogStore logs) {
        this.logs = logs;
    }

    /** Refuses an append with an entry past the log's entry limit, before anything is written. */
    void checkSizes(List<byte[]> entries) {
        int max = logs.config().maxEntryBytes();
        for (byte[] e : entries) {
            if (e.length > max) {
                throw StrandException.tooLarge("a JSON message is " + e.length + " bytes; the limit is " + max);
            }
        }
    }

    /** The head after an append, and whether the log had already applied it (a producer retry). */
    record Appended(long head, boolean replayed) {
    }

    /**
     * Appends in batches within the log's limits. A producer append's last batch carries the
     * native producer pair ({@code ds <id> <epoch>}, seq): the log stores it with the batch, so
     * a retry of an append acknowledged just before a crash (which the stream's row may not
     * show yet) is recognised by the log as a duplicate instead of being appended twice. Every
     * entry is stamped {@code stampedAt} (on a cluster the leader's time, the same on every replica).
     */
    Appended append(DsStream s, List<byte[]> entries, long head, DsProducers.Producer producer, long stampedAt) {
        int i = 0;
        boolean replayed = false;
        while (i < entries.size()) {
            List<byte[]> batch = new ArrayList<>();
            long bytes = 0;
            while (i < entries.size() && batch.size() < BATCH_ENTRIES
                    && (batch.isEmpty() || bytes + entries.get(i).length <= BATCH_BYTES)) {
                bytes += entries.get(i).length;
                batch.add(entries.get(i++));
            }
            List<String> keys = new ArrayList<>(batch.size());
            batch.forEach(b -> keys.add(null));
            boolean last = i == entries.size();
            AppendRequest req = last && producer != null
                    ? new AppendRequest(batch, keys, null, "ds " + producer.id() + " " + producer.epoch(), producer.seq())
                    : new AppendRequest(batch, keys, null, null, null);
            AppendResult r = logs.append(s.ws, s.logName, req.withStampedAt(stampedAt)).join();
            head = Math.max(head, r.lastSeq());
            replayed = r.duplicate();
        }
        return new Appended(head, replayed);
    }
}

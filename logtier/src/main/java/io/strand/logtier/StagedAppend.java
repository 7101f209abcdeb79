package io.strand.logtier;

import io.strand.core.Writers;

/**
 * Owned by the writer turn that staged it: one log's append inside a txn, validated and encoded but
 * not yet written ({@link LogStore#stage}). It holds the log's slot (and the log open, when it
 * exists) until {@link #apply} or {@link #abandon}, and nothing else appends to the log in between
 * (the turn runs on the log's workspace writer). A log that does not exist yet is created by
 * {@link #apply} only.
 */
public final class StagedAppend {
    private final LogStore store;
    private final String ws;
    private final String name;
    /** Held until apply or abandon. */
    private final LogSlot slot;
    /** Null while the log does not exist. */
    private Log log;
    private final byte[] excerpt;
    private final int entries;
    private boolean finished;

    StagedAppend(LogStore store, String ws, String name, LogSlot slot, Log log, byte[] excerpt, int entries) {
        this.store = store;
        this.ws = ws;
        this.name = name;
        this.slot = slot;
        this.log = log;
        this.excerpt = excerpt;
        this.entries = entries;
    }

    public String log() {
        return name;
    }

    public int entries() {
        return entries;
    }

    /** The write-ahead record type of {@link #record}. */
    public byte recordType() {
        return LogStore.WAL_APPEND;
    }

    /** The staged batch as the write-ahead record replay applies idempotently (a txn's commit record part). */
    public byte[] record() {
        return io.strand.core.WriteAheadLog.keyed(ws + '/' + name, excerpt);
    }

    /** Appends the staged batch in the caller's turn (creating the log if needed); its head is published once the group is durable. */
    public AppendResult apply(Writers.Commit commit, String durable) {
        if (finished) {
            throw new IllegalStateException("append to " + name + " already applied or abandoned");
        }
        finished = true;
        try {
            if (log == null) {
                log = slot.log(LogSlot.Open.CREATE);
            }
            AppendResult r = log.appender().applyStaged(excerpt, commit, durable);
            store.afterTxnAppend(ws, name, r.lastSeq(), commit);
            return r;
        } finally {
            slot.release();
        }
    }

    /** Lets the log go without appending. */
    public void abandon() {
        if (!finished) {
            finished = true;
            slot.release();
        }
    }
}

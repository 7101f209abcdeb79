package io.strand.logtier;

import io.strand.core.Writers;

/**
 * One log's append inside a txn, validated and encoded but not yet written ({@link LogStore#stage}).
 * Owned by the writer turn that staged it: it holds the log open until {@link #apply} or
 * {@link #abandon}, and nothing else appends to the log in between (the turn runs on the log's
 * workspace writer).
 */
public final class StagedAppend {
    private final LogStore store;
    private final LogStore.LogSlot slot;
    private final Log log;
    private final byte[] excerpt;
    private final int entries;
    private boolean finished;

    StagedAppend(LogStore store, LogStore.LogSlot slot, Log log, byte[] excerpt, int entries) {
        this.store = store;
        this.slot = slot;
        this.log = log;
        this.excerpt = excerpt;
        this.entries = entries;
    }

    public String log() {
        return slot.name;
    }

    public int entries() {
        return entries;
    }

    /** The write-ahead record type and payload that replay applies idempotently (a txn's commit record part). */
    public byte recordType() {
        return LogStore.WAL_APPEND;
    }

    public byte[] record() {
        return log.keyed(excerpt);
    }

    /** Appends the staged batch in the caller's turn; its head is published once the group is durable. */
    public AppendResult apply(Writers.Commit commit, String durable) {
        if (finished) {
            throw new IllegalStateException("append to " + slot.name + " already applied or abandoned");
        }
        finished = true;
        try {
            AppendResult r = log.applyStaged(excerpt, commit, durable);
            store.afterTxnAppend(slot.ws, slot.name, r.lastSeq(), commit);
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

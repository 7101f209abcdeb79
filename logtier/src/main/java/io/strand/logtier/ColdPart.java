package io.strand.logtier;

/** Thread-safe: the cold segments of one log as the read path ({@link LogReader}) sees them. */
interface ColdPart {
    /** First cold seq, or 0 when the log has no cold segments. */
    long firstSeq();

    /** Last cold seq, or 0. */
    long lastSeq();

    int segments();

    /** Bytes of the live segments (0 when none). */
    long bytes();

    /** True when {@link #firstSeq()} and {@link #lastSeq()} answer from memory, without the object store. */
    boolean inMemory();

    /**
     * As {@link HotReader#read}: entries with {@code fromSeq ≤ seq ≤ toSeq} in order into {@code limit}
     * while it takes them, the first one {@code fromSeq} or none; returns the seq after the last one
     * delivered.
     */
    long read(long fromSeq, long toSeq, LogReader.Limit limit);

    /** The first cold seq whose ts ≥ {@code ts}, or 0 when every cold entry is older. */
    long seqAtOrAfter(long ts);

    ColdPart NONE = new ColdPart() {
        public long firstSeq() {
            return 0;
        }

        public long lastSeq() {
            return 0;
        }

        public int segments() {
            return 0;
        }

        public long bytes() {
            return 0;
        }

        public boolean inMemory() {
            return true;
        }

        public long read(long fromSeq, long toSeq, LogReader.Limit limit) {
            return fromSeq;
        }

        public long seqAtOrAfter(long ts) {
            return 0;
        }
    };
}

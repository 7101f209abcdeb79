package io.strand.logtier;

import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLog;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.ColdStore;
import io.strand.coldtier.WriterTerm;
import io.strand.core.Entry;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Thread-safe (a concurrent map of thread-safe parts): the cold tier as the log tier uses it: one
 * {@link ColdStore}, one block cache shared by every log, and a {@link ColdLog} per log (kept while
 * the node runs, it caches the manifest). On a cluster replica the store and cache are shared by
 * the node's shards and every write is fenced by the shard's {@link WriterTerm}.
 */
public final class ColdTier implements AutoCloseable {
    private final ColdStore store;
    private final BlockCache cache;
    private final ColdLogConfig config;
    private final WriterTerm writerTerm;
    private final ConcurrentHashMap<String, ColdLog> logs = new ConcurrentHashMap<>();

    /** A single node's cold tier: this process is the store's only writer. */
    public ColdTier(ColdStore store, BlockCache cache, ColdLogConfig config) {
        this(store, cache, config, WriterTerm.NONE);
    }

    /** A cold tier whose manifest commits, uploads and deletes run only while {@code writerTerm} allows. */
    public ColdTier(ColdStore store, BlockCache cache, ColdLogConfig config, WriterTerm writerTerm) {
        this.store = store;
        this.cache = cache;
        this.config = config;
        this.writerTerm = writerTerm;
    }

    public ColdLog log(String ws, String name) {
        return logs.computeIfAbsent(ws + '/' + name, k -> new ColdLog(store, ws, name, cache, config, writerTerm));
    }

    /** The term this node writes the store under now: 0 a single node, ≥ 1 a shard leader, &lt; 0 not a writer. */
    public WriterTerm writerTerm() {
        return writerTerm;
    }

    /**
     * Step 1 of a log delete: deletes the log's manifest, so no reader and no later log of the same
     * name sees its segments. Throws (cold_unavailable) with nothing deleted when the store fails.
     */
    void dropManifest(String ws, String name) {
        log(ws, name).deleteManifest();
    }

    /**
     * Last step of a log delete: removes the segment objects the dropped manifest named, then
     * forgets the log's cached state. Best effort: what a failing store leaves is an orphan no
     * reader sees, removed by {@code strand cold orphans}; returns false then.
     */
    boolean deleteObjects(String ws, String name) {
        String key = ws + '/' + name;
        ColdLog cold = logs.remove(key);
        if (cold == null) {
            cold = new ColdLog(store, ws, name, cache, config, writerTerm);
        }
        try {
            cold.deleteObjects();
            return true;
        } catch (RuntimeException e) {
            System.getLogger("strand.cold").log(System.Logger.Level.WARNING, "log " + key + " is deleted but some of its cold"
                    + " objects under " + cold.prefix() + " are left (orphans no reader sees; `strand cold orphans` removes them): "
                    + e.getMessage());
            return false;
        }
    }

    public BlockCache cache() {
        return cache;
    }

    public ColdStore store() {
        return store;
    }

    ColdPart part(String ws, String name) {
        return new Part(log(ws, name));
    }

    @Override
    public void close() throws Exception {
        store.close();
    }

    /**
     * One cold read's way into a page: takes entries while the page's limit does, and only the seq
     * it expects next. Another seq means a trim retired it between our view of the manifest and the
     * read, and the cold part now starts later: the read ends there, and the caller re-reads first
     * and answers with a gap, never a silent skip. Used by the reading thread only.
     */
    private static final class Taker implements ColdLog.EntryTaker {
        private final long toSeq;
        private final LogReader.Limit limit;
        long next;

        Taker(long fromSeq, long toSeq, LogReader.Limit limit) {
            this.next = fromSeq;
            this.toSeq = toSeq;
            this.limit = limit;
        }

        @Override
        public boolean wantsMore() {
            return next <= toSeq && limit.wantsMore();
        }

        @Override
        public boolean take(Entry e) {
            if (e.seq() != next || e.seq() > toSeq || !limit.wantsMore()) {
                return false;
            }
            limit.entry(e.seq(), e.ts(), e.key(), e.data(), 0, e.data().length);
            next = e.seq() + 1;
            return true;
        }
    }

    /** A log's cold segments seen through the read path. */
    private record Part(ColdLog cold) implements ColdPart {
        @Override
        public long firstSeq() {
            return cold.firstSeq();
        }

        @Override
        public long lastSeq() {
            return cold.lastSeq();
        }

        @Override
        public int segments() {
            return cold.manifest().segments().size();
        }

        @Override
        public long bytes() {
            return cold.manifest().totalBytes();
        }

        @Override
        public boolean inMemory() {
            return cold.manifestLoaded();
        }

        @Override
        public long read(long fromSeq, long toSeq, LogReader.Limit limit) {
            Taker taker = new Taker(fromSeq, toSeq, limit);
            cold.read(fromSeq, taker);
            return taker.next;
        }

        @Override
        public long seqAtOrAfter(long ts) {
            OptionalLong seq = cold.findSeqAtOrAfterTime(ts);
            return seq.orElse(0);
        }
    }
}

package io.strand.coldtier;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Thread-safe: holds no state of its own; the manifest it reads through belongs to its {@link ColdLog}
 * (an atomic snapshot) and fetched footers and blocks go to the shared, thread-safe {@link BlockCache}.
 * The read path of one cold log: finds the segment and block holding a seq or a time, streams entries
 * into a {@link ColdLog.EntryTaker} block by block, and prefetches the next block for sequential
 * replay. Each footer and block is fetched by one ranged read of the segment object unless cached,
 * and checked against the manifest entry that names it.
 *
 * <p>Errors are raised bare; {@link ColdLog} adds the log's workspace and name to them.
 */
final class ColdReader {
    private final ColdLog log;

    ColdReader(ColdLog log) {
        this.log = log;
    }

    /** As {@link ColdLog#read(long, ColdLog.EntryTaker)}. */
    long read(long fromSeq, ColdLog.EntryTaker taker) {
        Manifest m = log.manifest();
        if (fromSeq > m.lastSeq()) {
            m = log.refresh(); // maybe rolled since we looked
        }
        long[] next = {fromSeq};
        try {
            readPage(m, next, taker);
        } catch (StrandException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw e;
            }
            // A segment vanished: our manifest is older than a compaction's grace period. Once more,
            // fresh, from the seq after the last entry taken (none is handed over twice).
            Manifest fresh = log.refresh();
            try {
                readPage(fresh, next, taker);
            } catch (StrandException again) {
                if (again.code() == ErrorCode.NOT_FOUND) {
                    throw new StrandException(ErrorCode.CORRUPT, "cold manifest " + log.manifestKey() + " generation "
                            + fresh.generation() + " names a missing segment: " + again.getMessage(),
                            again.extras(), again);
                }
                throw again;
            }
        }
        return next[0];
    }

    /** As {@link ColdLog#findSeqAtOrAfterTime(long)}. */
    OptionalLong findSeqAtOrAfterTime(long time) {
        Manifest m = log.manifest();
        int si = m.firstSegmentAtOrAfterTime(time);
        if (si < 0) {
            return OptionalLong.empty();
        }
        SegmentMeta meta = m.segments().get(si);
        SegmentReader r = reader(meta);
        int bi = r.firstBlockAtOrAfterTime(time);
        if (bi < 0) {
            throw ColdErrors.corrupt(meta.key(), meta.firstSeq(), meta.lastSeq(), "footer disagrees with manifest on lastTs");
        }
        for (Entry e : block(meta, r, bi)) {
            if (e.ts() >= time) {
                return OptionalLong.of(e.seq());
            }
        }
        throw ColdErrors.corrupt(meta.key(), meta.firstSeq(), meta.lastSeq(), "block " + bi + " disagrees with its lastTs");
    }

    /** Reads from {@code next[0]} into {@code taker}, moving {@code next[0]} past each entry taken. */
    private void readPage(Manifest m, long[] next, ColdLog.EntryTaker taker) {
        if (m.segments().isEmpty() || next[0] > m.lastSeq()) {
            return;
        }
        long seq = Math.max(next[0], m.firstSeq());
        int si = m.segmentOf(seq);
        SegmentMeta lastMeta = null;
        int lastBlock = -1;
        outer:
        for (; si < m.segments().size(); si++) {
            if (!taker.wantsMore()) {
                break; // a page ending at a segment's end must not open (fetch, or fail on) the next one
            }
            SegmentMeta meta = m.segments().get(si);
            SegmentReader r = reader(meta);
            int bi = r.blockOf(seq);
            if (bi < 0) {
                throw ColdErrors.corrupt(meta.key(), meta.firstSeq(), meta.lastSeq(), "footer has no block for seq " + seq);
            }
            for (; bi < r.blocks().size(); bi++) {
                if (!taker.wantsMore()) {
                    break outer;
                }
                List<Entry> entries = block(meta, r, bi);
                lastMeta = meta;
                lastBlock = bi;
                for (int k = (int) (seq - r.blocks().get(bi).firstSeq()); k < entries.size(); k++) {
                    Entry e = entries.get(k);
                    if (!taker.take(e)) {
                        break outer;
                    }
                    seq = e.seq() + 1;
                    next[0] = seq;
                }
            }
        }
        if (log.config().readAhead() != null && lastMeta != null) {
            readAhead(m, lastMeta, lastBlock, seq - 1);
        }
    }

    /** Sequential replay: once a page reaches the second half of a block, fetch the next block in the background. */
    private void readAhead(Manifest m, SegmentMeta meta, int bi, long lastReturned) {
        SegmentReader r = reader(meta);
        BlockIndex b = r.blocks().get(bi);
        if (lastReturned - b.firstSeq() < b.entries() / 2) {
            return;
        }
        SegmentMeta nextMeta = meta;
        int next = bi + 1;
        if (next == r.blocks().size()) {
            int si = m.segmentOf(meta.lastSeq() + 1);
            if (si < 0) {
                return;
            }
            nextMeta = m.segments().get(si);
            next = 0;
        }
        if (log.cache().contains(new BlockCache.Key(nextMeta.sha256(), next))) {
            return;
        }
        SegmentMeta target = nextMeta;
        int targetBlock = next;
        try {
            log.config().readAhead().execute(() -> {
                try {
                    block(target, reader(target), targetBlock);
                } catch (RuntimeException ignored) {
                    // read-ahead is a hint: the reader that needs this block will see the error itself
                }
            });
        } catch (RuntimeException rejected) {
            // executor saturated or shut down: skip the hint
        }
    }

    /** The segment's footer index (cached), checked against the manifest entry that names it. */
    SegmentReader reader(SegmentMeta meta) {
        return log.cache().get(new BlockCache.Key(meta.sha256(), -1), () -> {
            SegmentReader r = SegmentReader.open(meta.key(), meta.bytes(), source(meta.key()));
            if (!meta.matches(r.trailer())) {
                throw ColdErrors.corrupt(meta.key(), meta.firstSeq(), meta.lastSeq(),
                        "trailer does not match the manifest entry");
            }
            return r;
        }, r -> 256L + (long) SegmentWriter.BLOCK_INDEX_SIZE * r.blocks().size());
    }

    /** Block {@code bi} of a segment, decoded and checked (cached). */
    List<Entry> block(SegmentMeta meta, SegmentReader r, int bi) {
        return log.cache().get(new BlockCache.Key(meta.sha256(), bi), () -> r.readBlock(bi, source(meta.key())),
                entries -> {
                    long w = 64;
                    for (Entry e : entries) {
                        w += e.weight() + 32;
                    }
                    return w;
                });
    }

    /** Ranged reads of one object of the store. */
    SegmentReader.RangeSource source(String key) {
        return (offset, length) -> log.store().getRange(key, offset, length);
    }

    /** The taker of {@link ColdLog#read(long, int, long)}: a page of at most so many entries and bytes. Used by the reading thread only. */
    static final class Page implements ColdLog.EntryTaker {
        private final int maxEntries;
        private final long maxBytes;
        private final List<Entry> out = new ArrayList<>();
        private long bytes;

        Page(int maxEntries, long maxBytes) {
            this.maxEntries = maxEntries;
            this.maxBytes = maxBytes;
        }

        @Override
        public boolean wantsMore() {
            return out.size() < maxEntries && bytes < maxBytes;
        }

        @Override
        public boolean take(Entry e) {
            if (out.size() >= maxEntries || (!out.isEmpty() && bytes + e.weight() > maxBytes)) {
                return false;
            }
            out.add(e);
            bytes += e.weight();
            return true;
        }

        List<Entry> entries() {
            return out;
        }
    }
}

package io.strand.coldtier;

import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

/**
 * Thread-safe: reads run on any thread; roll, compaction and garbage collection may run concurrently
 * (here or in other processes) because every manifest change is a conditional commit that re-reads
 * and re-applies after a lost race. The log has one roller (its owner).
 * The cold part of one log ({@code ws}, {@code log}) in a {@link ColdStore}, as the facade the other
 * modules use: it holds the manifest and the writer-term fence, and hands each job to its helper —
 * the roll of hot entries into a new segment ({@link ColdRoll}), page reads across segments
 * ({@link ColdReader}), compaction and garbage collection ({@link Compactor}) and verification
 * ({@link ColdVerifier}). Errors leaving here name the log.
 *
 * <p>Fencing ({@link WriterTerm}): in a cluster every replica reads the shared store, but only the
 * shard's leader writes it. Each commit attempt reads the writer's term, refuses when this process
 * may not write or the stored manifest carries a higher term, and stamps its own; uploads and
 * deletes before a commit check that this process may still write. Readers never consult the term.
 *
 * <p>Object keys: {@code {ws}/{log}/manifest.json} and {@code {ws}/{log}/seg/{firstSeq:020d}-{lastSeq:020d}.seg},
 * below the store's own prefix. Readers trust the manifest, never a listing.
 */
public final class ColdLog {
    private final ColdStore store;
    private final String ws;
    private final String log;
    private final BlockCache cache;
    private final ColdLogConfig config;
    private final ManifestStore manifests;
    private final WriterTerm writerTerm;
    private final String prefix;
    private final String manifestKey;
    /**
     * The manifest as last seen; commits and re-reads only move it forward ({@link #adopt}), and only
     * {@link #deleteManifest} sets it back (to the empty manifest).
     */
    private final AtomicReference<ManifestStore.Snapshot> snapshot = new AtomicReference<>();
    /** Manifest deletes done here: a re-read that began before one is not adopted after it. */
    private final AtomicLong deletes = new AtomicLong();
    private final ColdReader readPath;

    public ColdLog(ColdStore store, String ws, String log, BlockCache cache, ColdLogConfig config) {
        this(store, ws, log, cache, config, WriterTerm.NONE);
    }

    /** As above, every manifest commit (and every upload or delete leading to one) fenced by {@code writerTerm}. */
    public ColdLog(ColdStore store, String ws, String log, BlockCache cache, ColdLogConfig config, WriterTerm writerTerm) {
        this.writerTerm = writerTerm;
        this.store = store;
        this.ws = Names.workspace(ws);
        this.log = Names.object("log", log);
        this.cache = cache;
        this.config = config;
        this.manifests = new ManifestStore(store);
        this.prefix = ws + "/" + log + "/";
        this.manifestKey = prefix + "manifest.json";
        this.readPath = new ColdReader(this);
    }

    public String ws() {
        return ws;
    }

    public String log() {
        return log;
    }

    /** Key prefix of every object of this log, ending in '/'. */
    public String prefix() {
        return prefix;
    }

    public String manifestKey() {
        return manifestKey;
    }

    public String segmentKey(long firstSeq, long lastSeq) {
        return String.format("%sseg/%020d-%020d.seg", prefix, firstSeq, lastSeq);
    }

    /** The manifest as last read or committed here (read once on first use). */
    public Manifest manifest() {
        return snapshot().manifest();
    }

    /** True once a manifest was read or committed here, so {@link #manifest()} needs no object-store request. */
    public boolean manifestLoaded() {
        return snapshot.get() != null;
    }

    /**
     * Re-reads the manifest from the store (another process may have rolled or compacted) and returns
     * the newer of it and the one held here. A read that returns after a commit of this process (a
     * status request racing the roller) carries the older generation, and putting it back made the
     * roller ask the hot part for entries it had already rolled and dropped, and a read between the
     * hot and cold parts see neither ({@code ColdLogContract}). Generations only grow: each is one
     * conditional write. The one step back, {@link #deleteManifest}, counts in {@code deletes}, and a
     * re-read that began before a delete is not adopted after it.
     */
    public Manifest refresh() {
        return guard(() -> {
            long deletesBefore = deletes.get();
            ManifestStore.Snapshot read = manifests.read(manifestKey, ws, log);
            snapshot.accumulateAndGet(read, (cur, s) -> deletes.get() != deletesBefore ? cur : newer(cur, s));
            return snapshot.get().manifest();
        });
    }

    /** First cold seq, 0 when nothing is cold. */
    public long firstSeq() {
        return manifest().firstSeq();
    }

    /** Last cold seq, 0 when nothing is cold. */
    public long lastSeq() {
        return manifest().lastSeq();
    }

    // ------------------------------------------------------------------------------------------ roll

    /** As {@link #roll(Iterator)}. */
    public Optional<SegmentMeta> roll(List<Entry> entries) {
        return roll(entries.iterator());
    }

    /**
     * Moves contiguous entries into one new cold segment (STYLE.md roll steps 2–5): write locally and
     * fsync, upload under the deterministic key, verify size and trailer, commit the manifest. Entries
     * already cold (seq ≤ {@link #lastSeq()}) are skipped, so re-running a roll after a crash at any step
     * is idempotent; the rest must continue exactly after {@code lastSeq()} ({@code SEQ_MISMATCH} otherwise).
     *
     * @return the committed segment, or empty when every entry was already cold
     */
    public Optional<SegmentMeta> roll(Iterator<Entry> entries) {
        return guard(() -> ColdRoll.run(this, entries));
    }

    // ------------------------------------------------------------------------------------------ read

    /**
     * Where a streaming {@link #read(long, EntryTaker)} hands its entries, in seq order, and when it
     * ends: the caller counts its own page. Used by the reading thread only.
     */
    public interface EntryTaker {
        /** False once the read should end before it fetches another block. */
        boolean wantsMore();

        /** The next entry; false refuses it, and the read ends before it. */
        boolean take(Entry e);
    }

    /**
     * Up to {@code maxEntries} entries from {@code fromSeq} ascending (from the first cold seq if
     * {@code fromSeq} is older), stopping before the entry that would pass {@code maxBytes} of
     * {@link Entry#weight()} (at least one entry is returned when any is available), as
     * {@link #read(long, EntryTaker)} reads them. Empty past the cold part.
     * Returned entries are shared with the block cache: never modify their {@code data} arrays.
     */
    public List<Entry> read(long fromSeq, int maxEntries, long maxBytes) {
        if (maxEntries < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("maxEntries and maxBytes must be ≥ 1");
        }
        ColdReader.Page page = new ColdReader.Page(maxEntries, maxBytes);
        read(fromSeq, page);
        return page.entries();
    }

    /**
     * Streams entries from {@code fromSeq} ascending (from the first cold seq if {@code fromSeq} is
     * older) into {@code taker} until it refuses one, wants no more, or the cold part ends. Fetches
     * only the blocks the read touches, each by one ranged read unless cached; with a read-ahead
     * executor configured, a read ending in the second half of a block prefetches the next one.
     * Re-reads the manifest once when {@code fromSeq} lies past the cached cold part. Entries are
     * shared with the block cache: never modify their {@code data} arrays.
     *
     * @return the seq after the last entry taken ({@code fromSeq} when none was)
     */
    public long read(long fromSeq, EntryTaker taker) {
        return guard(() -> readPath.read(fromSeq, taker));
    }

    /** The first cold seq whose entry has {@code ts ≥ time}, or empty when every cold entry is older. */
    public OptionalLong findSeqAtOrAfterTime(long time) {
        return guard(() -> readPath.findSeqAtOrAfterTime(time));
    }

    /** The segment's footer index (cached), checked against the manifest entry that names it. */
    SegmentReader reader(SegmentMeta meta) {
        return readPath.reader(meta);
    }

    /** Ranged reads of one object of the store. */
    SegmentReader.RangeSource source(String key) {
        return readPath.source(key);
    }

    // ------------------------------------------------------------------------------------------ maintenance

    /** Merges small adjacent segments up to {@link ColdLogConfig#DEFAULT_COMPACTION_TARGET_BYTES}, retiring the old ones for {@link ColdLogConfig#DEFAULT_COMPACTION_GRACE}. */
    public Compactor.Report compact() {
        return compact(ColdLogConfig.DEFAULT_COMPACTION_TARGET_BYTES, ColdLogConfig.DEFAULT_COMPACTION_GRACE);
    }

    /**
     * Merges runs of adjacent segments whose total stays within {@code targetBytes} into one segment
     * each (verified end to end: the merged entries must reproduce the hash chain), swaps each run
     * in the manifest with a conditional commit, and records the old keys as pending deletes that
     * {@link #collectGarbage} removes after {@code grace}. Garbage already due is collected first.
     * Safe while this log rolls: a lost race re-reads and re-applies; a run changed by someone else is
     * abandoned and counted.
     */
    public Compactor.Report compact(long targetBytes, Duration grace) {
        return guard(() -> new Compactor(this).compact(targetBytes, grace));
    }

    /**
     * Retires every segment wholly below {@code before} (a trim) through one conditional manifest
     * commit; their objects stay for {@code grace}, so a reader holding the previous manifest still
     * finishes, and {@link #collectGarbage} deletes them after it. A segment holding {@code before}
     * stays whole. Safe to repeat and to race rolls and compactions (a lost race re-applies).
     * Fail point {@code trim.afterColdManifest}.
     *
     * @return segments retired by this call
     */
    public int trimBefore(long before, Duration grace) {
        return guard(() -> new Compactor(this).trimBefore(before, grace));
    }

    /** True when the cached manifest has retired segments whose grace ended by {@code now} (no store request). */
    public boolean garbageDue(Instant now) {
        ManifestStore.Snapshot s = snapshot.get();
        return s != null && s.manifest().pendingDeletes().stream().anyMatch(p -> p.retireAt() <= now.toEpochMilli());
    }

    /** Deletes retired segments whose grace period ended by {@code now}, then drops them from the manifest. */
    public int collectGarbage(Instant now) {
        return guard(() -> new Compactor(this).collectGarbage(now));
    }

    /** Checks every block, hash and link of this log's cold part, and lists orphan objects. */
    public VerifyReport verify() {
        return guard(() -> new ColdVerifier(this).verify());
    }

    /** Objects under this log's prefix that the manifest neither lists nor retires. */
    public List<ColdStore.ObjectInfo> orphans() {
        return guard(() -> new ColdVerifier(this).orphans());
    }

    /** Deletes orphans older than {@link ColdLogConfig#DEFAULT_ORPHAN_MIN_AGE}. */
    public int deleteOrphans() {
        return deleteOrphans(ColdLogConfig.DEFAULT_ORPHAN_MIN_AGE);
    }

    /**
     * Deletes orphans last modified at least {@code minAge} ago (younger ones may be an upload in
     * flight); {@link Duration#ZERO} deletes every orphan, for when nothing else writes this log.
     */
    public int deleteOrphans(Duration minAge) {
        return guard(() -> new ColdVerifier(this).deleteOrphans(minAge));
    }

    /** Removes every object of this log, manifest first, so a crash midway leaves only orphans (re-run to finish). */
    public void deleteAll() {
        deleteManifest();
        deleteObjects();
    }

    /**
     * Deletes the manifest: from then on the log has no cold part for any reader or roll (readers
     * trust the manifest, never a listing), and its segment objects are orphans. When this throws,
     * nothing was deleted.
     */
    public void deleteManifest() {
        guard(() -> {
            if (mayWrite("delete the manifest") > 0) {
                fence(refresh(), "delete the manifest"); // a single node (term 0) deletes without a read first, as before
            }
            store.delete(manifestKey);
            deletes.incrementAndGet(); // first: a re-read's adopt that runs after this keeps what is held,
            snapshot.set(new ManifestStore.Snapshot(Manifest.empty(ws, log), null)); // and this set comes after it
            return null;
        });
    }

    /**
     * A cluster leader's delete of this log's cold part (a log a shard deleted): commits the next
     * generation with no segment ({@link Manifest#emptied}; also when no manifest was stored), fenced by
     * the leader's term, then deletes every other object under the prefix. The empty manifest stays as
     * a tombstone: a deposed leader's roll of the deleted log can neither replace it (its generation
     * and term are older) nor create it anew, and a later log of the same name rolls on from it, empty.
     * Safe to repeat. Returns the generation committed (or found already empty).
     */
    public long retireDeleted() {
        return guard(() -> {
            Manifest m = update("empty the manifest of a deleted log",
                    cur -> cur.generation() > 0 && cur.segments().isEmpty() && cur.pendingDeletes().isEmpty() ? null : cur.emptied());
            mayWrite("delete the objects under " + prefix);
            for (ColdStore.ObjectInfo o : store.list(prefix)) {
                if (!o.key().equals(manifestKey)) {
                    store.delete(o.key());
                }
            }
            return m.generation();
        });
    }

    /**
     * A cluster replica's view after its shard's leader emptied this manifest at {@code generation}
     * ({@link #retireDeleted}): an empty manifest of that generation is adopted unless a newer one is
     * held, so no read goes on from a deleted log's manifest cached here. No store I/O.
     */
    public void adoptEmptied(long generation) {
        ManifestStore.Snapshot emptied = new ManifestStore.Snapshot(
                new Manifest(Manifest.FORMAT, ws, log, generation, List.of(), List.of(), 0), null);
        // strictly newer only: the leader holds the same generation with the etag its next commit needs
        snapshot.accumulateAndGet(emptied, (cur, seen) -> cur == null || cur.manifest().generation() < generation ? seen : cur);
    }

    /** Deletes every object under this log's prefix (after {@link #deleteManifest}); returns how many. */
    public int deleteObjects() {
        return guard(() -> {
            mayWrite("delete the objects under " + prefix);
            int deleted = 0;
            for (ColdStore.ObjectInfo o : store.list(prefix)) {
                store.delete(o.key());
                deleted++;
            }
            return deleted;
        });
    }

    // ------------------------------------------------------------------------------------------ shared with helpers

    ColdStore store() {
        return store;
    }

    ColdLogConfig config() {
        return config;
    }

    BlockCache cache() {
        return cache;
    }

    ManifestStore.Snapshot snapshot() {
        ManifestStore.Snapshot s = snapshot.get();
        if (s == null) {
            refresh();
            s = snapshot.get();
        }
        return s;
    }

    /** Keeps the newer of what we hold and {@code seen}, so a slow thread never moves our view back. */
    private void adopt(ManifestStore.Snapshot seen) {
        snapshot.accumulateAndGet(seen, ColdLog::newer);
    }

    private static ManifestStore.Snapshot newer(ManifestStore.Snapshot cur, ManifestStore.Snapshot seen) {
        return cur == null || seen.manifest().generation() >= cur.manifest().generation() ? seen : cur;
    }

    /**
     * Applies {@code change} to the current manifest and commits the result; after a lost race,
     * re-reads and applies it again, up to {@link ColdLogConfig#maxCommitAttempts()} times.
     * {@code change} returns the next generation, or null when there is nothing (more) to do.
     *
     * @return the manifest now current (committed by us, or the one that made the change unnecessary)
     */
    Manifest update(String what, UnaryOperator<Manifest> change) {
        ManifestStore.Snapshot s = snapshot();
        for (int attempt = 1; attempt <= config.maxCommitAttempts(); attempt++) {
            long term = fence(s.manifest(), what);
            Manifest next = change.apply(s.manifest());
            if (next == null) {
                return s.manifest();
            }
            next = next.withTerm(Math.max(term, s.manifest().term()));
            switch (manifests.commit(manifestKey, s, next)) {
                case ManifestStore.Committed c -> {
                    adopt(c.snapshot());
                    return c.snapshot().manifest();
                }
                case ManifestStore.Conflict c -> {
                    adopt(c.current());
                    s = c.current();
                }
            }
        }
        throw new StrandException(ErrorCode.VERSION_CONFLICT, "cold manifest " + manifestKey + ": " + what
                + " lost the commit race " + config.maxCommitAttempts() + " times in a row",
                Map.of("generation", s.manifest().generation()));
    }

    /**
     * The writer's term, checked against {@code stored} (a manifest this commit would replace):
     * throws {@code unavailable} when this process may not write the cold tier now, and
     * {@code version_conflict} (extras {@code term}, {@code manifestTerm}) when a newer leader has
     * committed this manifest. A store read or commit is never attempted by a fenced writer.
     */
    long fence(Manifest stored, String what) {
        long term = mayWrite(what);
        if (term > 0 && stored.term() > term) {
            throw new StrandException(ErrorCode.VERSION_CONFLICT, "cold manifest " + manifestKey + ": " + what
                    + " refused: a leader of term " + stored.term() + " committed it, this writer's term " + term
                    + " is deposed", Map.of("term", term, "manifestTerm", stored.term(), "fenced", true));
        }
        return term;
    }

    /**
     * The writer's term when this process may write the cold tier now (0 unfenced, ≥ 1 a leader's term);
     * throws {@code unavailable} (retryable) otherwise. Checked before every upload and delete.
     */
    long mayWrite(String what) {
        long term = writerTerm.current();
        if (term < 0) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cold log " + ws + "/" + log + ": " + what
                    + " refused: this node does not lead the log's shard (only the leader writes the cold tier)",
                    Map.of("retryable", true, "fenced", true));
        }
        return term;
    }

    private <T> T guard(java.util.function.Supplier<T> body) {
        try {
            return body.get();
        } catch (StrandException e) {
            throw ColdErrors.inLog(e, ws, log);
        }
    }

    @Override
    public String toString() {
        return "ColdLog[" + ws + "/" + log + " in " + store.describe() + "]";
    }
}

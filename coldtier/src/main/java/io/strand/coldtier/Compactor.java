package io.strand.coldtier;

import io.strand.core.ErrorCode;
import io.strand.core.FailPoints;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Merges small adjacent segments of one log, retires trimmed ones, and deletes retired ones after their grace period.
 * One instance per call, run by the log's background worker (or the {@code strand cold compact}
 * tool in another process): all coordination with rolls and readers goes through conditional
 * manifest commits, so nothing here needs a lock.
 *
 * <p>Steps per run of segments, each safe to repeat: read and fully verify each old segment while
 * streaming its entries into a local merged segment; check the merged chain equals the run's
 * (proof that no entry changed); upload under {@code {first}-{last}.seg}; verify size and trailer;
 * commit the manifest with the run replaced and its keys pending delete. A crash before the commit
 * leaves an orphan the next compaction overwrites (same range, same bytes); after it, nothing.
 * Fail points: {@code compact.afterUpload}, {@code compact.afterManifest}, {@code gc.afterDelete}.
 *
 * <p>Memory: one old segment is held whole while it is verified and re-blocked, so at most the
 * largest segment in a run (runs total ≤ {@code targetBytes}).
 */
public final class Compactor {
    /** What one compaction did. {@code abandoned} runs were changed by another writer meanwhile and left alone. */
    public record Report(int segmentsBefore, int segmentsAfter, int merged, int retired, int abandoned,
                         int garbageDeleted) {
    }

    private final ColdLog log;

    Compactor(ColdLog log) {
        this.log = log;
    }

    Report compact(long targetBytes, Duration grace) {
        if (targetBytes < 1 || grace.isNegative()) {
            throw new IllegalArgumentException("targetBytes must be positive and grace not negative");
        }
        int garbage = collectGarbage(log.config().clock().instant());
        Manifest m = log.refresh();
        int before = m.segments().size();
        int merged = 0;
        int retired = 0;
        int abandoned = 0;
        for (List<SegmentMeta> run : plan(m.segments(), targetBytes)) {
            if (mergeRun(run, grace)) {
                merged++;
                retired += run.size();
            } else {
                abandoned++;
            }
        }
        return new Report(before, log.manifest().segments().size(), merged, retired, abandoned, garbage);
    }

    /** Runs of ≥ 2 adjacent segments whose total size stays within {@code targetBytes}, greedily from the oldest. */
    static List<List<SegmentMeta>> plan(List<SegmentMeta> segments, long targetBytes) {
        List<List<SegmentMeta>> runs = new ArrayList<>();
        int i = 0;
        while (i < segments.size()) {
            long sum = segments.get(i).bytes();
            int j = i + 1;
            while (j < segments.size() && sum + segments.get(j).bytes() <= targetBytes) {
                sum += segments.get(j).bytes();
                j++;
            }
            if (j - i >= 2) {
                runs.add(List.copyOf(segments.subList(i, j)));
            }
            i = j;
        }
        return runs;
    }

    private boolean mergeRun(List<SegmentMeta> run, Duration grace) {
        SegmentMeta first = run.getFirst();
        SegmentMeta last = run.getLast();
        String key = log.segmentKey(first.firstSeq(), last.lastSeq());
        Path file = log.config().tempDir().resolve("compact@" + log.ws() + "@" + log.log() + "@"
                + first.firstSeq() + "-" + last.lastSeq() + ".seg");
        try {
            Files.createDirectories(file.getParent());
            SegmentTrailer t;
            try (SegmentWriter w = SegmentWriter.create(file, first.prevChainSha256(), log.config().blockBytes(),
                    log.config().zstdLevel())) {
                for (SegmentMeta s : run) {
                    byte[] whole;
                    try {
                        whole = log.store().get(s.key());
                    } catch (StrandException e) {
                        if (e.code() == ErrorCode.NOT_FOUND && !log.refresh().segments().contains(s)) {
                            return false; // retired (a trim) and collected since this run was planned: someone else changed it
                        }
                        throw e; // a segment the manifest still lists is missing: not ours to hide
                    }
                    SegmentReader r = SegmentReader.verifyAll(s.key(), whole, w::append);
                    if (!s.matches(r.trailer())) {
                        throw ColdErrors.corrupt(s.key(), s.firstSeq(), s.lastSeq(), "trailer does not match the manifest entry");
                    }
                }
                t = w.finish();
            }
            if (!t.chainSha256().equals(last.chainSha256()) || !t.prevChainSha256().equals(first.prevChainSha256())) {
                throw ColdErrors.corrupt(key, t.firstSeq(), t.lastSeq(), "merged entries do not reproduce the hash chain");
            }
            ColdRoll.Prepared p = new ColdRoll.Prepared(file, key, t);
            ColdRoll.upload(log, p);
            ColdRoll.verifyUpload(log, p);
            FailPoints.hit("compact.afterUpload");
            SegmentMeta mergedMeta = p.meta();
            long retireAt = log.config().clock().instant().plus(grace).toEpochMilli();
            Manifest now = log.update("compact " + key, m -> {
                int from = m.segmentOf(first.firstSeq());
                int to = from + run.size() - 1;
                if (from < 0 || to >= m.segments().size() || !m.segments().subList(from, to + 1).equals(run)) {
                    return null; // someone else changed these segments: leave them
                }
                return m.withMerged(from, to, mergedMeta, retireAt);
            });
            FailPoints.hit("compact.afterManifest");
            int at = now.segmentOf(first.firstSeq());
            return at >= 0 && now.segments().get(at).equals(mergedMeta);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot write " + file + ": " + e, Map.of(), e);
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // overwritten by the next compaction of this range
            }
        }
    }

    /** As {@link ColdLog#trimBefore}: retires every segment wholly below {@code before}; fail point {@code trim.afterColdManifest}. */
    int trimBefore(long before, Duration grace) {
        long retireAt = log.config().clock().instant().plus(grace).toEpochMilli();
        int[] retired = {0};
        log.update("trim before " + before, m -> {
            Manifest next = m.withTrimmed(before, retireAt);
            retired[0] = next == null ? 0 : m.segments().size() - next.segments().size();
            return next;
        });
        FailPoints.hit("trim.afterColdManifest");
        return retired[0];
    }

    /**
     * Deletes pending-delete objects whose grace ended by {@code now} (never one that is live again),
     * then commits a manifest without them. Repeating after a crash deletes nothing twice that matters:
     * deleting an absent object is a no-op.
     */
    int collectGarbage(Instant now) {
        Manifest m = log.refresh();
        log.fence(m, "collect garbage");
        Set<String> live = new HashSet<>();
        m.segments().forEach(s -> live.add(s.key()));
        Set<String> due = new HashSet<>();
        for (Manifest.PendingDelete p : m.pendingDeletes()) {
            if (p.retireAt() <= now.toEpochMilli()) {
                due.add(p.key());
                if (!live.contains(p.key())) {
                    log.store().delete(p.key());
                }
            }
        }
        if (due.isEmpty()) {
            return 0;
        }
        FailPoints.hit("gc.afterDelete");
        log.update("collect garbage", cur -> {
            Set<String> still = new HashSet<>();
            cur.pendingDeletes().forEach(p -> {
                if (due.contains(p.key())) {
                    still.add(p.key());
                }
            });
            return still.isEmpty() ? null : cur.withoutPending(still);
        });
        return due.size();
    }
}

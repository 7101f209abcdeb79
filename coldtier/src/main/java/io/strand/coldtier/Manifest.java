package io.strand.coldtier;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A log's cold part at one generation: the live segments in seq order (contiguous, no gaps or
 * overlaps) and the retired segments waiting out their grace period before deletion. Immutable;
 * every change is a new generation committed by {@link ManifestStore} with a conditional write.
 *
 * <p>Stored as JSON at {@code {ws}/{log}/manifest.json}:
 * <pre>
 * {"format":1,"ws":"w","log":"l","generation":7,
 *  "segments":[{"key":"w/l/seg/…-….seg","firstSeq":1,"lastSeq":500,"firstTs":…,"lastTs":…,"entries":500,
 *               "bytes":12345,"sha256":"…","prevChainSha256":"…","chainSha256":"…"}, …],
 *  "pendingDeletes":[{"key":"…","retireAt":1764450000123}],
 *  "term":4}
 * </pre>
 * Generation 0 means "no manifest yet" and is never stored. {@code term} is the highest Raft term
 * of a cluster leader that committed this manifest ({@link WriterTerm}); a single node never writes
 * it (absent = 0), so its manifests are byte for byte what they were before clusters.
 */
public record Manifest(int format, String ws, String log, long generation, List<SegmentMeta> segments,
                       List<PendingDelete> pendingDeletes,
                       @JsonInclude(JsonInclude.Include.NON_DEFAULT) long term) {

    public static final int FORMAT = 1;
    private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");

    /** A retired segment object, deleted by garbage collection once {@code retireAt} (epoch ms) has passed. */
    public record PendingDelete(String key, long retireAt) {
    }

    public Manifest {
        segments = List.copyOf(segments);
        pendingDeletes = List.copyOf(pendingDeletes);
    }

    /** A manifest no cluster leader has committed (term 0). */
    public Manifest(int format, String ws, String log, long generation, List<SegmentMeta> segments,
                    List<PendingDelete> pendingDeletes) {
        this(format, ws, log, generation, segments, pendingDeletes, 0);
    }

    public static Manifest empty(String ws, String log) {
        return new Manifest(FORMAT, ws, log, 0, List.of(), List.of(), 0);
    }

    /** The same generation stamped with writer term {@code value}. */
    public Manifest withTerm(long value) {
        return value == term ? this : new Manifest(format, ws, log, generation, segments, pendingDeletes, value);
    }

    /** First cold seq, 0 when there is no cold part. */
    public long firstSeq() {
        return segments.isEmpty() ? 0 : segments.getFirst().firstSeq();
    }

    /** Last cold seq, 0 when there is no cold part. */
    public long lastSeq() {
        return segments.isEmpty() ? 0 : segments.getLast().lastSeq();
    }

    public long totalBytes() {
        return segments.stream().mapToLong(SegmentMeta::bytes).sum();
    }

    public long totalEntries() {
        return segments.stream().mapToLong(SegmentMeta::entries).sum();
    }

    /** Index of the segment holding {@code seq}, or -1. */
    public int segmentOf(long seq) {
        int lo = 0;
        int hi = segments.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            SegmentMeta s = segments.get(mid);
            if (seq < s.firstSeq()) {
                hi = mid - 1;
            } else if (seq > s.lastSeq()) {
                lo = mid + 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    /** Index of the first segment whose last entry has {@code ts ≥ time}, or -1. */
    public int firstSegmentAtOrAfterTime(long time) {
        int lo = 0;
        int hi = segments.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (segments.get(mid).lastTs() < time) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo == segments.size() ? -1 : lo;
    }

    /** Every key this manifest still owns: live segments and pending deletes. */
    @JsonIgnore
    public Set<String> referencedKeys() {
        Set<String> keys = new HashSet<>();
        segments.forEach(s -> keys.add(s.key()));
        pendingDeletes.forEach(p -> keys.add(p.key()));
        return keys;
    }

    /** The next generation with {@code segment} appended after the last one. */
    public Manifest withAppended(SegmentMeta segment) {
        List<SegmentMeta> next = new ArrayList<>(segments);
        next.add(segment);
        return new Manifest(FORMAT, ws, log, generation + 1, next, pendingDeletes, term);
    }

    /**
     * The next generation with the live run {@code from..to} (inclusive indexes) replaced by
     * {@code merged}, and the replaced keys retired until {@code retireAt}.
     */
    public Manifest withMerged(int from, int to, SegmentMeta merged, long retireAt) {
        List<SegmentMeta> next = new ArrayList<>(segments.subList(0, from));
        next.add(merged);
        next.addAll(segments.subList(to + 1, segments.size()));
        List<PendingDelete> pending = new ArrayList<>(pendingDeletes);
        for (SegmentMeta old : segments.subList(from, to + 1)) {
            pending.add(new PendingDelete(old.key(), retireAt));
        }
        return new Manifest(FORMAT, ws, log, generation + 1, next, pending, term);
    }

    /**
     * The next generation without the leading segments wholly below {@code before} (a trim: every
     * entry they hold is below the log's first retained seq), their keys retired until
     * {@code retireAt} so a reader holding this generation still finishes; null when no segment
     * lies wholly below {@code before}. A segment that straddles {@code before} stays.
     */
    public Manifest withTrimmed(long before, long retireAt) {
        int drop = 0;
        while (drop < segments.size() && segments.get(drop).lastSeq() < before) {
            drop++;
        }
        if (drop == 0) {
            return null;
        }
        List<PendingDelete> pending = new ArrayList<>(pendingDeletes);
        for (SegmentMeta old : segments.subList(0, drop)) {
            pending.add(new PendingDelete(old.key(), retireAt));
        }
        return new Manifest(FORMAT, ws, log, generation + 1, segments.subList(drop, segments.size()), pending, term);
    }

    /**
     * The next generation with no segment and nothing pending: what a cluster leader commits for a
     * deleted log (its term fences every older writer; a later log of the same name starts from it).
     */
    public Manifest emptied() {
        return new Manifest(FORMAT, ws, log, generation + 1, List.of(), List.of(), term);
    }

    /** The next generation without the given pending deletes. */
    public Manifest withoutPending(Set<String> keys) {
        List<PendingDelete> pending = pendingDeletes.stream().filter(p -> !keys.contains(p.key())).toList();
        return new Manifest(FORMAT, ws, log, generation + 1, segments, pending, term);
    }

    public byte[] toJson() {
        return Json.bytes(this);
    }

    /** Parses and {@linkplain #validate validates} a stored manifest. */
    public static Manifest fromJson(byte[] bytes, String key) {
        Manifest m;
        try {
            m = Json.MAPPER.readValue(bytes, Manifest.class);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw ColdErrors.corrupt(key, "manifest is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw ColdErrors.corrupt(key, "manifest is unreadable: " + e.getMessage());
        }
        m.validate(key);
        return m;
    }

    /** Throws {@code CORRUPT} unless the segments are well formed, in order, contiguous and distinct. */
    public void validate(String key) {
        List<String> problems = problems();
        if (!problems.isEmpty()) {
            Map<String, Object> extras = new LinkedHashMap<>();
            extras.put("segment", key);
            extras.put("generation", generation);
            throw new StrandException(ErrorCode.CORRUPT, "cold manifest " + key + " is inconsistent: "
                    + String.join("; ", problems), extras);
        }
    }

    /** Everything wrong with this manifest's own structure (empty when consistent). */
    public List<String> problems() {
        List<String> out = new ArrayList<>();
        if (format != FORMAT) {
            out.add("unsupported manifest format " + format);
        }
        if (generation < 0 || term < 0 || segments == null || pendingDeletes == null) {
            out.add("missing fields");
            return out;
        }
        Set<String> keys = new HashSet<>();
        SegmentMeta prev = null;
        for (SegmentMeta s : segments) {
            if (s.key() == null || !keys.add(s.key())) {
                out.add("segment key " + s.key() + " missing or listed twice");
            }
            if (s.firstSeq() < 1 || s.lastSeq() < s.firstSeq() || s.entries() != s.lastSeq() - s.firstSeq() + 1
                    || s.lastTs() < s.firstTs() || s.bytes() <= 0) {
                out.add("segment " + s.key() + " has inconsistent seqs/ts/size");
            }
            if (s.sha256() == null || !HEX64.matcher(s.sha256()).matches() || s.chainSha256() == null
                    || !HEX64.matcher(s.chainSha256()).matches() || s.prevChainSha256() == null
                    || !HEX64.matcher(s.prevChainSha256()).matches()) {
                out.add("segment " + s.key() + " has malformed hashes");
            }
            if (prev != null) {
                if (s.firstSeq() != prev.lastSeq() + 1) {
                    out.add("gap or overlap between " + prev.key() + " and " + s.key());
                }
                if (s.firstTs() < prev.lastTs()) {
                    out.add("time goes backwards between " + prev.key() + " and " + s.key());
                }
                if (s.prevChainSha256() != null && !s.prevChainSha256().equals(prev.chainSha256())) {
                    out.add("hash chain broken between " + prev.key() + " and " + s.key());
                }
            }
            prev = s;
        }
        for (PendingDelete p : pendingDeletes) {
            if (p.key() == null || keys.contains(p.key())) {
                out.add("pending delete " + p.key() + " is also live");
            }
        }
        return out;
    }
}

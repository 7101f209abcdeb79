package io.strand.coldtier;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code strand cold verify} for one log: reads every segment the manifest names in full and checks
 * it (header, block CRCs, entries, body SHA-256, entry hash chain), checks the manifest's own
 * continuity and chain links, and finds orphans. Read-only apart from {@link #deleteOrphans}.
 * One instance per call; a store that is down fails the call with {@code COLD_UNAVAILABLE} rather
 * than reporting every segment as missing.
 */
final class ColdVerifier {
    private static final String ZERO_CHAIN = HexFormat.of().formatHex(BlockEntryCodec.CHAIN_START);

    private final ColdLog log;

    ColdVerifier(ColdLog log) {
        this.log = log;
    }

    VerifyReport verify() {
        List<VerifyReport.Problem> problems = new ArrayList<>();
        Manifest m;
        try {
            m = log.refresh();
        } catch (StrandException e) {
            if (e.code() != ErrorCode.CORRUPT) {
                throw e;
            }
            problems.add(new VerifyReport.Problem("manifest", log.manifestKey(), 0, 0, e.getMessage()));
            // Without a trustworthy manifest, nothing can be called an orphan.
            return new VerifyReport(log.ws(), log.log(), -1, 0, 0, 0, 0, problems, List.of());
        }
        for (String p : m.problems()) {
            String kind = p.startsWith("hash chain") ? "chain" : "manifest";
            problems.add(new VerifyReport.Problem(kind, log.manifestKey(), m.firstSeq(), m.lastSeq(), p));
        }
        if (!m.segments().isEmpty() && m.segments().getFirst().firstSeq() == 1
                && !m.segments().getFirst().prevChainSha256().equals(ZERO_CHAIN)) {
            SegmentMeta s = m.segments().getFirst();
            problems.add(new VerifyReport.Problem("chain", s.key(), s.firstSeq(), s.lastSeq(),
                    "the log's first segment does not start the hash chain"));
        }
        long blocks = 0;
        long entries = 0;
        long bytes = 0;
        for (SegmentMeta s : m.segments()) {
            Optional<ColdStore.ObjectInfo> info = log.store().head(s.key());
            if (info.isEmpty()) {
                problems.add(problem("missing", s, "object not found"));
                continue;
            }
            if (info.get().size() != s.bytes()) {
                problems.add(problem("size", s, "object has " + info.get().size() + " bytes, manifest says " + s.bytes()));
                continue;
            }
            byte[] whole;
            try {
                whole = log.store().get(s.key());
            } catch (StrandException e) {
                if (e.code() == ErrorCode.NOT_FOUND) {
                    problems.add(problem("missing", s, "object vanished while verifying"));
                    continue;
                }
                throw e;
            }
            long[] count = {0};
            try {
                SegmentReader r = SegmentReader.verifyAll(s.key(), whole, e -> count[0]++);
                if (!s.matches(r.trailer())) {
                    problems.add(problem("mismatch", s, "segment trailer differs from its manifest entry"));
                }
                blocks += r.blocks().size();
                entries += count[0];
                bytes += whole.length;
            } catch (StrandException e) {
                if (e.code() != ErrorCode.CORRUPT) {
                    throw e;
                }
                problems.add(problem("corrupt", s, e.getMessage()));
            }
        }
        return new VerifyReport(log.ws(), log.log(), m.generation(), m.segments().size(), blocks, entries, bytes,
                problems, orphans());
    }

    /** Lists first, then reads the manifest, so a segment committed in between is not called an orphan. */
    List<ColdStore.ObjectInfo> orphans() {
        List<ColdStore.ObjectInfo> listed = log.store().list(log.prefix());
        Manifest m = log.refresh();
        Set<String> referenced = m.referencedKeys();
        List<ColdStore.ObjectInfo> out = new ArrayList<>();
        for (ColdStore.ObjectInfo o : listed) {
            if (!o.key().equals(log.manifestKey()) && !referenced.contains(o.key())) {
                out.add(o);
            }
        }
        return out;
    }

    int deleteOrphans(Duration minAge) {
        Instant cutoff = log.config().clock().instant().minus(minAge);
        List<ColdStore.ObjectInfo> orphans = orphans();
        log.fence(log.manifest(), "delete orphans");
        int deleted = 0;
        for (ColdStore.ObjectInfo o : orphans) {
            if (minAge.isZero() || o.lastModified() == null || !o.lastModified().isAfter(cutoff)) {
                log.store().delete(o.key());
                deleted++;
            }
        }
        return deleted;
    }

    private static VerifyReport.Problem problem(String kind, SegmentMeta s, String message) {
        return new VerifyReport.Problem(kind, s.key(), s.firstSeq(), s.lastSeq(), message);
    }
}

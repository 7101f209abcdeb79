package io.strand.coldtier;

import java.util.List;

/**
 * What {@link ColdLog#verify()} found: counts of what was checked, every problem with the segment it
 * concerns, and orphan objects (under the log's prefix, named by no manifest entry or pending delete).
 */
public record VerifyReport(String ws, String log, long generation, int segments, long blocks, long entries,
                           long bytes, List<Problem> problems, List<ColdStore.ObjectInfo> orphans) {

    /**
     * One thing wrong. Kinds: {@code manifest} (unreadable or inconsistent), {@code missing} (object
     * absent), {@code size}, {@code corrupt} (a check inside the segment failed), {@code mismatch}
     * (segment differs from its manifest entry), {@code chain} (hash chain not linked).
     */
    public record Problem(String kind, String key, long firstSeq, long lastSeq, String message) {
    }

    public VerifyReport {
        problems = List.copyOf(problems);
        orphans = List.copyOf(orphans);
    }

    /** No problems and no orphans. */
    public boolean ok() {
        return problems.isEmpty() && orphans.isEmpty();
    }
}

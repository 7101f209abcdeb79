package io.strand.logtier;

/** {@code GET …/logs/{log}} (SPEC §5). */
public record LogInfo(String name, long first, long head, long hotFirst, long entries, long bytes,
                      int coldSegments, long created) {
}

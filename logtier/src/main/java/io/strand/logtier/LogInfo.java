package io.strand.logtier;

/**
 * {@code GET …/logs/{log}} (SPEC §5, §12).
 *
 * @param bytes            data bytes appended over the log's life
 * @param retention        the policy in effect (the log's own, else the server's defaults)
 * @param retentionDefault true when {@code retention} is the server's defaults
 * @param bytesHot         bytes the log's hot cycle files take on disk (allocated: the files are sparse)
 * @param bytesCold        bytes of its live cold segments
 */
public record LogInfo(String name, long first, long head, long hotFirst, long entries, long bytes,
                      int coldSegments, long created, RetentionPolicy retention, boolean retentionDefault,
                      long bytesHot, long bytesCold) {
}

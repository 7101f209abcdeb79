package io.strand.logtier;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.strand.core.StrandException;
import java.util.function.LongUnaryOperator;

/**
 * Immutable: how much of a log to keep (SPEC §12): entries older than {@code maxAgeSeconds}, beyond the newest
 * {@code maxEntries}, or beyond about {@code maxBytes} of entry data leave the log. A null limit is
 * unlimited.
 *
 * <p>{@code maxBytes} is measured with the log's average entry size (data bytes ever appended over
 * entries ever appended, as the roller estimates hot bytes), so it costs no scan; the bound is
 * exact for logs of evenly sized entries.
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record RetentionPolicy(Long maxAgeSeconds, Long maxEntries, Long maxBytes) {
    public static final RetentionPolicy UNLIMITED = new RetentionPolicy(null, null, null);

    public RetentionPolicy {
        check("maxAgeSeconds", maxAgeSeconds);
        check("maxEntries", maxEntries);
        check("maxBytes", maxBytes);
    }

    private static void check(String name, Long value) {
        if (value != null && value < 1) {
            throw StrandException.badRequest(name + " must be ≥ 1 (or null for unlimited), not " + value);
        }
    }

    public boolean unlimited() {
        return maxAgeSeconds == null && maxEntries == null && maxBytes == null;
    }

    /**
     * The first seq this policy keeps of a log whose committed head is {@code head} ({@code 1} when
     * it keeps everything).
     *
     * @param dataBytes    data bytes appended to the log over its life (for the average entry size)
     * @param seqAtOrAfter the first seq with ts ≥ a time (head+1 when none)
     */
    long keepFrom(long head, long dataBytes, long nowMillis, LongUnaryOperator seqAtOrAfter) {
        long keep = 1;
        if (head <= 0) {
            return keep;
        }
        if (maxEntries != null) {
            keep = Math.max(keep, head - maxEntries + 1);
        }
        if (maxBytes != null && dataBytes > 0) {
            double avg = (double) dataBytes / head;
            keep = Math.max(keep, head - (long) Math.floor(maxBytes / avg) + 1);
        }
        if (maxAgeSeconds != null) {
            long cutoff = nowMillis - Math.multiplyExact(maxAgeSeconds, 1000L);
            if (cutoff > 0) {
                keep = Math.max(keep, seqAtOrAfter.applyAsLong(cutoff));
            }
        }
        return Math.min(keep, head + 1);
    }
}

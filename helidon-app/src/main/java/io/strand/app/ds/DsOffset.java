package io.strand.app.ds;

import io.strand.core.StrandException;
import java.util.regex.Pattern;

/**
 * The one mapping between Durable Streams offsets and Strand seqs. An offset is
 * {@code SSSSSSSSSSSSSSSS_BBBBBBBBBBBBBBBB}: {@code S} is the seq of the last entry consumed (the
 * next read starts at {@code S+1}), {@code B} bytes into entry {@code S+1} (0 at entry boundaries;
 * a byte stream's read starts that far into the entry; fork sub-offsets come in their own header).
 * Both fields are fixed-width decimal, so string order is position order; the all-zero offset is
 * the start. Immutable.
 */
public record DsOffset(long seq, long sub) {
    private static final Pattern FORMAT = Pattern.compile("\\d{16}_\\d{16}");
    public static final DsOffset START = new DsOffset(0, 0);

    /** The offset just after entry {@code seq} (the tail when {@code seq} is the head). */
    public static DsOffset after(long seq) {
        return new DsOffset(seq, 0);
    }

    /** First seq a read from this offset returns. */
    public long nextSeq() {
        return seq + 1;
    }

    /** Strict parse of a concrete offset ({@code -1} means the start); {@code now} is the caller's to handle. */
    public static DsOffset parse(String text) {
        if ("-1".equals(text)) {
            return START;
        }
        if (text == null || !FORMAT.matcher(text).matches()) {
            throw StrandException.badRequest("invalid offset '" + text + "': use -1, now or an offset this server returned");
        }
        return new DsOffset(Long.parseLong(text.substring(0, 16)), Long.parseLong(text.substring(17)));
    }

    @Override
    public String toString() {
        return String.format("%016d_%016d", seq, sub);
    }
}

package io.strand.core;

import java.nio.charset.StandardCharsets;

/**
 * One log entry as stored, hot or cold: its dense {@code seq}, server {@code ts} (epoch ms),
 * optional {@code key}, and {@code data}, the entry's JSON value as UTF-8 bytes exactly as it will be served.
 */
public record Entry(long seq, long ts, String key, byte[] data) {

    public String dataText() {
        return new String(data, StandardCharsets.UTF_8);
    }

    /** Bytes this entry adds to a frame or page, used for the 256 KiB frame cap. */
    public int weight() {
        return weight(data.length, key);
    }

    /** {@link #weight()} of an entry with {@code dataLength} bytes of data, for readers that build no {@code Entry}. */
    public static int weight(int dataLength, String key) {
        return dataLength + (key == null ? 0 : key.length()) + 48;
    }
}

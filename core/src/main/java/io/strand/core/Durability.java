package io.strand.core;

import java.util.Locale;

/** When a write is acknowledged (SPEC §3). */
public enum Durability {
    /** On disk in the write-ahead log before the ack, with group commit. Survives power loss. */
    FSYNC,
    /** Acked once in the memory-mapped file. Survives kill -9, not power loss. */
    OS;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Durability parse(String text) {
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("durability must be 'fsync' or 'os', not '" + text + "'");
        }
    }
}

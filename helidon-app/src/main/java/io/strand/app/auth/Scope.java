package io.strand.app.auth;

import java.util.Locale;

/** Token scopes, each including the ones before it: {@code read ⊂ rw ⊂ admin} (SPEC §8). */
public enum Scope {
    READ, RW, ADMIN;

    public boolean includes(Scope other) {
        return compareTo(other) >= 0;
    }

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Scope parse(String text) {
        for (Scope s : values()) {
            if (s.wire().equals(text)) {
                return s;
            }
        }
        throw new IllegalArgumentException("scope must be read, rw or admin, not '" + text + "'");
    }
}

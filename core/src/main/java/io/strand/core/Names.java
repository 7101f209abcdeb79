package io.strand.core;

/**
 * The only gate between user-supplied names and the filesystem or object keys (SPEC §2).
 * A name that passes cannot contain a path separator or a dot-dot segment.
 *
 * <p>The rules, as regular expressions: a workspace is {@code [a-z0-9][a-z0-9_-]{0,62}}, a log or
 * doc {@code [A-Za-z0-9][A-Za-z0-9._-]{0,127}} without {@code ".."}. They are checked by a loop over
 * the characters: every append checks its log name twice, and the regex matchers were about 4 % of
 * the server's Java execution samples (20 of 466) in a JFR profile of {@code strand bench
 * append-concurrent}.
 */
public final class Names {
    /** Workspaces starting with an underscore cannot be named by clients; the server keeps its own there. */
    public static final String SYSTEM_WORKSPACE = "_system";

    private Names() {
    }

    public static boolean isWorkspace(String name) {
        if (name == null || name.isEmpty() || name.length() > 63 || !lowerOrDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!lowerOrDigit(c) && c != '_' && c != '-') {
                return false;
            }
        }
        return true;
    }

    public static boolean isObject(String name) {
        if (name == null || name.isEmpty() || name.length() > 128 || !letterOrDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '.' ? name.charAt(i - 1) == '.' : !letterOrDigit(c) && c != '_' && c != '-') {
                return false;
            }
        }
        return true;
    }

    private static boolean lowerOrDigit(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    }

    private static boolean letterOrDigit(char c) {
        return lowerOrDigit(c) || (c >= 'A' && c <= 'Z');
    }

    public static String workspace(String name) {
        if (!isWorkspace(name) && !SYSTEM_WORKSPACE.equals(name)) {
            throw invalid("workspace", name, "use lowercase letters, digits, '_' or '-', at most 63, starting with a"
                    + " lowercase letter or digit");
        }
        return name;
    }

    /** Validates a log or doc name. */
    public static String object(String kind, String name) {
        if (!isObject(name)) {
            throw invalid(kind, name, "use letters, digits, '.', '_' or '-' (no '/', no '..'), at most 128, starting"
                    + " with a letter or digit");
        }
        return name;
    }

    private static StrandException invalid(String kind, String name, String rule) {
        String shown = name == null ? "null" : name.length() > 80 ? name.substring(0, 80) + "…" : name;
        return new StrandException(ErrorCode.INVALID_NAME, "invalid " + kind + " name '" + shown + "': " + rule);
    }
}

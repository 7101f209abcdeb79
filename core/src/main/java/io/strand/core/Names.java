package io.strand.core;

import java.util.regex.Pattern;

/**
 * The only gate between user-supplied names and the filesystem or object keys (SPEC §2).
 * A name that passes cannot contain a path separator or a dot-dot segment.
 */
public final class Names {
    private static final Pattern WORKSPACE = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
    private static final Pattern OBJECT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    /** Workspaces starting with an underscore cannot be named by clients; the server keeps its own there. */
    public static final String SYSTEM_WORKSPACE = "_system";

    private Names() {
    }

    public static boolean isWorkspace(String name) {
        return name != null && WORKSPACE.matcher(name).matches();
    }

    public static boolean isObject(String name) {
        return name != null && OBJECT.matcher(name).matches() && !name.contains("..");
    }

    public static String workspace(String name) {
        if (!isWorkspace(name) && !SYSTEM_WORKSPACE.equals(name)) {
            throw invalid("workspace", name);
        }
        return name;
    }

    /** Validates a log or doc name. */
    public static String object(String kind, String name) {
        if (!isObject(name)) {
            throw invalid(kind, name);
        }
        return name;
    }

    private static StrandException invalid(String kind, String name) {
        String shown = name == null ? "null" : name.length() > 80 ? name.substring(0, 80) + "…" : name;
        return new StrandException(ErrorCode.INVALID_NAME,
                "invalid " + kind + " name '" + shown + "': use letters, digits, '.', '_' or '-' "
                        + "(no '/', no '..'), starting with a letter or digit");
    }
}

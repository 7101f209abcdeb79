package io.strand.docstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.Arrays;

/**
 * A dot-separated path of object keys inside a doc ({@code a.b.c}). Immutable.
 *
 * <p>Reading a path whose parent objects are missing gives "missing" (Java null); writing creates them.
 * A path that runs through anything but an object (a number, a string, an array, JSON null) is
 * {@code 400 bad_path}, for reads and writes alike.
 */
public final class DocPath {
    /** Longest accepted path text. */
    public static final int MAX_LENGTH = 1024;
    /** Most segments in one path. */
    public static final int MAX_DEPTH = 32;

    private final String text;
    private final String[] keys;

    private DocPath(String text, String[] keys) {
        this.text = text;
        this.keys = keys;
    }

    public static DocPath parse(String text) {
        if (text == null || text.isEmpty()) {
            throw badPath("path must be a non-empty string of dot-separated keys, e.g. \"a.b\"");
        }
        if (text.length() > MAX_LENGTH) {
            throw badPath("path is longer than " + MAX_LENGTH + " characters");
        }
        String[] keys = text.split("\\.", -1);
        if (keys.length > MAX_DEPTH) {
            throw badPath("path '" + shown(text) + "' has more than " + MAX_DEPTH + " keys");
        }
        for (String k : keys) {
            if (k.isEmpty()) {
                throw badPath("path '" + shown(text) + "' has an empty key (leading, trailing or double dot)");
            }
        }
        return new DocPath(text, keys);
    }

    /** The value at this path, or null when it (or a parent) is missing. */
    public JsonNode get(ObjectNode root) {
        ObjectNode parent = parent(root, false);
        return parent == null ? null : parent.get(keys[keys.length - 1]);
    }

    /** Sets the value at this path, creating missing parent objects. */
    public void set(ObjectNode root, JsonNode value) {
        parent(root, true).set(keys[keys.length - 1], value);
    }

    /** Removes the value at this path; a missing path is left as it is. */
    public void remove(ObjectNode root) {
        ObjectNode parent = parent(root, false);
        if (parent != null) {
            parent.remove(keys[keys.length - 1]);
        }
    }

    private ObjectNode parent(ObjectNode root, boolean create) {
        ObjectNode node = root;
        for (int i = 0; i < keys.length - 1; i++) {
            JsonNode child = node.get(keys[i]);
            if (child == null) {
                if (!create) {
                    return null;
                }
                child = node.putObject(keys[i]);
            } else if (!child.isObject()) {
                String through = String.join(".", Arrays.copyOf(keys, i + 1));
                throw badPath("path '" + shown(text) + "' goes through '" + through + "', which is "
                        + kind(child) + ", not an object");
            }
            node = (ObjectNode) child;
        }
        return node;
    }

    private static String kind(JsonNode node) {
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case NUMBER -> "a number";
            case STRING -> "a string";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> "not an object";
        };
    }

    private static String shown(String text) {
        return text.length() > 80 ? text.substring(0, 80) + "…" : text;
    }

    private static StrandException badPath(String message) {
        return new StrandException(ErrorCode.BAD_PATH, message);
    }

    @Override
    public String toString() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DocPath p && p.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }
}

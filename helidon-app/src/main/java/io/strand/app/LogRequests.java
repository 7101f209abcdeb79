package io.strand.app;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import io.strand.core.RequestJson;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** Parses log requests from JSON bodies, frames and query strings, shared by HTTP and WebSocket. */
public final class LogRequests {
    public static final int DEFAULT_LIMIT = 100;
    public static final int MAX_LIMIT = 1000;

    private LogRequests() {
    }

    /** The fields an append body may have (a socket frame's envelope aside). */
    private static final java.util.Set<String> APPEND_FIELDS = java.util.Set.of("data", "entries", "key", "expectedLastSeq",
            "producerId", "producerSeq");
    private static final java.util.Set<String> ENTRY_FIELDS = java.util.Set.of("data", "key");

    /** An HTTP append body: see {@link #append(JsonNode, java.util.Set)}. */
    public static AppendRequest append(JsonNode body) {
        return append(body, java.util.Set.of());
    }

    /**
     * {@code {"data":X}} or {@code {"entries":[{"data":X,"key":K?},…]}} with the optional guards. Any other
     * field but those of {@code envelope} (a socket frame's {@code id}, {@code op}, {@code log}) is refused:
     * a misspelt {@code expectedLastSeq} or {@code producerId} must not drop its check.
     */
    public static AppendRequest append(JsonNode body, java.util.Set<String> envelope) {
        if (body == null || !body.isObject()) {
            throw StrandException.badRequest("append body must be a JSON object");
        }
        onlyFields(body, APPEND_FIELDS, envelope, "an append");
        List<byte[]> data = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        JsonNode entries = body.get("entries");
        if (entries != null) {
            if (body.has("data")) {
                throw StrandException.badRequest("give either 'data' or 'entries', not both");
            }
            if (!entries.isArray()) {
                throw StrandException.badRequest("'entries' must be an array");
            }
            try (Payloads payloads = new Payloads()) {
                for (int i = 0; i < entries.size(); i++) {
                    JsonNode e = entries.get(i);
                    if (!e.isObject() || !e.has("data")) {
                        throw StrandException.badRequest("entries[" + i + "] must be an object with 'data'");
                    }
                    onlyFields(e, ENTRY_FIELDS, java.util.Set.of(), "entries[" + i + "]");
                    data.add(payloads.of(e.get("data")));
                    keys.add(key(e.get("key"), "entries[" + i + "].key"));
                }
            }
        } else if (body.has("data")) {
            try (Payloads payloads = new Payloads()) {
                data.add(payloads.of(body.get("data")));
            }
            keys.add(key(body.get("key"), "key"));
        } else {
            throw StrandException.badRequest("an append needs 'data' or 'entries'");
        }
        Long expected = optionalLong(body, "expectedLastSeq", 0);
        String producerId = null;
        Long producerSeq = null;
        if (body.has("producerId") || body.has("producerSeq")) {
            JsonNode pid = body.get("producerId");
            if (pid == null || !pid.isTextual() || pid.asText().isEmpty() || pid.asText().length() > 256) {
                throw StrandException.badRequest("'producerId' must be a non-empty string of at most 256 characters");
            }
            producerId = wellFormed(pid.asText(), "producerId");
            producerSeq = optionalLong(body, "producerSeq", 0);
            if (producerSeq == null) {
                throw StrandException.badRequest("'producerSeq' is required with 'producerId'");
            }
        }
        return new AppendRequest(data, keys, expected, producerId, producerSeq);
    }

    /**
     * Each entry's stored JSON: the client's bytes when {@link RequestJson} kept them (every native
     * append), else the tree written out by one writer for the request, made only when a tree comes
     * (a txn's parts). Owned by the calling thread, for one request.
     */
    private static final class Payloads implements AutoCloseable {
        private Json.TreeWriter writer;

        byte[] of(JsonNode data) {
            byte[] raw = RequestJson.rawBytes(data);
            if (raw != null) {
                return raw;
            }
            if (writer == null) {
                writer = Json.treeWriter();
            }
            return writer.bytes(data); // a tree just parsed always serializes
        }

        @Override
        public void close() {
            if (writer != null) {
                writer.close();
            }
        }
    }

    private static String key(JsonNode key, String field) {
        if (key == null || key.isNull()) {
            return null;
        }
        if (!key.isTextual() || key.asText().length() > 1024) {
            throw StrandException.badRequest("'" + field + "' must be a string of at most 1024 characters (UTF-16 code units)");
        }
        return wellFormed(key.asText(), field);
    }

    /**
     * {@code text} when it is well-formed Unicode; an unpaired surrogate ({@code "\udfff"} in the JSON) is
     * refused: stored, it could not be written out as UTF-8 again, and every read reaching it failed.
     */
    static String wellFormed(String text, String field) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw StrandException.badRequest("'" + field + "' holds an unpaired UTF-16 surrogate (\\u"
                        + Integer.toHexString(c) + " at index " + i + "): not a Unicode string");
            }
        }
        return text;
    }

    /** Refuses a field of {@code node} that is neither {@code allowed} nor {@code envelope} (ignored here), naming {@code where}. */
    static void onlyFields(JsonNode node, java.util.Set<String> allowed, java.util.Set<String> envelope, String where) {
        for (java.util.Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f) && !envelope.contains(f)) {
                throw StrandException.badRequest(where + " has an unknown field '" + f + "'; allowed: "
                        + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        }
    }

    /** An optional integer field ≥ {@code min}; null when absent. */
    public static Long optionalLong(JsonNode body, String field, long min) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min) {
            throw StrandException.badRequest("'" + field + "' must be an integer ≥ " + min);
        }
        return v.asLong();
    }

    /** Which page to read: exactly one of from / before / fromTime, and a limit. */
    public record ReadSpec(Long from, Long before, Long fromTime, int limit) {
    }

    /** From query parameters or frame fields, looked up by {@code param}. */
    public static ReadSpec read(Function<String, String> param) {
        String from = param.apply("from");
        String before = param.apply("before");
        String fromTime = param.apply("fromTime");
        int given = (from != null ? 1 : 0) + (before != null ? 1 : 0) + (fromTime != null ? 1 : 0);
        if (given > 1) {
            throw StrandException.badRequest("give at most one of 'from', 'before', 'fromTime'");
        }
        int limit = limit(param.apply("limit"));
        if (before != null) {
            long b = "end".equals(before) ? Long.MAX_VALUE : parseLong(before, "before");
            return new ReadSpec(null, b, null, limit);
        }
        if (fromTime != null) {
            return new ReadSpec(null, null, parseTime(fromTime), limit);
        }
        return new ReadSpec(from == null ? 1L : parseLong(from, "from"), null, null, limit);
    }

    /** A page size: {@link #DEFAULT_LIMIT} when absent, else 1..{@link #MAX_LIMIT}. */
    public static int limit(String text) {
        if (text == null) {
            return DEFAULT_LIMIT;
        }
        long limit = parseLong(text, "limit");
        if (limit < 1 || limit > MAX_LIMIT) {
            throw StrandException.badRequest("'limit' must be 1.." + MAX_LIMIT);
        }
        return (int) limit;
    }

    /** A query parameter that must be an integer in {@code min..max}; 400 naming the field otherwise. */
    public static long boundedLong(String text, String field, long min, long max) {
        try {
            long v = Long.parseLong(text.trim());
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // not an integer: refused below like one out of range
        }
        throw StrandException.badRequest("'" + field + "' must be an integer " + min + ".." + max + ", not '" + text + "'");
    }

    static long parseLong(String text, String field) {
        try {
            long v = Long.parseLong(text.trim());
            if (v < 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw StrandException.badRequest("'" + field + "' must be a non-negative integer, not '" + text + "'");
        }
    }

    /** Epoch milliseconds or ISO-8601. */
    static long parseTime(String text) {
        String t = text.trim();
        if (t.chars().allMatch(Character::isDigit) && !t.isEmpty()) {
            return parseLong(t, "fromTime");
        }
        try {
            return Instant.parse(t).toEpochMilli();
        } catch (ArithmeticException e) { // a year past epoch milliseconds' range (±292 million years)
            throw StrandException.badRequest("'fromTime' " + text + " is out of range (epoch milliseconds in 64 bits)");
        } catch (DateTimeParseException e) {
            throw StrandException.badRequest("'fromTime' must be epoch milliseconds or ISO-8601, not '" + text + "'");
        }
    }
}

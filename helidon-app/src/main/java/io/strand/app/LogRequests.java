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

    /** {@code {"data":X}} or {@code {"entries":[{"data":X,"key":K?},…]}} with the optional guards. */
    public static AppendRequest append(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw StrandException.badRequest("append body must be a JSON object");
        }
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
            producerId = pid.asText();
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
            throw StrandException.badRequest("'" + field + "' must be a string of at most 1024 characters");
        }
        return key.asText();
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
        } catch (DateTimeParseException e) {
            throw StrandException.badRequest("'fromTime' must be epoch milliseconds or ISO-8601, not '" + text + "'");
        }
    }
}

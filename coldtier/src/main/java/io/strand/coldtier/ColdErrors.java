package io.strand.coldtier;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds the cold tier's errors, so every one names what failed (store, segment key, seq range). */
final class ColdErrors {
    private ColdErrors() {
    }

    /** Stored bytes failed a check: a bit flip, a truncation, a broken chain. Never retried into silence. */
    static StrandException corrupt(String segmentKey, long firstSeq, long lastSeq, String what) {
        return new StrandException(ErrorCode.CORRUPT,
                "cold segment " + segmentKey + " (seqs " + firstSeq + ".." + lastSeq + ") is corrupt: " + what,
                context(segmentKey, firstSeq, lastSeq));
    }

    static StrandException corrupt(String key, String what) {
        return new StrandException(ErrorCode.CORRUPT, "cold object " + key + " is corrupt: " + what,
                Map.of("segment", key));
    }

    static StrandException unavailable(String store, String op, String key, String why, Throwable cause) {
        Map<String, Object> extras = new LinkedHashMap<>();
        extras.put("store", store);
        if (key != null) {
            extras.put("segment", key);
        }
        return new StrandException(ErrorCode.COLD_UNAVAILABLE,
                "cold store " + store + " could not " + op + (key == null ? "" : " " + key) + ": " + why,
                extras, cause);
    }

    static StrandException notFound(String store, String key) {
        return new StrandException(ErrorCode.NOT_FOUND, "cold object " + key + " not found in " + store,
                Map.of("store", store, "segment", key));
    }

    static Map<String, Object> context(String segmentKey, long firstSeq, long lastSeq) {
        Map<String, Object> extras = new LinkedHashMap<>();
        extras.put("segment", segmentKey);
        extras.put("firstSeq", firstSeq);
        extras.put("lastSeq", lastSeq);
        return extras;
    }

    /** Adds the log's identity to an error raised below it. */
    static StrandException inLog(StrandException e, String ws, String log) {
        if (e.extras().containsKey("ws")) {
            return e;
        }
        return e.with("ws", ws).with("log", log);
    }
}

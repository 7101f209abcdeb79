package io.strand.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A failure with a reason code and the context that explains it (workspace, log, seq, segment…).
 * {@link #extras()} are the named fields SPEC §2 puts inside the error object
 * ({@code head}, {@code version}, {@code value}, {@code current}, {@code index}).
 *
 * <p>Only a server fault (5xx) records its stack trace. A refusal (4xx: a floor or CAS conflict, a bad
 * name, a stale producer seq) is an answer the client gets, often on the hot path of a contended doc
 * (half the attempts of a floor debit end in {@code floor_violation}), and its stack was never read:
 * recording it walked the writer thread's stack once per refusal.
 */
public class StrandException extends RuntimeException {
    private final ErrorCode code;
    private final Map<String, Object> extras;

    public StrandException(ErrorCode code, String message) {
        this(code, message, Map.of(), null);
    }

    public StrandException(ErrorCode code, String message, Map<String, Object> extras) {
        this(code, message, extras, null);
    }

    public StrandException(ErrorCode code, String message, Map<String, Object> extras, Throwable cause) {
        super(message, cause, true, code.httpStatus() >= 500);
        this.code = code;
        this.extras = Collections.unmodifiableMap(new LinkedHashMap<>(extras));
    }

    public ErrorCode code() {
        return code;
    }

    public Map<String, Object> extras() {
        return extras;
    }

    /** A copy with one more context field, e.g. the index of the failing op inside an apply; a fault keeps its stack. */
    public StrandException with(String key, Object value) {
        Map<String, Object> more = new LinkedHashMap<>(extras);
        more.put(key, value);
        StrandException out = new StrandException(code, getMessage(), more, getCause());
        out.setStackTrace(getStackTrace()); // where it failed, not where a field was added (a no-op for refusals)
        return out;
    }

    public static StrandException badRequest(String message) {
        return new StrandException(ErrorCode.BAD_REQUEST, message);
    }

    public static StrandException notFound(String message) {
        return new StrandException(ErrorCode.NOT_FOUND, message);
    }

    public static StrandException tooLarge(String message) {
        return new StrandException(ErrorCode.TOO_LARGE, message);
    }

    /** A request refused because the server is stopping: nothing of it was done, so it may go again (here after a restart, or to another node). */
    public static StrandException stopping() {
        return new StrandException(ErrorCode.UNAVAILABLE, "the server is stopping", Map.of("retryable", true));
    }
}

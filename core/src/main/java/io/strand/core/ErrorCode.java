package io.strand.core;

/**
 * Every reason a request can fail, with the wire code and HTTP status from SPEC §2.
 * Storage modules throw {@link StrandException} with one of these; the HTTP/WebSocket layer maps
 * it to the wire in one place.
 */
public enum ErrorCode {
    BAD_REQUEST("bad_request", 400),
    BAD_FRAME("bad_frame", 400),
    INVALID_NAME("invalid_name", 400),
    BAD_PATH("bad_path", 400),
    NOT_A_NUMBER("not_a_number", 400),
    UNKNOWN_OP("unknown_op", 400),
    UNAUTHORIZED("unauthorized", 401),
    FORBIDDEN("forbidden", 403),
    NOT_FOUND("not_found", 404),
    METHOD_NOT_ALLOWED("method_not_allowed", 405),
    SEQ_MISMATCH("seq_mismatch", 409),
    PRODUCER_SEQ_STALE("producer_seq_stale", 409),
    VERSION_CONFLICT("version_conflict", 409),
    CAS_CONFLICT("cas_conflict", 409),
    FLOOR_VIOLATION("floor_violation", 409),
    CEILING_VIOLATION("ceiling_violation", 409),
    OVERFLOW("overflow", 409),
    TOO_LARGE("too_large", 413),
    TOO_MANY_CONNECTIONS("too_many_connections", 429),
    TOO_MANY_SUBSCRIPTIONS("too_many_subscriptions", 429),
    INTERNAL("internal", 500),
    UNAVAILABLE("unavailable", 503),
    /**
     * The write ran but could not be made durable: it may be present after a restart or not. Retry
     * with {@code producerId}/{@code producerSeq} (appends) or {@code expectVersion} (docs) so a write
     * that did land is not applied twice. Carries {@code "retryable":true}.
     */
    OUTCOME_UNKNOWN("outcome_unknown", 503),
    COLD_UNAVAILABLE("cold_unavailable", 503),
    STORAGE_FULL("storage_full", 507),
    CORRUPT("corrupt", 500);

    private final String wire;
    private final int status;

    ErrorCode(String wire, int status) {
        this.wire = wire;
        this.status = status;
    }

    /** The snake_case code clients see in {@code {"error":{"code":…}}}. */
    public String wire() {
        return wire;
    }

    public int httpStatus() {
        return status;
    }
}

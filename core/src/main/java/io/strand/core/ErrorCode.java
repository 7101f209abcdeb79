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
    PRODUCER_EPOCH_STALE("producer_epoch_stale", 403),
    NOT_FOUND("not_found", 404),
    METHOD_NOT_ALLOWED("method_not_allowed", 405),
    REQUEST_TIMEOUT("request_timeout", 408),
    SEQ_MISMATCH("seq_mismatch", 409),
    PRODUCER_SEQ_STALE("producer_seq_stale", 409),
    /** A txn whose append repeats an applied (producerId, producerSeq): the txn was applied before, nothing changes. */
    DUPLICATE("duplicate", 409),
    VERSION_CONFLICT("version_conflict", 409),
    CAS_CONFLICT("cas_conflict", 409),
    FLOOR_VIOLATION("floor_violation", 409),
    CEILING_VIOLATION("ceiling_violation", 409),
    OVERFLOW("overflow", 409),
    STREAM_CLOSED("stream_closed", 409),
    STREAM_CONFLICT("stream_conflict", 409),
    PRODUCER_SEQ_GAP("producer_seq_gap", 409),
    GONE("gone", 410),
    SUB_IN_USE("sub_in_use", 409),
    TOO_LARGE("too_large", 413),
    URI_TOO_LONG("uri_too_long", 414),
    UNSUPPORTED_ENCODING("unsupported_encoding", 415),
    TOO_MANY_CONNECTIONS("too_many_connections", 429),
    TOO_MANY_SUBSCRIPTIONS("too_many_subscriptions", 429),
    HEADERS_TOO_LARGE("headers_too_large", 431),
    INTERNAL("internal", 500),
    NOT_IMPLEMENTED("not_implemented", 501),
    UNAVAILABLE("unavailable", 503),
    /**
     * The write ran but could not be made durable: it may be present after a restart or not. Retry
     * with {@code producerId}/{@code producerSeq} (appends) or {@code expectVersion} (docs) so a write
     * that did land is not applied twice. Carries {@code "retryable":true}.
     */
    OUTCOME_UNKNOWN("outcome_unknown", 503),
    COLD_UNAVAILABLE("cold_unavailable", 503),
    HTTP_VERSION_NOT_SUPPORTED("http_version_not_supported", 505),
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

    /**
     * The first code with HTTP status {@code status} (so the general code of a status, declared
     * first, wins: 400 is {@code bad_request}); otherwise {@code bad_request} for 4xx and
     * {@code internal} for the rest. For answers whose status was chosen outside Strand (the web
     * server's own refusals).
     */
    public static ErrorCode forStatus(int status) {
        for (ErrorCode c : values()) {
            if (c.status == status) {
                return c;
            }
        }
        return status >= 400 && status < 500 ? BAD_REQUEST : INTERNAL;
    }

    /** The code whose {@link #wire} is {@code wire}; {@code internal} for one this build does not know. */
    public static ErrorCode ofWire(String wire) {
        for (ErrorCode c : values()) {
            if (c.wire.equals(wire)) {
                return c;
            }
        }
        return INTERNAL;
    }
}

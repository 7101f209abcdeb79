package io.strand.tools;

/**
 * A failure the CLI reports on one line and exits 1 for: a server error (its SPEC §2 code and
 * message) or a server it cannot reach. Immutable.
 */
final class CliFailure extends RuntimeException {
    private final String code;
    private final int status;

    CliFailure(String code, int status, String message) {
        super(code + ": " + message);
        this.code = code;
        this.status = status;
    }

    /** The error code ({@code unauthorized}, {@code not_found}, …; {@code unreachable} when there was no answer). */
    String code() {
        return code;
    }

    /** The HTTP status, or 0 when the server did not answer. */
    int status() {
        return status;
    }
}

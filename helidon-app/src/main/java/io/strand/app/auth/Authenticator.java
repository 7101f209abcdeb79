package io.strand.app.auth;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;

/**
 * The one seam where a bearer token becomes a {@link Principal}; every HTTP route and the
 * WebSocket upgrade go through it. Throws {@code 401 unauthorized} for a bad token.
 */
public interface Authenticator {
    Principal authenticate(String token);

    /** True while the token with this id is still valid (open sockets re-check it). */
    default boolean stillValid(Principal principal) {
        return principal.expEpochSeconds() * 1000 > System.currentTimeMillis() || principal.expEpochSeconds() == Long.MAX_VALUE;
    }

    /** Lets everything through as root; for embedded tests that are not about auth. */
    Authenticator OPEN = token -> Principal.ROOT;

    static StrandException unauthorized(String why) {
        return new StrandException(ErrorCode.UNAUTHORIZED, why);
    }
}

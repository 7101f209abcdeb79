package io.strand.app.auth;

import io.strand.app.http.HttpIo;
import io.strand.core.StrandException;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * Authenticates every {@code /v1} request in one place: the bearer token (header, or
 * {@code ?token=} for browsers) becomes a {@link Principal} in the request context; routes then
 * check scope and workspace. Health and metrics stay open.
 */
public final class AuthFilter implements Filter {
    private final Authenticator authenticator;

    public AuthFilter(Authenticator authenticator) {
        this.authenticator = authenticator;
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (!req.path().path().startsWith("/v1/")) {
            chain.proceed();
            return;
        }
        try {
            req.context().register(authenticator.authenticate(token(req)));
        } catch (StrandException e) {
            res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
            HttpIo.error(res, e);
            return;
        }
        chain.proceed();
    }

    static String token(RoutingRequest req) {
        var header = req.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isPresent()) {
            String v = header.get();
            return v.regionMatches(true, 0, "Bearer ", 0, 7) ? v.substring(7).trim() : "";
        }
        return req.query().contains("token") ? req.query().get("token") : null;
    }
}

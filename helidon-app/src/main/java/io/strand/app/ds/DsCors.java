package io.strand.app.ds;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * CORS and browser-security headers on every {@code /ds/} response, errors included, and the
 * answer to preflight {@code OPTIONS} (which browsers send without credentials, so it runs before
 * authentication). Stateless.
 */
public final class DsCors implements Filter {
    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (!req.path().path().startsWith("/ds/")) {
            chain.proceed();
            return;
        }
        res.header(HeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*");
        res.header(HeaderNames.ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, PUT, DELETE, HEAD, OPTIONS");
        res.header(HeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, DsHeaders.ALLOW_HEADERS);
        res.header(HeaderNames.ACCESS_CONTROL_EXPOSE_HEADERS, DsHeaders.EXPOSE_HEADERS);
        res.header(HeaderNames.X_CONTENT_TYPE_OPTIONS, "nosniff");
        res.header(HeaderNames.create("Cross-Origin-Resource-Policy"), "cross-origin");
        if (req.prologue().method() == Method.OPTIONS) {
            res.header(HeaderNames.ACCESS_CONTROL_MAX_AGE, "86400");
            res.status(Status.NO_CONTENT_204).send();
            return;
        }
        chain.proceed();
    }
}

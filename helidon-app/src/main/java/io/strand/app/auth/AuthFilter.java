package io.strand.app.auth;

import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import java.util.Set;

/**
 * Authenticates every {@code /v1} and {@code /ds} (Durable Streams) request in one place: the bearer token becomes a
 * {@link Principal} in the request context, and a path under {@code /v1/ws/{ws}} or {@code /ds/{ws}} needs a valid
 * workspace name and at least read (GET) or rw (other methods) on that workspace; routes then
 * check the exact scope. Health and metrics stay open. Stateless.
 *
 * <p>The token is read by {@link BearerToken}: the {@code Authorization: Bearer} header, or
 * {@code ?token=} only where browsers cannot set headers.
 */
public final class AuthFilter implements Filter {
    private static final Set<Method> READS = Set.of(Method.GET, Method.HEAD, Method.OPTIONS);
    private final Authenticator authenticator;

    public AuthFilter(Authenticator authenticator) {
        this.authenticator = authenticator;
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (!req.path().path().startsWith("/v1/") && !req.path().path().startsWith("/ds/") || wakeCallback(req.path().path())) {
            chain.proceed();
            return;
        }
        try {
            Principal principal = authenticator.authenticate(
                    BearerToken.of(req.headers(), req.query(), req.path().path(), req.prologue().method()));
            req.context().register(principal);
            String ws = workspaceOf(req.path().path());
            if (ws != null) {
                // an invalid name is refused here, before an upgrade could answer a bare 400
                principal.require(Names.workspace(ws), READS.contains(req.prologue().method()) ? Scope.READ : Scope.RW);
            }
        } catch (StrandException e) {
            if (e.code() == ErrorCode.UNAUTHORIZED) {
                res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
            }
            HttpIo.error(res, e);
            return;
        }
        chain.proceed();
    }

    /**
     * The workspace segment of a {@code /v1/ws/{ws}/…} path (null elsewhere, or when empty).
     * Checking it here, before routing, means a token of another workspace gets 403 on every path
     * of this one, even one no route serves, and an invalid name gets 400 {@code invalid_name} on
     * every path, the WebSocket upgrade included; routes then check the exact scope (a log delete
     * needs admin).
     */
    static String workspaceOf(String path) {
        int start = path.startsWith("/v1/ws/") ? 7 : path.startsWith("/ds/") ? 4 : -1;
        if (start < 0) {
            return null;
        }
        int end = path.indexOf('/', start);
        String ws = end < 0 ? path.substring(start) : path.substring(start, end);
        return ws.isEmpty() ? null : ws;
    }

    /**
     * Durable Streams wake callbacks ({@code …/__ds/subscriptions/{id}/callback|ack|release})
     * carry the wake's own token, which the subscription checks, and the JWKS is public.
     */
    static boolean wakeCallback(String path) {
        if (!path.startsWith("/ds/") || !path.contains("/__ds/")) {
            return false;
        }
        return path.endsWith("/__ds/jwks.json") || path.contains("/__ds/subscriptions/")
                && (path.endsWith("/callback") || path.endsWith("/ack") || path.endsWith("/release"));
    }
}

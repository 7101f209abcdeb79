package io.strand.app.auth;

import io.helidon.common.uri.UriQuery;
import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.http.Method;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.Optional;

/**
 * The one place a request's bearer token is read, for the HTTP filter ({@link AuthFilter}) and the
 * WebSocket upgrade ({@code ws.SocketEndpoint}) alike. Stateless.
 *
 * <p>The {@code Authorization: Bearer <token>} header wins; a header of another scheme gives the
 * empty token, refused as missing. Without the header, {@code ?token=} is read only where browsers
 * cannot set headers ({@link #acceptsQueryToken}: the WebSocket upgrade and the Durable Streams
 * paths under {@code /ds/}); anywhere else a query token is refused with 401, since URLs end up in
 * access logs, proxies and browser history.
 */
public final class BearerToken {
    private static final String SCHEME = "Bearer ";
    private static final String QUERY_PARAM = "token";

    private BearerToken() {
    }

    /**
     * The token of a request to {@code path} with {@code method}: null when it carries none,
     * "" when its Authorization header is not a bearer one.
     *
     * @throws StrandException {@code UNAUTHORIZED} for a {@code ?token=} where the header is required
     */
    public static String of(Headers headers, UriQuery query, String path, Method method) {
        Optional<String> header = headers.first(HeaderNames.AUTHORIZATION);
        if (header.isPresent()) {
            String v = header.get();
            return v.regionMatches(true, 0, SCHEME, 0, SCHEME.length()) ? v.substring(SCHEME.length()).trim() : "";
        }
        if (!query.contains(QUERY_PARAM)) {
            return null;
        }
        if (!acceptsQueryToken(path, method)) {
            throw new StrandException(ErrorCode.UNAUTHORIZED, "?token= is accepted only on the WebSocket upgrade and /ds/ paths: "
                    + "send the token in the Authorization: Bearer header");
        }
        return query.get(QUERY_PARAM);
    }

    /**
     * Where {@code ?token=} may stand in for the header: a GET of the WebSocket endpoint
     * {@code /v1/ws/{ws}/socket} (browsers' WebSocket cannot set headers) and the Durable Streams
     * paths under {@code /ds/} (nor can EventSource).
     */
    static boolean acceptsQueryToken(String path, Method method) {
        if (path.startsWith("/ds/")) {
            return true;
        }
        if (method != Method.GET || !path.startsWith("/v1/ws/") || !path.endsWith("/socket")) {
            return false;
        }
        int end = path.indexOf('/', 7);
        return end > 7 && end == path.length() - "/socket".length();
    }
}

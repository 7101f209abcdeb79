package io.strand.app.ws;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Method;
import io.helidon.http.NotFoundException;
import io.helidon.http.RequestException;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;
import io.helidon.http.WritableHeaders;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.spi.Http1RoutedUpgrade;
import io.helidon.webserver.http1.spi.Http1RoutedUpgrader;
import io.helidon.webserver.http1.spi.Http1UpgradeResult;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.websocket.WsConfig;
import io.helidon.webserver.websocket.WsRoute;
import io.helidon.webserver.websocket.WsRouting;
import io.helidon.webserver.websocket.WsUpgrader;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsUpgradeException;
import java.util.Objects;
import java.util.Optional;

/**
 * The WebSocket upgrade as Helidon 4.5's routed upgrader does it — upgrade requests pass the HTTP
 * filters first; the same route lookup, GET / key / version / origin checks, {@code onHttpUpgrade},
 * and a 400 on a {@code WsUpgradeException} — except that the upgraded connection is a
 * {@link StrictWsConnection}. Helidon's key hash and origin check are inherited. Immutable after
 * construction, so thread-safe.
 */
final class StrictWsUpgrader extends WsUpgrader implements Http1RoutedUpgrader {
    private static final HeaderName WS_ACCEPT = HeaderNames.create("Sec-WebSocket-Accept");
    private final int maxFrameLength;

    StrictWsUpgrader(WsConfig config) {
        super(config);
        this.maxFrameLength = config.maxFrameLength();
        // Helidon 4.5's check compares with a shared static Header whose value list is built on first use,
        // unguarded: two upgrades at once right after start could meet it half-built, and one failed with a
        // ConcurrentModificationException (a 500; seen once in SubscriptionIT on CI). Built here, once, before
        // any connection thread exists.
        isWebSocketUpgrade(WritableHeaders.create()
                .add(HeaderValues.create(HeaderNames.UPGRADE, "websocket"))
                .add(HeaderValues.create(HeaderNames.CONNECTION, "Upgrade")));
    }

    @Override
    public Optional<Http1RoutedUpgrade> routedUpgrade(ConnectionContext ctx, HttpPrologue prologue, WritableHeaders<?> headers) {
        return route(ctx, prologue, headers).map(route -> (response, filtered) -> {
            if (!isWebSocketUpgrade(filtered)) {
                return Http1UpgradeResult.notApplicable();
            }
            String key = checkedKey(prologue, filtered);
            WsListener listener = route.listener();
            Optional<Headers> extra;
            try {
                extra = Objects.requireNonNull(listener.onHttpUpgrade(prologue, filtered));
            } catch (WsUpgradeException e) {
                response.send(Status.BAD_REQUEST_400);
                return Http1UpgradeResult.responded();
            }
            ServerResponseHeaders handshake = ServerResponseHeaders.create();
            extra.ifPresent(handshake::from);
            handshake.set(HeaderValues.create(HeaderNames.CONNECTION, "Upgrade"));
            handshake.set(HeaderValues.create(HeaderNames.UPGRADE, "websocket"));
            handshake.set(HeaderValues.create(WS_ACCEPT, hash(ctx, key)));
            response.sendSwitchingProtocols(handshake);
            return Http1UpgradeResult.upgraded(new StrictWsConnection(ctx, prologue, listener, maxFrameLength));
        });
    }

    /** Only routed upgrades happen here ({@link #routedUpgrade}); Helidon's HTTP/1 connection prefers them. */
    @Override
    public ServerConnection upgrade(ConnectionContext ctx, HttpPrologue prologue, WritableHeaders<?> headers) {
        throw new UnsupportedOperationException("Strand's WebSocket upgrade is routed: see routedUpgrade");
    }

    private Optional<WsRoute> route(ConnectionContext ctx, HttpPrologue prologue, Headers headers) {
        WsRoute route;
        try {
            // findRouteIfPresent is package-private in Helidon 4.5; findRoute throws when no route matches
            route = ctx.router().routing(WsRouting.class, WsRouting.empty()).findRoute(prologue);
        } catch (NotFoundException notAWebSocketPath) {
            return Optional.empty(); // not ours: the request goes on as plain HTTP
        }
        checkedKey(prologue, headers);
        return Optional.of(route);
    }

    private String checkedKey(HttpPrologue prologue, Headers headers) {
        if (prologue.method() != Method.GET) {
            throw badRequest("WebSocket upgrade must use GET");
        }
        if (!headers.contains(WS_KEY)) {
            throw badRequest("Missing Sec-WebSocket-Key header");
        }
        String version = headers.contains(WS_VERSION) ? headers.get(WS_VERSION).get() : SUPPORTED_VERSION;
        if (!SUPPORTED_VERSION.equals(version)) {
            throw RequestException.builder()
                    .type(DirectHandler.EventType.BAD_REQUEST)
                    .message("Unsupported WebSocket Version")
                    .header(SUPPORTED_VERSION_HEADER)
                    .build();
        }
        if (headers.contains(HeaderNames.ORIGIN)) {
            validateOrigin(headers, headers.get(HeaderNames.ORIGIN).get());
        }
        return headers.get(WS_KEY).get();
    }

    private static RequestException badRequest(String message) {
        return RequestException.builder().type(DirectHandler.EventType.BAD_REQUEST).message(message).build();
    }
}

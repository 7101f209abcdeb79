package io.strand.app.http;

import io.helidon.common.uri.UriPath;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Method;
import io.helidon.webserver.http.HttpRoute;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Thread-safe (a copy-on-write list, filled while the routing is built, then only read): the routes
 * the HTTP services register, so that a request whose path exists under other methods is answered
 * {@code 405 method_not_allowed} with an {@code Allow} header rather than 404 (Helidon's routing
 * only tells "no route matched").
 */
public final class AllowedMethods {
    private static final List<Method> METHODS = List.of(Method.GET, Method.HEAD, Method.POST, Method.PUT, Method.DELETE,
            Method.PATCH, Method.OPTIONS);

    private record Registered(String prefix, HttpRoute route) {
    }

    private final List<Registered> routes = new CopyOnWriteArrayList<>();

    /** {@code service} as registered under {@code prefix}, each of its routes recorded here. */
    public HttpService recording(String prefix, HttpService service) {
        return rules -> service.routing(new Recorder(prefix, rules));
    }

    /**
     * The 405 for a request no route matched, when routes match its path under other methods
     * (setting {@code Allow} on {@code res}); empty when its path has no route at all.
     */
    public Optional<StrandException> methodNotAllowed(ServerRequest req, ServerResponse res) {
        String path = req.path().path();
        HttpPrologue asked = req.prologue();
        TreeSet<String> allowed = new TreeSet<>();
        for (Registered r : routes) {
            if (!path.startsWith(r.prefix() + "/")) {
                continue;
            }
            UriPath rest = UriPath.create(path.substring(r.prefix().length()));
            for (Method m : METHODS) {
                HttpPrologue probe = HttpPrologue.create(asked.rawProtocol(), asked.protocol(), asked.protocolVersion(), m, rest,
                        asked.query(), asked.fragment());
                if (r.route().accepts(probe).accepted()) {
                    allowed.add(m.text());
                }
            }
        }
        if (allowed.isEmpty()) {
            return Optional.empty();
        }
        String allow = String.join(", ", allowed);
        res.header("Allow", allow);
        return Optional.of(new StrandException(ErrorCode.METHOD_NOT_ALLOWED, asked.method().text() + " is not allowed on "
                + path + "; allowed: " + allow));
    }

    /**
     * The recorded routes that none of {@code requests} (method, path) reaches, described by their
     * {@code toString}: what a route listing such as the OpenAPI document misses.
     */
    public List<String> unreached(List<java.util.Map.Entry<Method, String>> requests) {
        List<String> missed = new java.util.ArrayList<>();
        for (Registered r : routes) {
            boolean reached = false;
            for (var q : requests) {
                if (q.getValue().startsWith(r.prefix() + "/")) {
                    UriPath rest = UriPath.create(q.getValue().substring(r.prefix().length()));
                    reached |= r.route().accepts(HttpPrologue.create("HTTP/1.1", "HTTP", "1.1", q.getKey(), rest,
                            io.helidon.common.uri.UriQuery.empty(), io.helidon.common.uri.UriFragment.empty()))
                            .accepted();
                }
            }
            if (!reached) {
                missed.add(r.prefix() + " " + r.route());
            }
        }
        return missed;
    }

    /** Records each route a service registers, then registers it as asked. */
    private final class Recorder implements HttpRules {
        private final String prefix;
        private final HttpRules rules;

        Recorder(String prefix, HttpRules rules) {
            this.prefix = prefix;
            this.rules = rules;
        }

        @Override
        public HttpRules register(HttpService... services) {
            for (HttpService s : services) {
                rules.register(recording(prefix, s));
            }
            return this;
        }

        @Override
        public HttpRules register(String pathPattern, HttpService... services) {
            for (HttpService s : services) {
                rules.register(pathPattern, recording(prefix + pathPattern, s));
            }
            return this;
        }

        @Override
        public HttpRules route(HttpRoute route) {
            routes.add(new Registered(prefix, route));
            rules.route(route);
            return this;
        }
    }
}

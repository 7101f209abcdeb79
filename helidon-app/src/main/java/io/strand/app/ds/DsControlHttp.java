package io.strand.app.ds;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.auth.Scope;
import io.strand.app.http.HttpIo;
import io.strand.core.Json;
import io.strand.core.Names;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * Stateless (the subscriptions are thread-safe); runs on request threads: routes the reserved
 * control APIs {@code /ds/{ws}/{root…}/__ds/…} (subscriptions and their JWKS) to
 * {@link DsSubscriptions}, answering their failures in the protocol's own error shape. Streams a
 * subscription names are relative to {@code root}.
 */
final class DsControlHttp {
    private final DsSubscriptions subscriptions;
    /** (ws, root) → the paths of the workspace's streams under root, relative to it. */
    private final BiFunction<String, String, List<String>> underRoot;
    private final DsRequests requests;
    /**
     * Runs before a control request reads streams: on a cluster node the read barrier, so the tails a
     * subscription starts from include every append acknowledged before it (subscriptions live in the
     * memory of the node that took them, as the reference server keeps them, and are woken by the
     * appends that node's replica applies).
     */
    private final Consumer<String> beforeRead;

    DsControlHttp(DsSubscriptions subscriptions, BiFunction<String, String, List<String>> underRoot, DsRequests requests,
                  Consumer<String> beforeRead) {
        this.subscriptions = subscriptions;
        this.underRoot = underRoot;
        this.requests = requests;
        this.beforeRead = beforeRead;
    }

    /** Serves a {@code __ds} path; false for any other path (the caller serves it as a stream). */
    boolean handle(ServerRequest req, ServerResponse res) {
        String raw = req.path().rawPath();
        String rest = raw.substring("/ds/".length());
        int slash = rest.indexOf('/');
        if (slash <= 0) {
            return false;
        }
        String[] segs = rest.substring(slash + 1).split("/", -1);
        int at = Arrays.asList(segs).indexOf("__ds");
        if (at < 0) {
            return false;
        }
        String ws = Names.workspace(DsTarget.decode(rest.substring(0, slash)));
        String rawRoot = String.join("/", Arrays.copyOfRange(segs, 0, at));
        String root = at == 0 ? "" : DsTarget.streamPath(rawRoot);
        List<String> tail = Arrays.asList(Arrays.copyOfRange(segs, at + 1, segs.length));
        Method m = req.prologue().method();
        String base = "http://" + req.headers().first(HeaderNames.HOST).orElse("localhost") + "/ds/" + rest.substring(0, slash)
                + (rawRoot.isEmpty() ? "" : "/" + rawRoot);
        try {
            beforeRead.accept(ws);
            if (tail.equals(List.of("jwks.json")) && m == Method.GET) {
                res.header(HeaderNames.CONTENT_TYPE, "application/jwk-set+json");
                res.header(HeaderNames.CACHE_CONTROL, "public, max-age=300");
                res.status(Status.OK_200).send(Json.bytes(subscriptions.jwks()));
                return true;
            }
            if (tail.size() < 2 || !tail.getFirst().equals("subscriptions") || tail.get(1).isEmpty()) {
                throw new DsFailure(404, "SUBSCRIPTION_NOT_FOUND", "Durable Streams control route not found");
            }
            String id = DsTarget.decode(tail.get(1));
            List<String> action = tail.subList(2, tail.size());
            if (action.isEmpty() && m == Method.PUT) {
                HttpIo.require(req, ws, Scope.RW);
                var created = subscriptions.createOrConfirm(ws, root, id, requests.jsonBody(req), base, underRoot);
                HttpIo.send(res, created.getKey() ? 201 : 200, Json.bytes(created.getValue()));
            } else if (action.isEmpty() && m == Method.GET) {
                HttpIo.require(req, ws, Scope.READ);
                HttpIo.send(res, 200, Json.bytes(subscriptions.get(ws, root, id)));
            } else if (action.isEmpty() && m == Method.DELETE) {
                HttpIo.require(req, ws, Scope.RW);
                subscriptions.delete(ws, root, id);
                res.status(Status.NO_CONTENT_204).send();
            } else if (action.equals(List.of("streams")) && m == Method.POST) {
                HttpIo.require(req, ws, Scope.RW);
                subscriptions.addStreams(ws, root, id, requests.jsonBody(req));
                res.status(Status.NO_CONTENT_204).send();
            } else if (action.size() > 1 && action.getFirst().equals("streams") && m == Method.DELETE) {
                HttpIo.require(req, ws, Scope.RW);
                subscriptions.removeStream(ws, root, id, DsTarget.decode(String.join("/", action.subList(1, action.size()))));
                res.status(Status.NO_CONTENT_204).send();
            } else if (action.equals(List.of("claim")) && m == Method.POST) {
                HttpIo.require(req, ws, Scope.RW);
                HttpIo.send(res, 200, Json.bytes(subscriptions.claim(ws, root, id, requests.jsonBody(req))));
            } else if (action.equals(List.of("callback")) && m == Method.POST) {
                HttpIo.send(res, 200, Json.bytes(subscriptions.callback(ws, root, id, DsRequests.wakeToken(req),
                        requests.jsonBody(req))));
            } else if (action.equals(List.of("ack")) && m == Method.POST) {
                HttpIo.send(res, 200, Json.bytes(subscriptions.ack(ws, root, id, DsRequests.wakeToken(req), requests.jsonBody(req))));
            } else if (action.equals(List.of("release")) && m == Method.POST) {
                subscriptions.release(ws, root, id, DsRequests.wakeToken(req), requests.jsonBody(req));
                res.status(Status.NO_CONTENT_204).send();
            } else {
                throw new DsFailure(404, "SUBSCRIPTION_NOT_FOUND", "Durable Streams control route not found");
            }
        } catch (DsFailure f) {
            HttpIo.send(res, f.status, Json.bytes(f.body()));
        }
        return true;
    }
}

package io.strand.app.http;

import static io.strand.app.http.HttpIo.path;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.audit.AuditLog;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.Map;

/**
 * Token administration (SPEC §8) under {@code /v1/admin/tokens}: mint for a workspace you administer
 * (only root mints {@code *}), revoke a token of a workspace you administer. Each action runs
 * through {@link AuditLog#perform}: refused with nothing changed when its audit entry cannot be written. Stateless; {@code tokens} is null when the server runs without auth.
 */
public final class AdminHttp implements HttpService {
    /** Default lifetime of a minted token when the request names none. */
    public static final long DEFAULT_TTL_SECONDS = 3600;

    private final JwtAuthenticator tokens;
    private final AuditLog audit;
    private final HttpIo io;

    public AdminHttp(JwtAuthenticator tokens, AuditLog audit, HttpIo io) {
        this.tokens = tokens;
        this.audit = audit;
        this.io = io;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/admin/tokens", this::mint)
                .delete("/admin/tokens/{jti}", this::revoke);
    }

    private void mint(ServerRequest req, ServerResponse res) {
        Principal caller = caller(req);
        requireAdminScope(caller);
        JsonNode body = io.json(req);
        String ws = text(body, "ws");
        Scope scope;
        try {
            scope = Scope.parse(text(body, "scope"));
        } catch (IllegalArgumentException e) {
            throw StrandException.badRequest(e.getMessage());
        }
        JsonNode ttlNode = body.get("ttlSeconds");
        if (ttlNode != null && !ttlNode.isNull() && (!ttlNode.canConvertToExactIntegral() || !ttlNode.canConvertToLong())) {
            throw StrandException.badRequest("'ttlSeconds' must be an integer");
        }
        long ttl = ttlNode == null || ttlNode.isNull() ? DEFAULT_TTL_SECONDS : ttlNode.asLong();
        if (ttl < 1 || ttl > JwtAuthenticator.ROOT_TTL_SECONDS) { // refused before it is an action to audit
            throw StrandException.badRequest("ttlSeconds must be 1.." + JwtAuthenticator.ROOT_TTL_SECONDS + ", not " + ttl);
        }
        if ("*".equals(ws)) {
            if (!caller.isRoot()) {
                throw new StrandException(ErrorCode.FORBIDDEN, "only the root token may mint tokens for every workspace");
            }
        } else if (!Names.isWorkspace(ws)) {
            throw new StrandException(ErrorCode.INVALID_NAME, "a token is for a workspace or '*', not '" + shorten(ws) + "'");
        } else {
            caller.require(ws, Scope.ADMIN);
        }
        JwtAuthenticator tokens = tokens();
        String jti = JwtAuthenticator.newJti();
        JwtAuthenticator.Minted minted = audit.perform(caller, "token.mint", "token:" + jti,
                Map.of("ws", ws, "scope", scope.wire(), "ttlSeconds", ttl),
                () -> tokens.mint(ws, scope, ttl, jti), m -> Map.of("exp", m.exp()));
        var reply = Json.MAPPER.createObjectNode();
        reply.put("token", minted.token());
        reply.put("jti", minted.jti());
        reply.put("exp", minted.exp());
        HttpIo.ok(res, reply);
    }

    private void revoke(ServerRequest req, ServerResponse res) {
        Principal caller = caller(req);
        requireAdminScope(caller);
        String jti = path(req, "jti");
        JwtAuthenticator.TokenInfo token = tokens().token(jti)
                .orElseThrow(() -> StrandException.notFound("no token with jti '" + shorten(jti) + "'"));
        caller.require(token.ws(), Scope.ADMIN);
        audit.perform(caller, "token.revoke", "token:" + jti, Map.of("ws", token.ws()),
                () -> tokens().revoke(jti), revoked -> Map.of());
        HttpIo.ok(res, Map.of("revoked", true, "jti", jti));
    }

    private static Principal caller(ServerRequest req) {
        return req.context().get(Principal.class)
                .orElseThrow(() -> new StrandException(ErrorCode.UNAUTHORIZED, "missing bearer token"));
    }

    /** Token admin needs an admin token before anything else is looked at. */
    private static void requireAdminScope(Principal caller) {
        if (!caller.scope().includes(Scope.ADMIN)) {
            throw new StrandException(ErrorCode.FORBIDDEN, "token administration needs scope 'admin'; the token has '"
                    + caller.scope().wire() + "'");
        }
    }

    private JwtAuthenticator tokens() {
        if (tokens == null) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "this server runs with --auth false: tokens are not in use");
        }
        return tokens;
    }

    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || !v.isTextual()) {
            throw StrandException.badRequest("'" + field + "' is required and must be a string");
        }
        return v.asText();
    }

    private static String shorten(String s) {
        return s.length() > 64 ? s.substring(0, 64) + "…" : s;
    }
}

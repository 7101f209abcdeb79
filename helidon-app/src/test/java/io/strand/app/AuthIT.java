package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JWSAlgorithm;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.testing.Http;
import io.strand.app.testing.RawSocket;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import io.strand.app.testing.WsClient;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §8 against the real server with signed tokens: every kind of token × every kind of request,
 * over HTTP and WebSocket, with the exact status and error code; revocation and expiry reaching
 * open sockets; the audit log and the reserved {@code _system} workspace.
 */
@Timeout(180)
class AuthIT {
    @TempDir
    static Path dir;
    static JwtAuthenticator auth;
    static TestServer server;
    static Http root;
    /** Token kind → token (null for "no token"), in matrix order. */
    static final Map<String, String> TOKENS = new LinkedHashMap<>();
    static final Set<String> REFUSED = Set.of("none", "malformed", "tampered", "algNone", "hs512", "expired", "revoked");
    static final AtomicInteger LOGS = new AtomicInteger();

    enum Outcome { OK, UNAUTHORIZED, FORBIDDEN }

    @BeforeAll
    static void start() throws Exception {
        auth = JwtAuthenticator.open(dir);
        server = TestServer.start(dir, Map.of(), auth);
        String rootToken = Tokens.root(dir);
        root = server.http.withToken(rootToken);
        byte[] secret = Files.readAllBytes(dir.resolve("secret"));
        JsonNode rw = mint(root, "acme", "rw", 3600);
        JsonNode revoked = mint(root, "acme", "rw", 3600);
        assertEquals(200, root.delete("/v1/admin/tokens/" + revoked.get("jti").asText()).status());
        byte[] longKey = new byte[64];
        System.arraycopy(secret, 0, longKey, 0, 32);
        System.arraycopy(secret, 0, longKey, 32, 32);
        String rwToken = rw.get("token").asText();
        String rwJti = rw.get("jti").asText();
        TOKENS.put("none", null);
        TOKENS.put("malformed", "not.a-token");
        TOKENS.put("tampered", Tokens.tampered(rwToken));
        TOKENS.put("algNone", Tokens.algNone(rwToken));
        TOKENS.put("hs512", Tokens.sign(longKey, JWSAlgorithm.HS512, "acme", "rw", rwJti, rw.get("exp").asLong()));
        TOKENS.put("expired", Tokens.sign(secret, JWSAlgorithm.HS256, "acme", "rw", rwJti, System.currentTimeMillis() / 1000 - 60));
        TOKENS.put("revoked", revoked.get("token").asText());
        TOKENS.put("read", mint(root, "acme", "read", 3600).get("token").asText());
        TOKENS.put("rw", rwToken);
        TOKENS.put("adminOfOther", mint(root, "other", "admin", 3600).get("token").asText());
        TOKENS.put("admin", mint(root, "acme", "admin", 3600).get("token").asText());
        TOKENS.put("root", rootToken);
    }

    @AfterAll
    static void stop() {
        server.close();
        auth.close();
    }

    static JsonNode mint(Http as, String ws, String scope, long ttl) {
        Http.Reply r = as.post("/v1/admin/tokens", "{\"ws\":\"" + ws + "\",\"scope\":\"" + scope + "\",\"ttlSeconds\":" + ttl + "}");
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    /** What a token kind may do: read ⊂ rw ⊂ admin, on workspace acme only; root does everything. */
    static Outcome expected(String kind, String op) {
        if (REFUSED.contains(kind)) {
            return Outcome.UNAUTHORIZED;
        }
        return switch (kind) {
            case "read" -> Set.of("read", "subscribe").contains(op) ? Outcome.OK : Outcome.FORBIDDEN;
            case "rw" -> Set.of("read", "subscribe", "append", "docWrite").contains(op) ? Outcome.OK : Outcome.FORBIDDEN;
            case "adminOfOther" -> Outcome.FORBIDDEN;
            case "admin", "root" -> Outcome.OK;
            default -> throw new IllegalArgumentException(kind);
        };
    }

    private static void assertOutcome(Outcome want, int status, String errorCode, String what) {
        switch (want) {
            case UNAUTHORIZED -> {
                assertEquals(401, status, what);
                assertEquals("unauthorized", errorCode, what);
            }
            case FORBIDDEN -> {
                assertEquals(403, status, what);
                assertEquals("forbidden", errorCode, what);
            }
            case OK -> assertTrue(status == 200, what + ": status " + status + " " + errorCode);
        }
    }

    @TestFactory
    Stream<DynamicTest> httpMatrixShouldAnswerEachTokenKindWithTheExactStatus() {
        List<DynamicTest> tests = new ArrayList<>();
        for (var token : TOKENS.entrySet()) {
            Http http = server.http.withToken(token.getValue());
            String kind = token.getKey();
            tests.add(dynamicTest(kind + " × read", () -> {
                Http.Reply r = http.get("/v1/ws/acme/logs/m/entries?from=1");
                assertOutcome(expected(kind, "read"), r.status(), code(r), kind + " read");
            }));
            tests.add(dynamicTest(kind + " × append", () -> {
                Http.Reply r = http.post("/v1/ws/acme/logs/m/entries", "{\"data\":{\"by\":\"" + kind + "\"}}");
                assertOutcome(expected(kind, "append"), r.status(), code(r), kind + " append");
            }));
            tests.add(dynamicTest(kind + " × docWrite", () -> {
                Http.Reply r = http.put("/v1/ws/acme/docs/d-" + kind, "{\"value\":{\"by\":\"" + kind + "\"}}");
                assertOutcome(expected(kind, "docWrite"), r.status(), code(r), kind + " doc write");
            }));
            tests.add(dynamicTest(kind + " × delete", () -> {
                String log = "del-" + LOGS.incrementAndGet();
                assertEquals(200, root.post("/v1/ws/acme/logs/" + log + "/entries", "{\"data\":1}").status());
                Http.Reply r = http.delete("/v1/ws/acme/logs/" + log);
                assertOutcome(expected(kind, "delete"), r.status(), code(r), kind + " delete");
            }));
            tests.add(dynamicTest(kind + " × mint", () -> {
                Http.Reply r = http.post("/v1/admin/tokens", "{\"ws\":\"acme\",\"scope\":\"read\",\"ttlSeconds\":60}");
                assertOutcome(expected(kind, "mint"), r.status(), code(r), kind + " mint");
                if (r.status() == 200) {
                    assertEquals(200, server.http.withToken(r.json().get("token").asText()).get("/v1/ws/acme/logs").status());
                }
            }));
        }
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> socketMatrixShouldAnswerEachTokenKindWithTheExactStatus() {
        List<DynamicTest> tests = new ArrayList<>();
        for (var token : TOKENS.entrySet()) {
            String kind = token.getKey();
            String value = token.getValue();
            tests.add(dynamicTest(kind + " × socket", () -> {
                Http.Reply upgrade = RawSocket.upgrade(server.wsUrl("acme"), value == null ? null : "Bearer " + value);
                if (REFUSED.contains(kind) || kind.equals("adminOfOther")) {
                    assertOutcome(expected(kind, "read"), upgrade.status(), code(upgrade), kind + " upgrade");
                    // the same answer with the token in the query, as browsers send it
                    String url = server.wsUrl("acme") + (value == null ? "" : "?token=" + URLEncoder.encode(value, StandardCharsets.UTF_8));
                    Http.Reply viaQuery = RawSocket.upgrade(url, null);
                    assertOutcome(expected(kind, "read"), viaQuery.status(), code(viaQuery), kind + " upgrade via ?token=");
                    return;
                }
                assertEquals(101, upgrade.status(), kind + " upgrade");
                try (WsClient c = WsClient.connect(server.wsUrl("acme"), value)) {
                    assertSocketOp(c, kind, "read", "read", "\"log\":\"m\",\"from\":1");
                    assertSocketOp(c, kind, "append", "append", "\"log\":\"m\",\"data\":{\"by\":\"" + kind + "\"}");
                    assertSocketOp(c, kind, "subscribe", "subscribe", "\"log\":\"m\",\"from\":\"latest\"");
                    assertSocketOp(c, kind, "doc.put", "docWrite", "\"doc\":\"ws-" + kind + "\",\"value\":{\"a\":1}");
                }
            }));
        }
        return tests.stream();
    }

    private static void assertSocketOp(WsClient c, String kind, String op, String matrixOp, String fields) {
        long id = c.request(op, fields);
        JsonNode reply = c.reply(id, 10_000);
        assertOutcome(expected(kind, matrixOp), statusOf(reply), reply.path("error").path("code").asText(), kind + " " + op + " " + reply);
    }

    private static int statusOf(JsonNode reply) {
        if (reply.path("ok").asBoolean()) {
            return 200;
        }
        return switch (reply.path("error").path("code").asText()) {
            case "unauthorized" -> 401;
            case "forbidden" -> 403;
            default -> 400;
        };
    }

    private static String code(Http.Reply r) {
        return r.body().isEmpty() ? "" : r.errorCode();
    }

    @Test
    void revokingATokenShouldCloseItsOpenSubscriptionWithin5Seconds() throws Exception {
        JsonNode t = mint(root, "acme", "rw", 3600);
        String token = t.get("token").asText();
        try (WsClient c = WsClient.connect(server.wsUrl("acme"), token)) {
            long id = c.request("subscribe", "\"log\":\"revoke-me\",\"from\":1");
            assertTrue(c.reply(id, 10_000).get("ok").asBoolean());
            long started = System.nanoTime();
            assertEquals(200, root.delete("/v1/admin/tokens/" + t.get("jti").asText()).status());
            assertEquals(4001, c.closed.get(5, TimeUnit.SECONDS));
            System.out.println("revoked socket closed after " + (System.nanoTime() - started) / 1_000_000 + " ms");
        }
        Http.Reply after = server.http.withToken(token).get("/v1/ws/acme/logs/revoke-me/entries");
        assertEquals(401, after.status());
        assertEquals("unauthorized", after.errorCode());
        assertEquals(401, RawSocket.upgrade(server.wsUrl("acme"), "Bearer " + token).status());
    }

    @Test
    void anExpiringTokenShouldCloseItsSocketSoonAfterExpiry() throws Exception {
        JsonNode t = mint(root, "acme", "read", 1);
        try (WsClient c = WsClient.connect(server.wsUrl("acme"), t.get("token").asText())) {
            long id = c.request("subscribe", "\"log\":\"expire-me\",\"from\":\"latest\"");
            JsonNode reply = c.reply(id, 10_000);
            assertEquals(4001, c.closed.get(10, TimeUnit.SECONDS), "closed after expiry; subscribe reply was " + reply);
        }
    }

    @Test
    void theSocketPathShouldRefuseABadNameAndAnswerPlainGetsWithAnErrorBody() throws Exception {
        Http.Reply badName = RawSocket.upgrade(server.wsUrl("Bad_Name"), "Bearer " + TOKENS.get("root"));
        assertEquals(400, badName.status());
        assertEquals("invalid_name", badName.errorCode(), "the refused upgrade carries the error body");
        assertEquals("invalid_name", root.get("/v1/ws/Bad_Name/socket").errorCode());
        Http.Reply plain = root.get("/v1/ws/acme/socket");
        assertEquals(400, plain.status());
        assertEquals("bad_request", plain.errorCode());
        assertEquals(403, server.http.withToken(TOKENS.get("adminOfOther")).get("/v1/ws/acme/socket").status());
    }

    @Test
    void aQueryTokenShouldBeRefusedOutsideTheSocketUpgradeSoItNeverLandsInUrls() throws Exception {
        String rw = URLEncoder.encode(TOKENS.get("rw"), StandardCharsets.UTF_8);
        String rootToken = URLEncoder.encode(TOKENS.get("root"), StandardCharsets.UTF_8);
        Http anonymous = server.http;
        List<Http.Reply> refused = List.of(
                anonymous.get("/v1/ws/acme/logs/m/entries?from=1&token=" + rw),
                anonymous.post("/v1/ws/acme/logs/query-token/entries?token=" + rw, "{\"data\":1}"),
                anonymous.put("/v1/ws/acme/docs/query-token?token=" + rw, "{\"value\":1}"),
                anonymous.post("/v1/admin/tokens?token=" + rootToken, "{\"ws\":\"acme\",\"scope\":\"read\",\"ttlSeconds\":60}"),
                anonymous.delete("/v1/ws/acme/logs/m?token=" + rootToken));
        for (Http.Reply r : refused) {
            assertEquals(401, r.status(), r.body());
            assertEquals("unauthorized", r.errorCode());
            assertTrue(r.json().path("error").path("message").asText().contains("Authorization"), r.body());
        }
        assertEquals("not_found", root.get("/v1/ws/acme/logs/query-token").errorCode(), "the refused append changed nothing");
        assertEquals("not_found", root.get("/v1/ws/acme/docs/query-token").errorCode(), "the refused put changed nothing");
        // the WebSocket endpoint still takes it (browsers cannot set headers there): a plain GET passes auth
        assertEquals("bad_request", anonymous.get("/v1/ws/acme/socket?token=" + rw).errorCode());
        assertEquals(101, RawSocket.upgrade(server.wsUrl("acme") + "?token=" + rw, null).status());
        try (WsClient c = WsClient.connect(server.wsUrl("acme") + "?token=" + rw, null)) {
            assertTrue(c.reply(c.request("ping", ""), 10_000).path("ok").asBoolean());
        }
    }

    @Test
    void revokeShouldNeedAdminOfTheTokensWorkspace() {
        JsonNode t = mint(root, "acme", "read", 3600);
        String jti = t.get("jti").asText();
        Http other = server.http.withToken(TOKENS.get("adminOfOther"));
        Http rw = server.http.withToken(TOKENS.get("rw"));
        assertEquals(403, other.delete("/v1/admin/tokens/" + jti).status());
        assertEquals(403, rw.delete("/v1/admin/tokens/" + jti).status());
        Http.Reply missing = root.delete("/v1/admin/tokens/noSuchToken");
        assertEquals(404, missing.status());
        assertEquals("not_found", missing.errorCode());
        Http admin = server.http.withToken(TOKENS.get("admin"));
        assertEquals(200, admin.delete("/v1/admin/tokens/" + jti).status());
        // only root mints or revokes a token for every workspace
        Http.Reply star = admin.post("/v1/admin/tokens", "{\"ws\":\"*\",\"scope\":\"read\"}");
        assertEquals(403, star.status());
        JsonNode readAll = mint(root, "*", "read", 3600);
        assertEquals(403, admin.delete("/v1/admin/tokens/" + readAll.get("jti").asText()).status());
        Http.Reply bad = root.post("/v1/admin/tokens", "{\"ws\":\"acme\",\"scope\":\"owner\"}");
        assertEquals(400, bad.status());
        assertEquals("invalid_name", root.post("/v1/admin/tokens", "{\"ws\":\"_system\",\"scope\":\"read\"}").errorCode());
    }

    @Test
    void theSystemWorkspaceShouldBeReadableByRootOnlyAndWritableByNobody() throws Exception {
        Http readAll = server.http.withToken(mint(root, "*", "read", 3600).get("token").asText());
        Http admin = server.http.withToken(TOKENS.get("admin"));
        assertEquals(403, readAll.get("/v1/ws/_system/logs/audit/entries").status(), "a * read token is not root");
        assertEquals(403, admin.get("/v1/ws/_system/logs/audit/entries").status());
        assertEquals(403, root.post("/v1/ws/_system/logs/audit/entries", "{\"data\":\"forged\"}").status());
        assertEquals(403, root.delete("/v1/ws/_system/logs/audit").status());
        assertEquals(403, root.put("/v1/ws/_system/docs/x", "{\"value\":{}}").status());
        assertEquals(200, root.get("/v1/ws/_system/logs/audit/entries").status());
        assertEquals(403, RawSocket.upgrade(server.wsUrl("_system"), "Bearer " + TOKENS.get("admin")).status());
        try (WsClient c = WsClient.connect(server.wsUrl("_system"), TOKENS.get("root"))) {
            long id = c.request("append", "\"log\":\"audit\",\"data\":\"forged\"");
            assertEquals("forbidden", c.reply(id, 10_000).path("error").path("code").asText());
            id = c.request("read", "\"log\":\"audit\",\"from\":1");
            assertTrue(c.reply(id, 10_000).get("ok").asBoolean());
        }
    }

    @Test
    void adminActionsShouldBeInTheAuditLogWithTheirActor() {
        JsonNode t = mint(root, "acme", "rw", 3600);
        Http admin = server.http.withToken(TOKENS.get("admin"));
        assertEquals(200, admin.delete("/v1/admin/tokens/" + t.get("jti").asText()).status());
        assertEquals(200, root.post("/v1/ws/acme/logs/audited/entries", "{\"data\":1}").status());
        assertEquals(200, admin.delete("/v1/ws/acme/logs/audited").status());
        String adminJti = Tokens.jti(TOKENS.get("admin"));
        String rootJti = Tokens.jti(TOKENS.get("root"));
        List<JsonNode> entries = new ArrayList<>();
        long from = 1;
        while (true) {
            JsonNode page = root.get("/v1/ws/_system/logs/audit/entries?from=" + from + "&limit=1000").json();
            page.get("entries").forEach(e -> entries.add(e.get("data")));
            if (page.get("entries").isEmpty()) {
                break;
            }
            from = page.get("next").asLong();
        }
        assertTrue(entries.stream().anyMatch(d -> d.get("action").asText().equals("token.mint")
                && d.get("target").asText().equals("token:" + t.get("jti").asText())
                && d.get("actor").get("jti").asText().equals(rootJti)
                && d.get("ws").asText().equals("acme") && d.get("scope").asText().equals("rw")), entries.toString());
        assertTrue(entries.stream().anyMatch(d -> d.get("action").asText().equals("token.revoke")
                && d.get("target").asText().equals("token:" + t.get("jti").asText())
                && d.get("actor").get("jti").asText().equals(adminJti)
                && d.get("actor").get("ws").asText().equals("acme")), entries.toString());
        assertTrue(entries.stream().anyMatch(d -> d.get("action").asText().equals("log.delete")
                && d.get("target").asText().equals("log:acme/audited")
                && d.get("actor").get("jti").asText().equals(adminJti)), entries.toString());
        assertFalse(entries.stream().anyMatch(d -> d.toString().contains(t.get("token").asText())), "no token in the audit log");
    }
}

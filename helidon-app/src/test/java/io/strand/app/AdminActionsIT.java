package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.auth.Scope;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Admin actions and their audit entries (issue 10: an error answer must not have changed
 * anything). The audit log is made unwritable by putting a plain file where its directory would
 * be ({@code DATA/logs/_system/audit}): every admin action must then answer an error and leave
 * everything as it was; once the file is gone, the same actions succeed with an intent entry
 * before and an outcome entry after.
 */
@Timeout(120)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the broken-audit test needs the audit log not yet created
class AdminActionsIT {
    @TempDir
    static Path dir;
    static JwtAuthenticator auth;
    static TestServer server;
    static Http root;

    @BeforeAll
    static void start() throws IOException {
        auth = JwtAuthenticator.open(dir);
        server = TestServer.start(dir, Map.of(), auth);
        root = server.http.withToken(Tokens.root(dir));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** Runs {@code body} with the audit log unwritable (before its first entry, so it is not open yet). */
    private static void withAuditBroken(Runnable body) throws IOException {
        Path auditDir = server.server.logs().config().logsDir().resolve("_system").resolve("audit");
        assertFalse(Files.exists(auditDir), "the audit log must not exist yet: " + auditDir);
        Files.createDirectories(auditDir.getParent());
        Files.writeString(auditDir, "not a log directory");
        try {
            body.run();
        } finally {
            Files.delete(auditDir);
        }
    }

    private static long journalLines() throws IOException {
        return Files.readAllLines(dir.resolve("tokens.journal")).size();
    }

    @Test
    @Order(1)
    void adminActionsShouldChangeNothingWhenTheirAuditEntryCannotBeWritten() throws IOException {
        // Set up what the actions act on before the audit log breaks: a log with entries, a token to revoke.
        assertEquals(200, root.post("/v1/ws/acme/logs/kept/entries", "{\"entries\":[{\"data\":1},{\"data\":2}]}").status());
        JwtAuthenticator.Minted victim = auth.mint("acme", Scope.READ, 3600);
        long linesBefore = journalLines();

        withAuditBroken(() -> {
            Http.Reply mint = root.post("/v1/admin/tokens", "{\"ws\":\"acme\",\"scope\":\"rw\"}");
            assertEquals(503, mint.status(), mint.body());
            assertTrue(mint.body().contains("audit"), "the error names the audit log: " + mint.body());
            Http.Reply revoke = root.delete("/v1/admin/tokens/" + victim.jti());
            assertEquals(503, revoke.status(), revoke.body());
            Http.Reply delete = root.delete("/v1/ws/acme/logs/kept");
            assertEquals(503, delete.status(), delete.body());
            Http.Reply roll = root.post("/v1/ws/acme/logs/kept/cold/roll", "");
            assertEquals(503, roll.status(), roll.body());
        });

        try {
            assertEquals(linesBefore, journalLines(), "no token was minted or revoked");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        assertFalse(auth.token(victim.jti()).orElseThrow().revoked(), "the token is not revoked");
        JsonNode info = root.get("/v1/ws/acme/logs/kept").json();
        assertEquals(2, info.get("head").asLong(), "the log is not deleted: " + info);
        JsonNode cold = root.get("/v1/ws/acme/logs/kept/cold").json();
        assertEquals(0, cold.get("segments").asInt(), "nothing was rolled: " + cold);

        // The audit log writable again: each action succeeds, with its intent before and its outcome after.
        Http.Reply mint = root.post("/v1/admin/tokens", "{\"ws\":\"acme\",\"scope\":\"rw\"}");
        assertEquals(200, mint.status(), mint.body());
        String jti = mint.json().get("jti").asText();
        assertEquals(200, root.delete("/v1/admin/tokens/" + victim.jti()).status());
        assertTrue(auth.token(victim.jti()).orElseThrow().revoked());
        assertEquals(200, root.post("/v1/ws/acme/logs/kept/cold/roll", "").status());
        assertEquals(200, root.delete("/v1/ws/acme/logs/kept").status());
        assertEquals(404, root.get("/v1/ws/acme/logs/kept").status());

        List<JsonNode> entries = auditEntries();
        assertPair(entries, "token.mint", "token:" + jti);
        assertPair(entries, "token.revoke", "token:" + victim.jti());
        assertPair(entries, "cold.roll", "log:acme/kept");
        assertPair(entries, "log.delete", "log:acme/kept");
        JsonNode minted = entries.stream().filter(e -> e.get("action").asText().equals("token.mint")
                && e.get("phase").asText().equals("done")).findFirst().orElseThrow();
        assertEquals(mint.json().get("exp").asLong(), minted.get("exp").asLong(), minted.toString());
        assertEquals("acme", minted.get("ws").asText());
    }

    @Test
    void aFailedActionShouldBeAuditedAsFailed() {
        Http.Reply r = root.delete("/v1/ws/acme/logs/never-was");
        assertEquals(404, r.status(), r.body());
        List<JsonNode> entries = auditEntries();
        JsonNode intent = find(entries, "log.delete", "log:acme/never-was", "intent");
        JsonNode failed = find(entries, "log.delete", "log:acme/never-was", "failed");
        assertEquals(intent.get("seq").asLong(), failed.get("intent").asLong(), failed.toString());
        assertEquals("not_found", failed.get("error").get("code").asText(), failed.toString());
    }

    @Test
    void orphanDeletionShouldRefuseABadMinimumAge() {
        assertEquals(200, root.post("/v1/ws/acme/logs/orph/entries", "{\"data\":1}").status());
        for (String bad : List.of("-1", "abc", "1.5", "", "99999999999999999999")) {
            Http.Reply r = root.delete("/v1/ws/acme/logs/orph/cold/orphans?minAgeSeconds=" + bad);
            assertEquals(400, r.status(), bad + ": " + r.body());
            assertEquals("bad_request", r.errorCode(), r.body());
            assertTrue(r.json().get("error").get("message").asText().contains("minAgeSeconds"), r.body());
            assertFalse(r.body().contains("For input string"), r.body());
        }
        Http.Reply ok = root.delete("/v1/ws/acme/logs/orph/cold/orphans?minAgeSeconds=0");
        assertEquals(200, ok.status(), ok.body());
    }

    @Test
    void aWrongMethodOnAnExistingPathShouldBe405WithAllow() throws Exception {
        record Case(String method, String path, int status, String allow) {
        }
        String token = Tokens.root(dir);
        var client = java.net.http.HttpClient.newHttpClient();
        for (Case c : List.of(new Case("PUT", "/v1/ws/acme/logs/x", 405, "DELETE, GET"),
                new Case("PATCH", "/v1/ws/acme/logs/x/entries", 405, "GET, POST"),
                new Case("GET", "/v1/admin/tokens", 405, "POST"),
                new Case("POST", "/v1/admin/tokens/abc", 405, "DELETE"),
                new Case("GET", "/v1/ws/acme/logs/x/cold/roll", 405, "POST"),
                new Case("PUT", "/v1/no/such/path", 404, null))) {
            var r = client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(server.url() + c.path()))
                    .header("Authorization", "Bearer " + token)
                    .method(c.method(), java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            String what = c.method() + " " + c.path() + ": " + r.body();
            assertEquals(c.status(), r.statusCode(), what);
            assertEquals(c.status() == 405 ? "method_not_allowed" : "not_found",
                    io.strand.core.Json.parse(r.body()).path("error").path("code").asText(), what);
            assertEquals(java.util.Optional.ofNullable(c.allow()), r.headers().firstValue("Allow"), what);
        }
    }

    /** Every entry of the audit log, each with its seq added as {@code seq}. */
    private static List<JsonNode> auditEntries() {
        List<JsonNode> entries = new ArrayList<>();
        long from = 1;
        while (true) {
            JsonNode page = root.get("/v1/ws/_system/logs/audit/entries?from=" + from + "&limit=1000").json();
            page.get("entries").forEach(e -> entries.add(((com.fasterxml.jackson.databind.node.ObjectNode) e.get("data"))
                    .put("seq", e.get("seq").asLong())));
            if (page.get("entries").isEmpty()) {
                return entries;
            }
            from = page.get("next").asLong();
        }
    }

    private static JsonNode find(List<JsonNode> entries, String action, String target, String phase) {
        return entries.stream().filter(e -> e.get("action").asText().equals(action) && e.get("target").asText().equals(target)
                && e.path("phase").asText().equals(phase)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + phase + " entry for " + action + " " + target + " in " + entries));
    }

    /** An intent entry, then a done entry that names it. */
    private static void assertPair(List<JsonNode> entries, String action, String target) {
        JsonNode intent = find(entries, action, target, "intent");
        JsonNode done = find(entries, action, target, "done");
        assertTrue(done.get("seq").asLong() > intent.get("seq").asLong(), done.toString());
        assertEquals(intent.get("seq").asLong(), done.get("intent").asLong(), done.toString());
        assertEquals(intent.get("actor"), done.get("actor"));
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /v1/ws}: root sees every workspace with its counts and bytes; a workspace token sees its own only. */
@Timeout(120)
class WorkspacesIT {
    @TempDir
    static Path dir;
    static JwtAuthenticator auth;
    static TestServer server;
    static Http root;

    @BeforeAll
    static void start() throws Exception {
        auth = JwtAuthenticator.open(dir);
        server = TestServer.start(dir, Map.of(), auth);
        root = server.http.withToken(Tokens.root(dir));
        assertEquals(200, root.post("/v1/ws/acme/logs/chat/entries", "{\"entries\":[{\"data\":\"hello\"},{\"data\":{\"n\":1}}]}").status());
        assertEquals(200, root.post("/v1/ws/acme/logs/audit/entries", "{\"data\":1}").status());
        assertEquals(200, root.put("/v1/ws/acme/docs/cfg", "{\"value\":{\"a\":1}}").status());
        assertEquals(200, root.put("/v1/ws/docsonly/docs/d1", "{\"value\":{\"b\":[1,2,3]}}").status());
        assertEquals(200, root.put("/v1/ws/docsonly/docs/d2", "{\"value\":{}}").status());
        assertEquals(200, root.post("/v1/ws/logsonly/logs/l/entries", "{\"data\":\"x\"}").status());
    }

    @AfterAll
    static void stop() {
        server.close();
        auth.close();
    }

    @Test
    void rootSeesEveryWorkspaceWithCountsAndBytes() {
        Http.Reply r = root.get("/v1/ws");
        assertEquals(200, r.status(), r.body());
        JsonNode list = r.json().get("workspaces");
        List<String> names = new ArrayList<>();
        list.forEach(w -> names.add(w.get("ws").asText()));
        names.remove("_system"); // the audit log, once a token was minted (the other test may run first)
        assertEquals(List.of("acme", "docsonly", "logsonly"), names, r.body());
        JsonNode acme = list.get(names.indexOf("acme") + (list.get(0).get("ws").asText().equals("_system") ? 1 : 0));
        assertEquals(2, acme.get("logs").asInt(), r.body());
        assertEquals(3, acme.get("entries").asInt(), r.body());
        assertEquals("\"hello\"".length() + "{\"n\":1}".length() + 1, acme.get("logBytes").asLong(), r.body());
        assertEquals(1, acme.get("docs").asInt(), r.body());
        assertEquals("{\"a\":1}".length(), acme.get("docBytes").asLong(), r.body());
        JsonNode docsOnly = list.get(list.size() - 2);
        assertEquals(0, docsOnly.get("logs").asInt(), r.body());
        assertEquals(2, docsOnly.get("docs").asInt(), r.body());
        assertEquals("{\"b\":[1,2,3]}".length() + "{}".length(), docsOnly.get("docBytes").asLong(), r.body());
    }

    @Test
    void workspaceTokenSeesItsOwnOnly() {
        for (String scope : List.of("read", "admin")) {
            Http as = server.http.withToken(AuthIT.mint(root, "logsonly", scope, 600).get("token").asText());
            Http.Reply r = as.get("/v1/ws");
            assertEquals(200, r.status(), r.body());
            JsonNode list = r.json().get("workspaces");
            assertEquals(1, list.size(), r.body());
            assertEquals("logsonly", list.get(0).get("ws").asText());
            assertEquals(1, list.get(0).get("logs").asInt());
            assertEquals(0, list.get(0).get("docs").asInt());
        }
        Http empty = server.http.withToken(AuthIT.mint(root, "fresh", "read", 600).get("token").asText());
        Http.Reply r = empty.get("/v1/ws");
        assertEquals(200, r.status(), r.body());
        assertEquals("fresh", r.json().get("workspaces").get(0).get("ws").asText(), "its own workspace even while empty");
        assertEquals(0, r.json().get("workspaces").get(0).get("logs").asInt());
    }

    @Test
    void refusedWithoutAValidToken() {
        assertEquals(401, server.http.get("/v1/ws").status());
        assertEquals(401, server.http.withToken("not.a-token").get("/v1/ws").status());
        Http.Reply wrongMethod = root.post("/v1/ws", "{}");
        assertEquals(405, wrongMethod.status(), wrongMethod.body());
    }
}

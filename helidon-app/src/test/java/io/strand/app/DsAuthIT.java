package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Durable Streams routes obey workspace scopes like every route; preflights need no token. */
@Timeout(120)
class DsAuthIT {
    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    @TempDir
    static Path dir;
    static JwtAuthenticator auth;
    static TestServer server;
    static String root;
    static String read;
    static String rw;
    static String other;

    @BeforeAll
    static void start() throws Exception {
        auth = JwtAuthenticator.open(dir);
        server = TestServer.start(dir, Map.of(), auth);
        root = Tokens.root(dir);
        Http admin = server.http.withToken(root);
        read = mint(admin, "acme", "read");
        rw = mint(admin, "acme", "rw");
        other = mint(admin, "other", "admin");
        assertEquals(201, send("PUT", "/ds/acme/s", root, "seed").statusCode());
    }

    @AfterAll
    static void stop() {
        server.close();
        auth.close();
    }

    static String mint(Http as, String ws, String scope) {
        Http.Reply r = as.post("/v1/admin/tokens", "{\"ws\":\"" + ws + "\",\"scope\":\"" + scope + "\",\"ttlSeconds\":3600}");
        JsonNode j = r.json();
        return j.get("token").asText();
    }

    static HttpResponse<String> send(String method, String path, String token, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "text/plain");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void noTokenShouldGet401WithCorsHeadersOnEveryMethod() {
        for (String m : new String[] {"GET", "HEAD", "POST", "PUT", "DELETE"}) {
            HttpResponse<String> r = send(m, "/ds/acme/s" + (m.equals("GET") ? "?offset=-1" : ""), null, m.equals("POST") ? "x" : null);
            assertEquals(401, r.statusCode(), m);
            assertEquals("*", r.headers().firstValue("Access-Control-Allow-Origin").orElse(null), m);
        }
    }

    @Test
    void readTokenShouldReadButNotWriteAndOtherWorkspacesShouldBeForbidden() {
        assertEquals(200, send("GET", "/ds/acme/s?offset=-1", read, null).statusCode());
        HttpResponse<String> append = send("POST", "/ds/acme/s", read, "x");
        assertEquals(403, append.statusCode(), append.body());
        assertEquals(403, send("PUT", "/ds/acme/t", read, null).statusCode());
        assertEquals(403, send("GET", "/ds/acme/s?offset=-1", other, null).statusCode());
        assertEquals(204, send("POST", "/ds/acme/s", rw, "x").statusCode());
        assertEquals("seedx", send("GET", "/ds/acme/s?offset=-1", rw, null).body());
    }

    @Test
    void queryTokenShouldBeAcceptedOnDsPaths() {
        assertEquals(200, send("GET", "/ds/acme/s?offset=-1&token=" + read, null, null).statusCode());
    }

    @Test
    void preflightShouldNeedNoToken() {
        HttpResponse<String> r = send("OPTIONS", "/ds/acme/s", null, null);
        assertEquals(204, r.statusCode());
        assertEquals("*", r.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
    }

    @Test
    void subscriptionRoutesShouldNeedAStrandTokenWhileWakeCallbacksCarryTheirOwn() {
        String sub = "/ds/acme/root/__ds/subscriptions/s1";
        String body = "{\"type\":\"pull-wake\",\"pattern\":\"events/*\",\"wake_stream\":\"wake\"}";
        assertEquals(401, send("PUT", sub, null, body).statusCode());
        assertEquals(403, send("PUT", sub, read, body).statusCode());
        assertEquals(201, send("PUT", sub, rw, body).statusCode());
        assertEquals(401, send("GET", sub, null, null).statusCode());
        HttpResponse<String> forged = send("POST", sub + "/ack", "forged.token", "{\"wake_id\":\"w\",\"generation\":1}");
        assertEquals(401, forged.statusCode());
        assertEquals("TOKEN_INVALID", io.strand.core.Json.parse(forged.body()).path("error").path("code").asText(),
                "the subscription, not Strand's filter, refused the wake token");
        assertEquals(401, send("DELETE", sub + "/streams/x/callback", null, null).statusCode(),
                "a path that only ends like a callback still needs a Strand token");
        assertEquals(200, send("GET", "/ds/acme/root/__ds/jwks.json", null, null).statusCode());
    }
}

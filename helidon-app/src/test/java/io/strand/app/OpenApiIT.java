package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.helidon.http.Method;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /openapi} against the real server: served without a token, valid OpenAPI 3.1, naming every
 * route the server registers, and every route it names answers (no "no route" 404, no 405).
 */
@Timeout(120)
class OpenApiIT {
    /** Path parameters of the document → values that exist once {@link #start} ran. */
    static final Map<String, String> PARAMS = Map.of("ws", "acme", "log", "l", "doc", "d", "jti", "no-such-jti",
            "path", "s1", "id", "sub1", "stream", "s1");
    /** Routes registered outside the recorded /v1 services (StrandServer.routing, the observe feature). */
    static final List<Map.Entry<String, String>> UNRECORDED = List.of(Map.entry("GET", "/v1/ws/{ws}/socket"),
            Map.entry("GET", "/ds/{ws}/{path}"), Map.entry("PUT", "/ds/{ws}/{path}"), Map.entry("POST", "/ds/{ws}/{path}"),
            Map.entry("DELETE", "/ds/{ws}/{path}"), Map.entry("HEAD", "/ds/{ws}/{path}"),
            Map.entry("OPTIONS", "/ds/{ws}/{path}"), Map.entry("GET", "/observe/health"),
            Map.entry("GET", "/observe/metrics"), Map.entry("GET", "/openapi"), Map.entry("GET", "/console"));
    static final Set<String> METHODS = Set.of("get", "head", "put", "post", "delete", "patch", "options");
    @TempDir
    static Path dir;
    static TestServer server;
    static String token;
    static JsonNode doc;
    static final HttpClient CLIENT = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.start(dir, Map.of(), JwtAuthenticator.open(dir));
        token = Tokens.root(dir);
        HttpResponse<String> served = send("GET", "/openapi", null, null);
        assertEquals(200, served.statusCode(), served.body());
        assertTrue(served.headers().firstValue("content-type").orElse("").startsWith("application/yaml"));
        doc = new ObjectMapper(new YAMLFactory()).readTree(served.body());
        assertEquals(200, send("POST", "/v1/ws/acme/logs/l/entries", token, "{\"data\":1}").statusCode());
        assertEquals(200, send("PUT", "/v1/ws/acme/docs/d", token, "{\"value\":{\"n\":1}}").statusCode());
        assertEquals(201, send("PUT", "/ds/acme/s1", token, "").statusCode());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void documentShouldBeOpenApi31WithAnOperationPerRoute() {
        assertEquals("3.1.0", doc.path("openapi").asText());
        assertTrue(doc.path("info").has("title") && doc.path("info").has("version"));
        assertTrue(documented().size() >= 30, "operations: " + documented().size());
        for (Map.Entry<String, String> op : documented()) {
            JsonNode operation = doc.path("paths").path(op.getValue()).path(op.getKey().toLowerCase(Locale.ROOT));
            assertTrue(operation.has("responses"), op + " has no responses");
        }
    }

    @Test
    void everyRegisteredRouteShouldBeDocumented() {
        List<Map.Entry<Method, String>> requests = new ArrayList<>();
        for (Map.Entry<String, String> op : documented()) {
            requests.add(Map.entry(Method.create(op.getKey()), concrete(op.getValue())));
        }
        List<String> missing = server.server.routes.unreached(requests);
        assertTrue(missing.isEmpty(), "registered /v1 routes missing from openapi.yaml: " + missing);
        for (Map.Entry<String, String> route : UNRECORDED) {
            assertTrue(documented().contains(route), route + " is served but not in openapi.yaml");
        }
    }

    @Test
    void everyDocumentedRouteShouldAnswer() throws Exception {
        List<String> unanswered = new ArrayList<>();
        for (Map.Entry<String, String> op : documented()) {
            String method = op.getKey();
            String body = method.equals("POST") || method.equals("PUT") ? "{}" : null;
            if (op.getValue().equals("/ds/{ws}/{path}") && method.equals("POST")) {
                body = "more";
            }
            HttpResponse<String> reply = send(method, concrete(op.getValue()), token, body);
            boolean unrouted = reply.statusCode() == 404 && (reply.body().contains("no route for")
                    || reply.body().contains("control route not found"));
            if (reply.statusCode() == 405 || unrouted || reply.statusCode() >= 500) {
                unanswered.add(method + " " + op.getValue() + " → " + reply.statusCode() + " " + reply.body());
            }
        }
        assertTrue(unanswered.isEmpty(), "documented routes that do not answer: " + unanswered);
    }

    @Test
    void undocumentedPathShouldStillBeA404() throws Exception {
        HttpResponse<String> reply = send("GET", "/v1/ws/acme/nothing-here", token, null);
        assertEquals(404, reply.statusCode(), reply.body());
        assertFalse(documented().contains(Map.entry("GET", "/v1/ws/{ws}/nothing-here")));
    }

    /** (METHOD, path template) of every operation in the document. */
    static List<Map.Entry<String, String>> documented() {
        List<Map.Entry<String, String>> ops = new ArrayList<>();
        doc.path("paths").properties().forEach(p -> p.getValue().properties().forEach(m -> {
            if (METHODS.contains(m.getKey())) {
                ops.add(Map.entry(m.getKey().toUpperCase(Locale.ROOT), p.getKey()));
            }
        }));
        return ops;
    }

    static String concrete(String template) {
        Matcher m = Pattern.compile("\\{([^}]+)}").matcher(template);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String value = PARAMS.get(m.group(1));
            assertTrue(value != null, "no test value for {" + m.group(1) + "} in " + template);
            m.appendReplacement(sb, value);
        }
        return m.appendTail(sb).toString();
    }

    static HttpResponse<String> send(String method, String path, String bearer, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        if (body != null) {
            b.header("Content-Type", path.startsWith("/ds/") && !path.contains("__ds") ? "text/plain" : "application/json");
        }
        if (method.equals("OPTIONS")) {
            b.header("Origin", "http://example.com").header("Access-Control-Request-Method", "POST");
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}

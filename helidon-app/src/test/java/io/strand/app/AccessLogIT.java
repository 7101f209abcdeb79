package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import io.strand.core.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The access log against the real server: one line per request, tokens never in it (neither a
 * {@code ?token=} value nor the {@code Authorization} header), and each line a JSON object under
 * {@code --log-format json}.
 */
@Timeout(120)
class AccessLogIT {
    @TempDir
    Path dir;

    @Test
    void accessLogShouldNeverPrintTokens() throws Exception {
        Logger accessLog = Logger.getLogger("io.helidon.webserver.AccessLog");
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                lines.add(ServerLogging.parse("json", "info").formatter().format(record));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        accessLog.addHandler(capture);
        try (TestServer server = TestServer.start(dir, Map.of(), JwtAuthenticator.open(dir))) {
            String token = Tokens.root(dir);
            HttpClient client = HttpClient.newHttpClient();
            List<HttpRequest> requests = List.of(
                    HttpRequest.newBuilder(URI.create(server.url() + "/v1/ws/acme/logs")).header("Authorization", "Bearer " + token).build(),
                    HttpRequest.newBuilder(URI.create(server.url() + "/ds/acme/s1?offset=-1&token=" + token)).build(),
                    HttpRequest.newBuilder(URI.create(server.url() + "/ds/acme/s1?TOKEN=" + token + "&offset=-1")).build(),
                    HttpRequest.newBuilder(URI.create(server.url() + "/v1/ws/acme/logs?token=" + token)).build());
            for (HttpRequest r : requests) {
                client.send(r, HttpResponse.BodyHandlers.discarding());
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (lines.size() < requests.size() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(requests.size(), lines.size(), "one access-log line per request: " + lines);
            String secret = token.substring(token.lastIndexOf('.') + 1); // the signature alone is enough to miss nothing
            for (String line : lines) {
                assertFalse(line.contains(secret), "a token in the access log: " + line);
                JsonNode json = Json.MAPPER.readTree(line);
                assertTrue(json.get("logger").asText().startsWith("io.helidon.webserver.AccessLog"), line);
            }
            assertTrue(lines.get(1).contains("/ds/acme/s1?offset=-1&token=REDACTED HTTP/1.1"), lines.get(1));
            assertTrue(lines.get(2).contains("TOKEN=REDACTED&offset=-1"), lines.get(2));
            assertTrue(lines.get(0).contains("\\\"GET /v1/ws/acme/logs HTTP/1.1\\\" 200"), lines.get(0));
        } finally {
            accessLog.removeHandler(capture);
        }
    }
}

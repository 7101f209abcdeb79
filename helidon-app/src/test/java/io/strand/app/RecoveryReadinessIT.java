package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.Authenticator;
import io.strand.core.FreePorts;
import io.strand.core.Json;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readiness while the stores open and the write-ahead log replays: the port answers from the start
 * (what {@code strand serve} runs, {@link StrandServer#recovering}), readiness is DOWN with a
 * {@code recovery} check and writes get {@code 503 unavailable} having changed nothing, liveness is
 * UP; once started, the server on the same port is ready and the write goes through.
 */
@Timeout(120)
class RecoveryReadinessIT {
    static final HttpClient CLIENT = HttpClient.newHttpClient();
    @TempDir
    Path dir;

    @Test
    void readinessShouldBeDownUntilRecoveredThenUp() throws Exception {
        int port = FreePorts.next();
        ServerConfig config = ServerConfig.from(Map.of("STRAND_PORT", String.valueOf(port), "STRAND_DATA", dir.toString(),
                "STRAND_DURABILITY", "os", "STRAND_DOC_CAPACITY", "20000"));
        CompletableFuture<StrandServer> opening = CompletableFuture.supplyAsync(() -> StrandServer.recovering(config, Authenticator.OPEN));
        String base = "http://127.0.0.1:" + port;
        HttpResponse<String> ready = null;
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (ready == null && System.nanoTime() < deadline) { // refused until the listener binds
            try {
                ready = get(base + "/observe/health/ready");
            } catch (ConnectException e) {
                Thread.onSpinWait();
            }
        }
        assertTrue(ready != null, "the port never answered");
        StrandServer server = null;
        try {
            assertEquals(503, ready.statusCode(), ready.body());
            JsonNode body = Json.MAPPER.readTree(ready.body());
            assertEquals("DOWN", body.get("status").asText());
            assertEquals("recovery", body.get("checks").get(0).get("name").asText(), ready.body());
            assertEquals(200, get(base + "/observe/health/live").statusCode());
            HttpResponse<String> write = CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/v1/ws/acme/logs/early/entries"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"data\":1}")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(503, write.statusCode(), write.body());
            assertEquals("unavailable", Json.MAPPER.readTree(write.body()).get("error").get("code").asText());
            assertEquals("1", write.headers().firstValue("Retry-After").orElse(""));

            server = opening.get().start();
            assertEquals(port, server.port());
            HttpResponse<String> up = get(base + "/observe/health/ready");
            assertEquals(200, up.statusCode(), up.body());
            JsonNode recovery = null;
            for (JsonNode check : Json.MAPPER.readTree(up.body()).get("checks")) {
                recovery = check.get("name").asText().equals("recovery") ? check : recovery;
            }
            assertTrue(recovery != null && recovery.get("status").asText().equals("UP"), up.body());
            assertEquals(404, get(base + "/v1/ws/acme/logs/early").statusCode(), "the refused write changed nothing");
        } finally {
            if (server == null) {
                server = opening.get();
            }
            server.close();
        }
    }

    private static HttpResponse<String> get(String url) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }
}

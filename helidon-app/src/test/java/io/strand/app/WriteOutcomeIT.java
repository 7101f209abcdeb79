package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Http;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A write whose write-ahead write fails has already changed the stores' page cache (the queue
 * excerpt, the doc value), so after kill -9 it may be there. The answer must say so: {@code 503
 * outcome_unknown} with {@code "retryable":true}, over HTTP and over the socket alike; later writes
 * are refused without running; and an idempotent retry after the restart lands exactly once.
 * The child server runs with {@code -Dstrand.failpoint=wal.write:error}: its first write-ahead write fails.
 */
@Timeout(120)
class WriteOutcomeIT {
    private static final List<String> ARGS = List.of("--durability", "fsync", "--auth", "false");
    private static final String ENTRIES = "/v1/ws/outcome/logs/l/entries";
    private static final String APPEND = "{\"data\":{\"v\":1},\"producerId\":\"p\",\"producerSeq\":1}";

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"http-append", "socket-append", "doc-put"})
    void aWriteWhoseDurableWriteFailedShouldAnswerOutcomeUnknownAndAnIdempotentRetryShouldLandOnce(String how) throws Exception {
        try (ServerProcess faulty = ServerProcess.start(dir, ARGS, List.of("-Dstrand.failpoint=wal.write:error"))) {
            Http http = new Http(faulty.url, null);
            JsonNode error = firstWrite(how, faulty.url, http);
            assertEquals("outcome_unknown", error.path("code").asText(), how + ": " + error);
            assertTrue(error.path("retryable").asBoolean(), how + ": " + error);
            assertTrue(error.path("message").asText().contains("producerId/producerSeq"), how + ": " + error);
            Http.Reply refused = http.post(ENTRIES, "{\"data\":{\"v\":\"refused\"}}");
            assertEquals(503, refused.status(), refused.body());
            assertEquals("unavailable", refused.errorCode(), "later writes are refused without running: " + refused.body());
            assertTrue(refused.json().path("error").path("retryable").asBoolean(), refused.body());
            faulty.kill();
        }
        try (ServerProcess restarted = ServerProcess.start(dir, ARGS, List.of())) {
            Http http = new Http(restarted.url, null);
            if (how.equals("doc-put")) {
                Http.Reply retry = http.put("/v1/ws/outcome/docs/d", "{\"value\":{\"v\":1},\"expectVersion\":0}");
                assertEquals(409, retry.status(), "the first try landed (its map entry outlived kill -9): " + retry.body());
                assertEquals(1, retry.json().path("error").path("version").asLong(), retry.body());
                JsonNode doc = http.get("/v1/ws/outcome/docs/d").json();
                assertEquals(1, doc.path("version").asLong(), doc.toString());
                assertEquals(1, doc.path("value").path("v").asInt(), doc.toString());
            } else {
                Http.Reply retry = http.post(ENTRIES, APPEND);
                assertEquals(200, retry.status(), retry.body());
                assertTrue(retry.json().path("duplicate").asBoolean(), "the first try landed (its queue excerpt outlived kill -9): "
                        + retry.body());
                assertEquals(1, retry.json().path("firstSeq").asLong(), retry.body());
                JsonNode page = http.get(ENTRIES + "?from=1&limit=10").json();
                assertEquals(1, page.path("entries").size(), "applied exactly once, the refused write not at all: " + page);
                assertEquals(1, page.path("entries").get(0).path("data").path("v").asInt(), page.toString());
            }
        }
    }

    /** Makes the first write of the run (the one whose write-ahead write fails) and returns its error object. */
    private static JsonNode firstWrite(String how, String url, Http http) {
        switch (how) {
            case "http-append" -> {
                Http.Reply r = http.post(ENTRIES, APPEND);
                assertEquals(503, r.status(), r.body());
                return r.json().path("error");
            }
            case "socket-append" -> {
                try (WsClient ws = WsClient.connect(url.replaceFirst("^http", "ws") + "/v1/ws/outcome/socket")) {
                    JsonNode reply = ws.reply(ws.request("append",
                            "\"log\":\"l\",\"data\":{\"v\":1},\"producerId\":\"p\",\"producerSeq\":1"), 30_000);
                    assertEquals(false, reply.path("ok").asBoolean(true), reply.toString());
                    return reply.path("error");
                }
            }
            case "doc-put" -> {
                Http.Reply r = http.put("/v1/ws/outcome/docs/d", "{\"value\":{\"v\":1},\"expectVersion\":0}");
                assertEquals(503, r.status(), r.body());
                return r.json().path("error");
            }
            default -> throw new IllegalArgumentException(how);
        }
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.coldtier.S3ProxyFixture;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log delete while the object store is down (s3proxy stopped, as in {@link ColdStoreDownIT}):
 * the error answer must leave the log as it was, a retry once the store is back must delete it
 * all, and a log re-created under the same name must start empty, never showing old cold entries.
 */
@Timeout(120)
class LogDeleteColdDownIT {
    private static final String WS = "del";
    private static final String LOG = "l";

    @TempDir
    Path dir;
    S3ProxyFixture s3;

    @BeforeEach
    void startS3() {
        s3 = ColdLogs.startS3();
    }

    @AfterEach
    void stopS3() {
        s3.close();
    }

    @Test
    void aDeleteAnsweredWithAnErrorShouldKeepTheLogAndARetryShouldDeleteItAll() {
        Map<String, String> env = ColdLogs.withS3(ColdLogs.settings(1_000_000), s3, "cold", "del-it");
        try (TestServer server = TestServer.start(dir, env)) {
            Http http = server.http;
            String path = ColdLogs.logPath(WS, LOG);
            ColdLogs.append(http, WS, LOG, 1, 100);
            Http.Reply roll = http.post(path + "/cold/roll", "");
            assertEquals(200, roll.status(), roll.body());
            assertTrue(ColdLogs.coldStatus(http, WS, LOG).get("segments").asInt() > 0, "entries are in the cold tier");

            s3.stop();
            Http.Reply refused = http.delete(path);
            assertEquals(503, refused.status(), refused.body());
            assertEquals("cold_unavailable", refused.errorCode(), refused.body());
            Http.Reply info = http.get(path);
            assertEquals(200, info.status(), "the log still exists after the refused delete: " + info.body());
            assertEquals(100, info.json().get("head").asLong(), info.body());

            s3.restart();
            assertEquals(100, ColdLogs.readAllForward(http, WS, LOG, 1000, "after the refused delete"));
            Http.Reply retry = http.delete(path);
            assertEquals(200, retry.status(), retry.body());
            assertEquals(404, http.get(path).status());

            Http.Reply again = http.post(path + "/entries", "{\"data\":{\"n\":1,\"incarnation\":2}}");
            assertEquals(200, again.status(), again.body());
            assertEquals(1, again.json().get("firstSeq").asLong(), again.body());
            JsonNode page = http.get(path + "/entries?from=1&limit=1000").json();
            assertEquals(1, page.get("entries").size(), "only the new entry: " + page);
            assertEquals(2, page.get("entries").get(0).get("data").get("incarnation").asInt(), "the new entry, not an old cold one: " + page);
            JsonNode cold = ColdLogs.coldStatus(http, WS, LOG);
            assertEquals(0, cold.get("segments").asInt(), "no old segment is named by the re-created log: " + cold);
            assertEquals(0, cold.get("lastSeq").asLong(), cold.toString());
        }
    }
}

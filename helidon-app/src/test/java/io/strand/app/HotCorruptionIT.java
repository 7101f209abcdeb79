package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bit rot in a hot queue file: one byte flipped in a stored entry while the server is down. After the
 * restart, reads that reach it fail with {@code 500 corrupt} naming workspace, log and seq (never the
 * damaged bytes), and the entries around it stay readable.
 */
@Timeout(90)
class HotCorruptionIT {
    private static final String WS = "rot";
    private static final String LOG = "hot";
    private static final String ENTRIES = "/v1/ws/" + WS + "/logs/" + LOG + "/entries";

    @TempDir
    Path dir;

    private static String marker(long seq) {
        return String.format("entry-%04d", seq);
    }

    @Test
    void aFlippedByteInAHotFileShouldFailReadsNamingTheSeqAndLeaveOtherEntriesReadable() throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_DURABILITY", "fsync"))) {
            for (long seq = 1; seq <= 20; seq++) {
                Http.Reply r = server.http.post(ENTRIES, "{\"data\":{\"marker\":\"" + marker(seq) + "\"}}");
                assertEquals(200, r.status(), r.body());
            }
        }
        Path flipped = flipByteOf(marker(10));
        System.out.println("HotCorruptionIT flipped a byte of seq 10 in " + flipped);

        try (TestServer server = TestServer.start(dir, Map.of("STRAND_DURABILITY", "fsync"))) {
            Http http = server.http;
            for (long from : new long[] {1, 10}) {
                Http.Reply r = http.get(ENTRIES + "?from=" + from + "&limit=100");
                assertEquals(500, r.status(), "a read through seq 10 must fail, not serve damaged bytes: " + r.body());
                JsonNode error = r.json().get("error");
                assertEquals("corrupt", error.get("code").asText(), r.body());
                assertEquals(WS, error.get("ws").asText(), r.body());
                assertEquals(LOG, error.get("log").asText(), r.body());
                assertEquals(10, error.get("seq").asLong(), r.body());
                assertTrue(error.get("message").asText().contains("seq 10"), r.body());
            }
            Http.Reply before = http.get(ENTRIES + "?from=1&limit=9");
            assertEquals(200, before.status(), before.body());
            checkEntries(before.json(), 1, 9);
            Http.Reply after = http.get(ENTRIES + "?from=11&limit=100");
            assertEquals(200, after.status(), after.body());
            checkEntries(after.json(), 11, 20);

            try (WsClient ws = WsClient.connect(server.wsUrl(WS))) {
                ws.request("subscribe", "\"log\":\"" + LOG + "\",\"from\":1,\"sub\":\"s\"");
                assertTrue(ws.next(10_000).get("ok").asBoolean());
                JsonNode closed;
                do {
                    closed = ws.next(10_000);
                } while (!"closed".equals(closed.path("type").asText()));
                assertEquals("corrupt", closed.path("error").path("code").asText(), closed.toString());
                assertEquals(10, closed.path("error").path("seq").asLong(), closed.toString());
            }
            // appends go on after the damaged entry
            Http.Reply appended = http.post(ENTRIES, "{\"data\":{\"marker\":\"" + marker(21) + "\"}}");
            assertEquals(200, appended.status(), appended.body());
            checkEntries(http.get(ENTRIES + "?from=21").json(), 21, 21);
        }
    }

    private static void checkEntries(JsonNode page, long first, long last) {
        JsonNode entries = page.get("entries");
        assertEquals(last - first + 1, entries.size(), page.toString());
        for (int i = 0; i < entries.size(); i++) {
            assertEquals(first + i, entries.get(i).get("seq").asLong(), page.toString());
            assertEquals(marker(first + i), entries.get(i).get("data").get("marker").asText(), page.toString());
        }
    }

    /** Flips the last byte of {@code text} where it is stored in the log's hot cycle files; returns the file. */
    private Path flipByteOf(String text) throws IOException {
        byte[] needle = text.getBytes(StandardCharsets.UTF_8);
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir.resolve("logs").resolve(WS).resolve(LOG))) {
            files = s.filter(p -> p.toString().endsWith(".cq4")).toList();
        }
        for (Path f : files) {
            byte[] all = Files.readAllBytes(f);
            for (int i = 0; i + needle.length <= all.length; i++) {
                if (Arrays.equals(all, i, i + needle.length, needle, 0, needle.length)) {
                    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
                        raf.seek(i + needle.length - 1);
                        raf.write(all[i + needle.length - 1] ^ 0x01);
                    }
                    return f;
                }
            }
        }
        throw new AssertionError(text + " not found in " + files);
    }
}

package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.checkEntry;
import static io.strand.app.testing.ColdLogs.coldStatus;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.coldtier.SegmentWriter;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bit rot and truncation in the file store: one byte flipped inside a segment's first block, another
 * segment cut to half. Reads touching them fail with {@code corrupt} naming the segment (never wrong
 * bytes, never a short page passed off as complete), and {@code cold/verify} reports both — 100% of
 * the damaged segments detected, and nothing else.
 */
@Timeout(90)
@FaultTest
class ColdCorruptionIT {
    private static final String WS = "rot";
    private static final String LOG = "l";

    @TempDir
    Path dir;

    private record Segment(Path file, String key, long first, long last) {
    }

    @Test
    @Scenario("bit flip + truncation in cold segments")
    void flippedAndTruncatedSegmentsShouldFailReadsNamingThemAndBeReportedByVerify(ReliabilityRow row) throws Exception {
        try (TestServer server = TestServer.start(dir, ColdLogs.settings(2_000))) {
            Http http = server.http;
            for (int b = 0; b < 40; b++) { // 20,000 entries over ~3 s, so rolled hot files get dropped
                ColdLogs.append(http, WS, LOG, b * 500L + 1, 500);
                Thread.sleep(50);
            }
            await("four segments below the hot files", Duration.ofSeconds(30),
                    () -> segments().stream().filter(s -> s.last() < hotStoredFirst(http)).count() >= 4);
            long hotStoredFirst = hotStoredFirst(http);
            // Not the first segment: the roller's time lookup caches its first block, and a cached block
            // is served from memory (keyed by the segment's SHA-256), never re-read from the damaged file.
            List<Segment> coldOnly = segments().stream().filter(s -> s.last() < hotStoredFirst).toList();
            Segment flipped = coldOnly.get(1);
            Segment truncated = coldOnly.get(3); // not adjacent: a page may start in the intact segment before it
            flipByte(flipped.file(), SegmentWriter.HEADER_SIZE + 9); // inside block 0's zstd frame
            try (RandomAccessFile f = new RandomAccessFile(truncated.file().toFile(), "rw")) {
                f.setLength(f.length() / 2);
            }
            System.out.println("ColdCorruptionIT flipped " + flipped.key() + ", truncated " + truncated.key());

            for (Segment s : List.of(flipped, truncated)) {
                // a page inside the segment, and one that starts in the segment before and runs into it
                for (long from : new long[] {s.first(), s.first() - 20}) {
                    Http.Reply r = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=" + from + "&limit=100");
                    assertEquals(500, r.status(), "read from " + from + " must fail, not return a short page: " + r.body());
                    JsonNode error = r.json().get("error");
                    assertEquals("corrupt", error.get("code").asText(), r.body());
                    assertEquals(s.key(), error.get("segment").asText(), r.body());
                    assertTrue(error.get("message").asText().contains(s.key()), r.body());
                }
            }
            // every page of the damaged ranges either fails naming its segment or returns the exact entries
            int failed = 0;
            for (Segment s : List.of(flipped, truncated)) {
                for (long from = s.first(); from <= s.last(); from += 100) {
                    Http.Reply r = http.get(ColdLogs.logPath(WS, LOG) + "/entries?from=" + from + "&limit=100");
                    if (r.status() == 200) {
                        long expect = from;
                        for (JsonNode e : r.json().get("entries")) {
                            checkEntry(expect++, e, "a readable page of a damaged segment");
                        }
                        assertEquals(from + 100, expect, "a readable page is whole");
                    } else {
                        assertEquals(500, r.status(), r.body());
                        assertEquals(s.key(), r.json().get("error").get("segment").asText(), r.body());
                        failed++;
                    }
                }
            }
            assertTrue(failed > 0);

            JsonNode report = ColdLogs.verify(http, WS, LOG);
            System.out.println("ColdCorruptionIT verify: " + report.get("problems"));
            assertTrue(!report.get("ok").asBoolean(), report.toString());
            Map<String, String> kindByKey = new HashMap<>();
            for (JsonNode p : report.get("problems")) {
                kindByKey.put(p.get("key").asText(), p.get("kind").asText());
            }
            assertEquals(Map.of(flipped.key(), "corrupt", truncated.key(), "size"), kindByKey,
                    "exactly the two damaged segments are reported: " + report);
            assertEquals(0, report.get("orphans").size(), report.toString());
            row.runs(1).corruptions(kindByKey.size(), 2).note("reads fail 500 corrupt naming the segment; cold/verify lists both");
        }
    }

    private long hotStoredFirst(Http http) {
        return coldStatus(http, WS, LOG).get("hotStoredFirst").asLong();
    }

    /** The log's segment files in the store directory, by first seq. */
    private List<Segment> segments() {
        Path segDir = dir.resolve("cold").resolve(WS).resolve(LOG).resolve("seg");
        if (!Files.isDirectory(segDir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(segDir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".seg")).map(p -> {
                String name = p.getFileName().toString();
                String[] range = name.substring(0, name.length() - 4).split("-");
                return new Segment(p, WS + "/" + LOG + "/seg/" + name, Long.parseLong(range[0]), Long.parseLong(range[1]));
            }).sorted(java.util.Comparator.comparingLong(Segment::first)).toList();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void flipByte(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0x01);
        }
    }
}

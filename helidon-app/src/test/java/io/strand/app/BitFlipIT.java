package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.Http;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bit rot in the server's own files (cold segments: {@link ColdCorruptionIT}): one bit flipped in
 * the write-ahead log ({@code DATA/wal/}), the doc journal ({@code DATA/docs/journal/}) or a hot log
 * file ({@code DATA/logs/…/queue/}) while the server is down, then a restart. The forbidden outcome
 * is wrong data served as if it were right: the server must refuse to start, answer {@code 500
 * corrupt}, or serve exactly what was acknowledged (when the flipped copy is not the one it serves
 * from). The row says whether the flip was detected. The byte flipped is chosen by a printed seed.
 */
@Timeout(180)
@FaultTest
class BitFlipIT {
    private static final String ENTRIES = "/v1/ws/rot/logs/l/entries";

    @TempDir
    Path dir;

    @Test
    @Scenario("bit flip: write-ahead log")
    void aFlippedBitInTheWriteAheadLogShouldNeverBeServed(ReliabilityRow row) throws Exception {
        List<String> args = List.of("--durability", "fsync", "--auth", "false");
        Map<Long, String> acked = appendMarked(args, 300, "w");
        // the server was killed: its write-ahead segments still hold the records since its start
        long seed = Long.getLong("strand.test.seed", System.nanoTime()); // -Dstrand.test.seed=<printed seed> repeats a run
        // never the last record: a flip in a segment's last group looks exactly like a torn write (WriteAheadLog)
        long victim = 1 + new Random(seed).nextInt(acked.size() - 1);
        Path file = flipInside(dir.resolve("wal"), ".wal", acked.get(victim).getBytes(StandardCharsets.UTF_8));
        System.out.println("BitFlipIT wal seed " + seed + ": flipped the record of seq " + victim + " in " + file.getFileName());
        long detected = checkRestart(args, acked, row, "write-ahead log");
        assertEquals(1, detected, "a flipped write-ahead group followed by later groups is reported, not dropped as a torn tail");
    }

    @Test
    @Scenario("bit flip: doc journal")
    void aFlippedBitInTheDocJournalShouldBeDetectedOrNeverServed(ReliabilityRow row) throws Exception {
        List<String> args = List.of("--durability", "os", "--auth", "false");
        long seed = Long.getLong("strand.test.seed", System.nanoTime()); // -Dstrand.test.seed=<printed seed> repeats a run
        int victim = new Random(seed).nextInt(20);
        Map<String, String> written = new HashMap<>();
        try (ServerProcess child = ServerProcess.start(dir, args, List.of())) {
            Http http = new Http(child.url, null);
            for (int i = 0; i < 20; i++) {
                String value = "DOCMARK-" + i + "-" + "z".repeat(40);
                Http.Reply r = http.put("/v1/ws/rot/docs/d" + i, "{\"value\":{\"m\":\"" + value + "\"}}");
                assertEquals(200, r.status(), r.body());
                written.put("d" + i, value);
            }
            child.kill(); // before the doc checkpointer's first tick: restart replays these journal records
        }
        Path file = flipInside(dir.resolve("docs").resolve("journal"), ".cq4", ("DOCMARK-" + victim + "-z").getBytes(StandardCharsets.UTF_8));
        System.out.println("BitFlipIT doc journal seed " + seed + ": flipped doc d" + victim + " in " + file.getFileName());
        ServerProcess child;
        try {
            child = ServerProcess.start(dir, args, List.of());
        } catch (IOException refused) {
            row.runs(1).operations(20).acknowledged(20).corruptions(1, 1).note("start refused: " + corruptionIn(refused));
            return;
        }
        try (child) {
            Http http = new Http(child.url, null);
            long wrong = 0;
            long detected = 0;
            for (Map.Entry<String, String> d : written.entrySet()) {
                Http.Reply r = http.get("/v1/ws/rot/docs/" + d.getKey());
                if (r.status() == 500 && "corrupt".equals(r.errorCode())) {
                    detected++;
                } else if (r.status() != 200 || !d.getValue().equals(r.json().get("value").get("m").asText())) {
                    System.out.println("BitFlipIT doc " + d.getKey() + " served wrong: " + r.status() + " " + r.body());
                    wrong++;
                }
            }
            row.runs(1).operations(20).acknowledged(20).history(wrong, 0).corruptions(detected > 0 ? 1 : 0, 1)
                    .note(wrong > 0 ? wrong + " doc served with flipped content"
                            : detected > 0 ? "reads answer 500 corrupt" : "not reported; every doc served as written");
            assertEquals(0, wrong, "no doc is served with flipped content");
        }
    }

    @Test
    @Scenario("bit flip: hot log file")
    void aFlippedBitInAHotFileShouldBeDetected(ReliabilityRow row) throws Exception {
        List<String> args = List.of("--durability", "os", "--auth", "false");
        Map<Long, String> acked = appendMarked(args, 300, "h");
        long seed = Long.getLong("strand.test.seed", System.nanoTime()); // -Dstrand.test.seed=<printed seed> repeats a run
        long victim = 1 + new Random(seed).nextInt(acked.size());
        Path file = flipInside(dir.resolve("logs").resolve("rot").resolve("l"), ".cq4", acked.get(victim).getBytes(StandardCharsets.UTF_8));
        System.out.println("BitFlipIT hot seed " + seed + ": flipped seq " + victim + " in " + file.getFileName());
        long detected = checkRestart(args, acked, row, "hot log file");
        assertEquals(1, detected, "a flipped hot entry is reported as corrupt, not served");
    }

    /** Appends {@code n} entries {@code {"m":"MARK-<tag>-<seq>-…"}} one at a time, then kills the server; returns seq → marker. */
    private Map<Long, String> appendMarked(List<String> args, int n, String tag) throws Exception {
        Map<Long, String> acked = new HashMap<>();
        try (ServerProcess child = ServerProcess.start(dir, args, List.of())) {
            Http http = new Http(child.url, null);
            for (int i = 1; i <= n; i++) {
                String marker = "MARK-" + tag + "-" + i + "-" + "q".repeat(30);
                Http.Reply r = http.post(ENTRIES, "{\"data\":{\"m\":\"" + marker + "\"}}");
                assertEquals(200, r.status(), r.body());
                acked.put(r.json().get("firstSeq").asLong(), marker);
            }
            child.kill();
        }
        return acked;
    }

    /**
     * Restarts after the flip and counts: refused start (detected), reads answering {@code 500 corrupt}
     * (detected), entries served with other content than acknowledged (wrong: forbidden), acknowledged
     * entries missing. Returns how many detections.
     */
    private long checkRestart(List<String> args, Map<Long, String> acked, ReliabilityRow row, String what) throws Exception {
        row.runs(1).operations(acked.size()).acknowledged(acked.size());
        ServerProcess child;
        try {
            child = ServerProcess.start(dir, args, List.of());
        } catch (IOException refused) {
            row.corruptions(1, 1).note("start refused: " + corruptionIn(refused));
            return 1;
        }
        try (child) {
            Http http = new Http(child.url, null);
            long wrong = 0;
            long lost = 0;
            long duplicated = 0;
            long detected = 0;
            Map<String, Long> seen = new HashMap<>();
            for (long from = 1; from <= acked.size(); from += 100) {
                Http.Reply r = http.get(ENTRIES + "?from=" + from + "&limit=100");
                if (r.status() == 500 && "corrupt".equals(r.errorCode())) {
                    System.out.println("BitFlipIT " + what + ": page from " + from + " answered " + r.body());
                    detected++;
                    continue;
                }
                assertEquals(200, r.status(), r.body());
                long expect = from;
                for (JsonNode e : r.json().get("entries")) {
                    long seq = e.get("seq").asLong();
                    String m = e.get("data").get("m").asText();
                    if (seq != expect || !m.equals(acked.get(seq))) {
                        System.out.println("BitFlipIT " + what + ": seq " + seq + " (expected " + expect + ") served as " + m);
                        wrong++;
                    }
                    if (seen.put(m, seq) != null) {
                        duplicated++;
                    }
                    expect = seq + 1;
                }
                lost += Math.max(0, Math.min(from + 100, acked.size() + 1) - expect);
            }
            // an entry served with other content is an acknowledged entry lost, and worse: it looks fine
            row.history(lost + wrong, duplicated, 0).corruptions(Math.min(1, detected), 1)
                    .note(wrong > 0 ? wrong + " entry served with flipped content"
                            : detected > 0 ? "reads answer 500 corrupt" : "not reported; every entry served as acknowledged");
            assertEquals(0, wrong, "no entry is served with flipped content");
            assertEquals(0, lost, "no acknowledged entry is lost");
            assertEquals(0, duplicated);
            return detected;
        }
    }

    /** The line of a refused start that names the corruption; a start refused for another reason fails the test. */
    private static String corruptionIn(IOException refused) {
        String output = String.valueOf(refused.getMessage());
        System.out.println("BitFlipIT start refused: " + output);
        for (String line : output.split("\n")) {
            String l = line.toLowerCase(java.util.Locale.ROOT);
            if (l.contains("corrupt") || l.contains("checksum")) {
                String reason = line.trim();
                int exception = reason.indexOf("Exception: ");
                reason = exception < 0 ? reason : reason.substring(exception + "Exception: ".length());
                return reason.length() > 100 ? reason.substring(0, 100) + "…" : reason;
            }
        }
        throw new AssertionError("the server refused to start, but not naming the corruption", refused);
    }

    /**
     * Flips the low bit of the last byte of the first occurrence of {@code marker} (a letter inside a
     * JSON string, so the damaged copy still parses) in a {@code suffix} file under {@code root}.
     */
    private static Path flipInside(Path root, String suffix, byte[] marker) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
        }
        for (Path f : files) {
            long at = indexOf(f, marker);
            if (at >= 0) {
                flipBit(f, at + marker.length - 1);
                return f;
            }
        }
        throw new AssertionError("marker " + new String(marker, StandardCharsets.UTF_8) + " not found under " + root);
    }

    private static long indexOf(Path file, byte[] marker) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
            int limit = map.limit() - marker.length;
            outer:
            for (int i = 0; i <= limit; i++) {
                for (int j = 0; j < marker.length; j++) {
                    if (map.get(i + j) != marker[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }

    private static void flipBit(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0x01);
        }
    }
}

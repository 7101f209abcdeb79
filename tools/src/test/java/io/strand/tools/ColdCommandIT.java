package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code strand cold status|roll|compact|verify} against a real server: output, JSON, exit codes 0/1/2. */
@Timeout(90)
class ColdCommandIT {
    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {
        JsonNode json() {
            return Json.parse(out);
        }
    }

    private static Run strand(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = StrandCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    private static String[] cold(String url, String sub, String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("cold", sub, "--url", url, "-w", "acme", "--log", "l"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    private static void append(Http http, int from, int n) {
        StringBuilder sb = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"data\":{\"n\":").append(from + i).append("}}");
        }
        Http.Reply r = http.post("/v1/ws/acme/logs/l/entries", sb.append("]}").toString());
        assertEquals(200, r.status(), r.body());
    }

    @Test
    void coldCommandsShouldDriveTheServerAndExitZeroOneOrTwo() throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_HOT_ROLL_CYCLE", "secondly"))) {
            String url = server.url();
            for (int s = 0; s < 3; s++) { // three rolls: three segments
                append(server.http, s * 1000 + 1, 1000);
                Run roll = strand(cold(url, "roll"));
                assertEquals(0, roll.code(), roll.err());
                assertTrue(roll.out().contains("rolled 1,000 entries of acme/l; the cold part ends at seq " + String.format("%,d", (s + 1) * 1000)),
                        roll.out());
            }
            Run status = strand(cold(url, "status", "--json"));
            assertEquals(0, status.code(), status.err());
            assertEquals(3, status.json().get("segments").asInt(), status.out());
            assertEquals(3000, status.json().get("lastSeq").asLong(), status.out());
            Run human = strand(cold(url, "status"));
            assertEquals(0, human.code(), human.err());
            assertTrue(human.out().contains("segments      3") && human.out().contains("seqs 1..3,000"), human.out());

            Run compact = strand(cold(url, "compact", "--grace", "0s"));
            assertEquals(0, compact.code(), compact.err());
            assertTrue(compact.out().contains("3 → 1 segments"), compact.out());

            Run verify = strand(cold(url, "verify"));
            assertEquals(0, verify.code(), verify.out() + verify.err());
            assertTrue(verify.out().startsWith("ok: acme/l") && verify.out().contains("3,000 entries"), verify.out());

            // an object no manifest names: verify fails until it is cleaned up
            Path segDir = dir.resolve("cold/acme/l/seg");
            Files.write(segDir.resolve("00000000000000009001-00000000000000009002.seg"), new byte[] {1, 2, 3});
            Run orphan = strand(cold(url, "verify"));
            assertEquals(1, orphan.code(), orphan.out());
            assertTrue(orphan.out().contains("orphan  acme/l/seg/00000000000000009001-00000000000000009002.seg"), orphan.out());
            Run cleaned = strand(cold(url, "verify", "--delete-orphans", "--min-age", "0s"));
            assertEquals(0, cleaned.code(), cleaned.out() + cleaned.err());
            assertTrue(cleaned.out().contains("deleted 1 orphans"), cleaned.out());

            // a flipped byte in the only segment: verify names it and exits 1, in text and in JSON
            Path segment;
            try (Stream<Path> files = Files.list(segDir)) {
                segment = files.filter(p -> p.toString().endsWith(".seg")).findFirst().orElseThrow();
            }
            try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
                f.seek(30);
                int b = f.read();
                f.seek(30);
                f.write(b ^ 0x10);
            }
            Run corrupt = strand(cold(url, "verify"));
            assertEquals(1, corrupt.code(), corrupt.out());
            assertTrue(corrupt.out().startsWith("PROBLEMS:") && corrupt.out().contains("corrupt  acme/l/seg/" + segment.getFileName()),
                    corrupt.out());
            System.out.print("ColdCommandIT sample output:\n" + human.out() + compact.out() + verify.out() + orphan.out() + corrupt.out());
            Run corruptJson = strand(cold(url, "verify", "--json"));
            assertEquals(1, corruptJson.code());
            assertEquals(false, corruptJson.json().get("ok").asBoolean());

            // usage errors exit 2; a server error or an unreachable server exits 1 with one line
            assertEquals(2, strand("cold", "verify", "--url", url, "-w", "acme").code(), "--log is required");
            assertEquals(2, strand("cold", "bogus").code());
            assertEquals(2, strand("cold").code());
            assertEquals(2, strand(cold(url, "compact", "--grace", "soon")).code());
            Run bad = strand("cold", "status", "--url", url, "-w", "acme", "--log", "-x");
            assertEquals(1, bad.code());
            assertTrue(bad.err().contains("invalid_name"), bad.err());
            Run down = strand("cold", "status", "--url", "http://127.0.0.1:1", "-w", "acme", "--log", "l");
            assertEquals(1, down.code());
            assertTrue(down.err().startsWith("strand: unreachable"), down.err());
        }
    }
}

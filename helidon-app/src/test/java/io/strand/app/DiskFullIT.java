package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.Authenticator;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.core.SmallFileSystem;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The data directory on a full file system: a real 128 MiB tmpfs filled by a ballast file where
 * the machine lets the test mount one (root on Linux), else the same server with a simulated free
 * space. Writes (HTTP and socket, logs and docs) get 507 storage_full and change nothing, health
 * goes DOWN naming the directory, reads keep working, and writes resume by themselves once the
 * ballast is deleted. Each append carries a unique {@code n}: the row counts acknowledged ones
 * missing, any present twice, refused ones present (forbidden too) and seq gaps.
 */
@Timeout(120)
@FaultTest
class DiskFullIT {
    private static final long RESERVE = 8L << 20;
    private static final long DEADLINE_MS = 10_000;

    @TempDir
    Path tmp;

    /** The disk: a mounted tmpfs with a ballast, or a simulated free-space reading. */
    private interface Disk extends AutoCloseable {
        Path data();

        void fill() throws IOException;

        void free() throws IOException;

        @Override
        void close();
    }

    private Disk disk(String mode, boolean simulate, AtomicLong simulated) {
        Optional<SmallFileSystem> mounted = simulate ? Optional.empty() : SmallFileSystem.mount(tmp.resolve("small-" + mode), 128L << 20);
        if (mounted.isPresent()) {
            SmallFileSystem fs = mounted.get();
            return new Disk() {
                public Path data() {
                    return fs.dir().resolve("data");
                }

                public void fill() throws IOException {
                    fs.fillLeaving(RESERVE - (2L << 20));
                }

                public void free() throws IOException {
                    fs.freeBallast();
                }

                public void close() {
                    fs.close();
                }
            };
        }
        simulated.set(1L << 30);
        return new Disk() {
            public Path data() {
                return tmp.resolve("data-" + mode);
            }

            public void fill() {
                simulated.set(RESERVE - (2L << 20));
            }

            public void free() {
                simulated.set(1L << 30);
            }

            public void close() {
            }
        };
    }

    /** Appends to log {@code l}, each with its own {@code n}, and what became of them. One test thread. */
    private static final class Appends {
        private final Set<Long> acked = new HashSet<>();
        private final Set<Long> refused = new HashSet<>();
        private long operations = 0;
        private long next = 0;

        Http.Reply http(Http http) {
            long n = next++;
            operations++;
            Http.Reply r = http.post("/v1/ws/w/logs/l/entries", "{\"data\":{\"n\":" + n + ",\"pad\":\"" + "x".repeat(1000) + "\"}}");
            (r.status() == 200 ? acked : refused).add(n);
            return r;
        }

        JsonNode socket(WsClient socket) {
            long n = next++;
            operations++;
            JsonNode reply = socket.reply(socket.request("append", "\"log\":\"l\",\"data\":{\"n\":" + n + "}"), 10_000);
            (reply.path("ok").asBoolean() ? acked : refused).add(n);
            return reply;
        }

        /** Reads log {@code l} back: every acknowledged append once, no refused one, seqs without gaps. */
        void check(Http http, ReliabilityRow row, boolean real) {
            JsonNode entries = http.get("/v1/ws/w/logs/l/entries?from=1&limit=1000").json().path("entries");
            Map<Long, Integer> seen = new HashMap<>();
            long gaps = 0;
            long expect = 1;
            for (JsonNode e : entries) {
                long seq = e.path("seq").asLong();
                gaps += seq == expect ? 0 : 1;
                expect = seq + 1;
                seen.merge(e.path("data").path("n").asLong(), 1, Integer::sum);
            }
            long lost = acked.stream().filter(n -> !seen.containsKey(n)).count();
            long duplicated = seen.values().stream().filter(c -> c > 1).count();
            long refusedButWritten = refused.stream().filter(seen::containsKey).count();
            row.runs(1).operations(operations).acknowledged(acked.size()).history(lost, duplicated, gaps)
                    .note(refused.size() + " refused 507 storage_full, " + refusedButWritten + " of them written; writes resumed without restart"
                            + (real ? "" : "; free space simulated"));
            assertEquals(0, lost, "acknowledged appends lost");
            assertEquals(0, duplicated, "appends present twice");
            assertEquals(0, gaps, "seq gaps");
            assertEquals(0, refusedButWritten, "appends answered 507 but written");
        }
    }

    /** Both durability modes on a real tmpfs (simulated where mounting is not allowed), and the simulated store always once. */
    @ParameterizedTest(name = "{0}, simulated={1}")
    @CsvSource({"fsync, false", "os, false", "fsync, true"})
    @Scenario("disk full")
    void writesShouldGet507AndChangeNothingWhileTheDataDiskIsFullAndResumeOnceFreed(String mode, boolean simulate, ReliabilityRow row)
            throws Exception {
        AtomicLong simulated = new AtomicLong(-1);
        try (Disk disk = disk(mode, simulate, simulated)) {
            boolean real = simulated.get() < 0;
            row.scenario("disk full (" + mode + ", " + (real ? "128 MiB tmpfs" : "simulated full store") + ")");
            System.out.println("DiskFullIT " + mode + ": " + (real ? "real tmpfs at " + disk.data() : "simulated full store"));
            Appends appends = new Appends();
            Map<String, String> settings = Map.of("STRAND_DURABILITY", mode, "STRAND_WRITERS", "1",
                    "STRAND_MIN_FREE_DISK", String.valueOf(RESERVE));
            try (TestServer server = TestServer.start(disk.data(), settings, Authenticator.OPEN, real ? null : simulated::get);
                 WsClient socket = WsClient.connect(server.wsUrl("w"))) {
                Http http = server.http;
                for (int i = 0; i < 10; i++) {
                    assertEquals(200, appends.http(http).status());
                }
                assertEquals(200, http.put("/v1/ws/w/docs/d", "{\"value\":{\"a\":1}}").status());
                assertEquals(200, http.get("/observe/health").status(), http.get("/observe/health").body());

                disk.fill();
                // the guard reads free space at most 100 ms old: appends that raced the fill are fine, then 507
                long deadline = System.currentTimeMillis() + DEADLINE_MS;
                Http.Reply refused;
                do {
                    refused = appends.http(http);
                    assertTrue(refused.status() == 200 || refused.status() == 507, refused.status() + " " + refused.body());
                } while (refused.status() == 200 && System.currentTimeMillis() < deadline);
                assertEquals(507, refused.status(), "a full data disk refuses appends");
                assertEquals("storage_full", refused.errorCode());
                assertTrue(refused.body().contains(disk.data().toString()), refused.body());
                long head = http.get("/v1/ws/w/logs/l").json().path("head").asLong();

                for (int i = 0; i < 5; i++) {
                    Http.Reply again = appends.http(http);
                    assertEquals(507, again.status(), again.body());
                    JsonNode reply = appends.socket(socket);
                    assertEquals("storage_full", reply.path("error").path("code").asText(), reply.toString());
                }
                Http.Reply doc = http.put("/v1/ws/w/docs/d", "{\"value\":{\"a\":2}}");
                assertEquals(507, doc.status(), doc.body());
                assertEquals("storage_full", doc.errorCode());
                assertEquals(507, http.post("/v1/ws/w/docs/n/incr", "{\"path\":\"c\",\"delta\":1}").status());
                assertEquals(507, http.post("/v1/ws/w/logs/new-log/entries", "{\"data\":1}").status(), "creating a log needs space too");
                appends.operations++;

                Http.Reply health = http.get("/observe/health");
                assertEquals(503, health.status(), health.body());
                assertTrue(health.body().contains(disk.data().toString()) && health.body().contains("freeBytes"), health.body());
                assertEquals(503, http.get("/observe/health/ready").status());
                assertEquals(200, http.get("/observe/health/live").status(), "a restart frees no space: liveness stays UP");

                // reads keep working, and nothing refused was applied
                assertEquals(head, http.get("/v1/ws/w/logs/l").json().path("head").asLong(), "head unchanged by refused appends");
                JsonNode page = http.get("/v1/ws/w/logs/l/entries?from=1&limit=1000").json();
                assertEquals(head, page.path("entries").size());
                assertEquals(1, http.get("/v1/ws/w/docs/d").json().path("version").asLong());
                assertEquals(404, http.get("/v1/ws/w/docs/n").status());
                assertEquals(404, http.get("/v1/ws/w/logs/new-log").status());

                disk.free();
                deadline = System.currentTimeMillis() + DEADLINE_MS;
                Http.Reply accepted;
                do {
                    accepted = appends.http(http);
                } while (accepted.status() == 507 && System.currentTimeMillis() < deadline);
                assertEquals(200, accepted.status(), "writes resume without a restart: " + accepted.body());
                assertEquals(head + 1, accepted.json().path("firstSeq").asLong(), "the refused appends left no seq behind");
                JsonNode viaSocket = appends.socket(socket);
                assertTrue(viaSocket.path("ok").asBoolean(), viaSocket.toString());
                assertEquals(200, http.put("/v1/ws/w/docs/d", "{\"value\":{\"a\":2}}").status());
                assertEquals(2, http.get("/v1/ws/w/docs/d").json().path("version").asLong());
                assertEquals(200, http.get("/observe/health").status(), http.get("/observe/health").body());
                assertEquals(head + 2, http.get("/v1/ws/w/logs/l/entries?from=1&limit=1000").json().path("entries").size());
                appends.check(http, row, real);
            }
        }
    }
}

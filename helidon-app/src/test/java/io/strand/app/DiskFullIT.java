package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.auth.Authenticator;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.core.SmallFileSystem;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
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
 * ballast is deleted.
 */
@Timeout(120)
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

    /** Both durability modes on a real tmpfs (simulated where mounting is not allowed), and the simulated store always once. */
    @ParameterizedTest(name = "{0}, simulated={1}")
    @CsvSource({"fsync, false", "os, false", "fsync, true"})
    void writesShouldGet507AndChangeNothingWhileTheDataDiskIsFullAndResumeOnceFreed(String mode, boolean simulate) throws Exception {
        AtomicLong simulated = new AtomicLong(-1);
        try (Disk disk = disk(mode, simulate, simulated)) {
            boolean real = simulated.get() < 0;
            System.out.println("DiskFullIT " + mode + ": " + (real ? "real tmpfs at " + disk.data() : "simulated full store"));
            Map<String, String> settings = Map.of("STRAND_DURABILITY", mode, "STRAND_WRITERS", "1",
                    "STRAND_MIN_FREE_DISK", String.valueOf(RESERVE));
            try (TestServer server = TestServer.start(disk.data(), settings, Authenticator.OPEN, real ? null : simulated::get);
                 WsClient socket = WsClient.connect(server.wsUrl("w"))) {
                Http http = server.http;
                String payload = "{\"data\":{\"pad\":\"" + "x".repeat(1000) + "\"}}";
                for (int i = 0; i < 10; i++) {
                    assertEquals(200, http.post("/v1/ws/w/logs/l/entries", payload).status());
                }
                assertEquals(200, http.put("/v1/ws/w/docs/d", "{\"value\":{\"a\":1}}").status());
                assertEquals(200, http.get("/observe/health").status(), http.get("/observe/health").body());

                disk.fill();
                // the guard reads free space at most 100 ms old: appends that raced the fill are fine, then 507
                long deadline = System.currentTimeMillis() + DEADLINE_MS;
                Http.Reply refused;
                do {
                    refused = http.post("/v1/ws/w/logs/l/entries", payload);
                    assertTrue(refused.status() == 200 || refused.status() == 507, refused.status() + " " + refused.body());
                } while (refused.status() == 200 && System.currentTimeMillis() < deadline);
                assertEquals(507, refused.status(), "a full data disk refuses appends");
                assertEquals("storage_full", refused.errorCode());
                assertTrue(refused.body().contains(disk.data().toString()), refused.body());
                long head = http.get("/v1/ws/w/logs/l").json().path("head").asLong();

                for (int i = 0; i < 5; i++) {
                    Http.Reply again = http.post("/v1/ws/w/logs/l/entries", payload);
                    assertEquals(507, again.status(), again.body());
                    JsonNode reply = socket.reply(socket.request("append", "\"log\":\"l\",\"data\":" + i), 10_000);
                    assertEquals("storage_full", reply.path("error").path("code").asText(), reply.toString());
                }
                Http.Reply doc = http.put("/v1/ws/w/docs/d", "{\"value\":{\"a\":2}}");
                assertEquals(507, doc.status(), doc.body());
                assertEquals("storage_full", doc.errorCode());
                assertEquals(507, http.post("/v1/ws/w/docs/n/incr", "{\"path\":\"c\",\"delta\":1}").status());
                assertEquals(507, http.post("/v1/ws/w/logs/new-log/entries", payload).status(), "creating a log needs space too");

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
                    accepted = http.post("/v1/ws/w/logs/l/entries", payload);
                } while (accepted.status() == 507 && System.currentTimeMillis() < deadline);
                assertEquals(200, accepted.status(), "writes resume without a restart: " + accepted.body());
                assertEquals(head + 1, accepted.json().path("firstSeq").asLong(), "the refused appends left no seq behind");
                JsonNode viaSocket = socket.reply(socket.request("append", "\"log\":\"l\",\"data\":\"s\""), 10_000);
                assertTrue(viaSocket.path("ok").asBoolean(), viaSocket.toString());
                assertEquals(200, http.put("/v1/ws/w/docs/d", "{\"value\":{\"a\":2}}").status());
                assertEquals(2, http.get("/v1/ws/w/docs/d").json().path("version").asLong());
                assertEquals(200, http.get("/observe/health").status(), http.get("/observe/health").body());
                assertEquals(head + 2, http.get("/v1/ws/w/logs/l/entries?from=1&limit=1000").json().path("entries").size());
            }
        }
    }
}

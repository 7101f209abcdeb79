package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Start-up must not grow with how many logs were created since the last checkpoint (the first
 * restart after creating 5,000 logs replayed 67,258 write-ahead records and took 32 s): a clean
 * stop (SIGTERM) checkpoints, so the next start replays nothing; after kill -9 the replay is bounded
 * by {@code --wal-checkpoint-records} per writer, not by what a 16 MiB segment holds.
 */
@Timeout(300)
class RestartReplayIT {

    @TempDir
    Path dir;

    @Test
    void aCleanStopShouldLeaveNothingToReplay() throws Exception {
        int logs = 300;
        List<String> args = List.of("--durability", "fsync", "--auth", "false");
        try (ServerProcess child = ServerProcess.start(dir, args, List.of())) {
            createLogs(new Http(child.url, null), logs);
            assertEquals(0, child.terminate(), "a clean stop on SIGTERM exits 0");
        }
        try (ServerProcess child = ServerProcess.start(dir, args, List.of())) {
            Http http = new Http(child.url, null);
            assertEquals(0, replayed(http), "a clean stop checkpointed everything");
            assertEquals(logs, http.get("/v1/ws/replay/logs?limit=1000").json().path("logs").size());
            assertEquals(1, http.get("/v1/ws/replay/logs/l" + (logs - 1)).json().path("head").asLong());
        }
    }

    @Test
    void replayAfterKillNineShouldBeBoundedByTheCheckpointRecords() throws Exception {
        int logs = 600;
        int checkpointRecords = 50;
        List<String> args = List.of("--durability", "fsync", "--auth", "false", "--writers", "1",
                "--wal-checkpoint-records", String.valueOf(checkpointRecords));
        try (ServerProcess child = ServerProcess.start(dir, args, List.of())) {
            createLogs(new Http(child.url, null), logs);
            child.kill();
        }
        try (ServerProcess child = ServerProcess.start(dir, args, List.of())) {
            Http http = new Http(child.url, null);
            long replayed = replayed(http);
            System.out.println("RestartReplayIT: " + logs + " logs created, kill -9, " + replayed + " records replayed");
            // the current segment plus those whose checkpoint (a syncfs in the background) had not finished
            assertTrue(replayed <= logs / 2, "replay bounded by " + checkpointRecords + " records per segment: " + replayed);
            assertEquals(logs, http.get("/v1/ws/replay/logs?limit=1000").json().path("logs").size());
            for (int i = 0; i < logs; i += 97) {
                assertEquals(1, http.get("/v1/ws/replay/logs/l" + i).json().path("head").asLong(), "log l" + i);
            }
        }
    }

    /** One append to each of {@code n} new logs, from a few concurrent clients. */
    private static void createLogs(Http http, int n) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 8; c++) {
            clients.add(Thread.ofVirtual().start(() -> {
                for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                    if (http.post("/v1/ws/replay/logs/l" + i + "/entries", "{\"data\":" + i + "}").status() != 200) {
                        failed.incrementAndGet();
                    }
                }
            }));
        }
        for (Thread t : clients) {
            t.join();
        }
        assertEquals(0, failed.get(), "every log was created");
    }

    private static long replayed(Http http) {
        return (long) http.metric("strand_wal_replayed");
    }
}

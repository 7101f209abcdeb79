package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 during acknowledged incr and put, 10 times: the counter equals the acknowledged count
 * plus at most the requests in flight at the kill, every acknowledged put is there, and reopening
 * never hangs (each start has a hard timeout).
 */
@Timeout(300)
class DocCrashIT {
    private static final int LOOPS = 10;
    private static final int CLIENTS = 4;

    @TempDir
    Path dir;

    @Test
    void acknowledgedDocChangesShouldSurviveKillNine() throws Exception {
        long seed = System.nanoTime();
        System.out.println("DocCrashIT seed " + seed);
        Random random = new Random(seed);
        AtomicLong ackedIncrs = new AtomicLong();
        long maybeApplied = 0;
        AtomicLongArray ackedPut = new AtomicLongArray(CLIENTS);
        AtomicLongArray sentPut = new AtomicLongArray(CLIENTS);
        List<String> args = List.of("--durability", "fsync", "--doc-capacity", "10000", "--auth", "false");
        for (int loop = 0; loop <= LOOPS; loop++) {
            ServerProcess child = ServerProcess.start(dir, args, List.of());
            Http http = new Http(child.url, null);
            long counter = http.get("/v1/ws/crash/docs/ctr").status() == 404 ? 0
                    : http.get("/v1/ws/crash/docs/ctr").json().get("value").get("n").asLong();
            assertTrue(counter >= ackedIncrs.get() && counter <= ackedIncrs.get() + maybeApplied,
                    "loop " + loop + ": counter " + counter + " outside [" + ackedIncrs.get() + ", " + (ackedIncrs.get() + maybeApplied) + "]");
            ackedIncrs.set(counter); // unacknowledged increments that did land now count as done
            maybeApplied = 0;
            for (int c = 0; c < CLIENTS; c++) {
                if (ackedPut.get(c) > 0) {
                    JsonNode doc = http.get("/v1/ws/crash/docs/p-" + c).json();
                    long k = doc.get("value").get("k").asLong();
                    assertTrue(k >= ackedPut.get(c) && k <= sentPut.get(c), "loop " + loop + ": put p-" + c + " = " + k
                            + ", acked " + ackedPut.get(c) + ", sent " + sentPut.get(c));
                }
            }
            if (loop == LOOPS) {
                child.kill();
                break;
            }
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicLong inFlight = new AtomicLong();
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(Thread.ofVirtual().start(() -> {
                    while (running.get()) {
                        try {
                            inFlight.incrementAndGet();
                            Http.Reply r = http.post("/v1/ws/crash/docs/ctr/incr", "{\"path\":\"n\",\"delta\":1}");
                            if (r.status() == 200) {
                                ackedIncrs.incrementAndGet();
                                inFlight.decrementAndGet();
                            }
                            long k = sentPut.get(client) + 1;
                            sentPut.set(client, k);
                            Http.Reply p = http.put("/v1/ws/crash/docs/p-" + client, "{\"value\":{\"k\":" + k + "}}");
                            if (p.status() == 200) {
                                ackedPut.set(client, k);
                            }
                        } catch (RuntimeException e) {
                            return; // killed under us: that request is in doubt
                        }
                    }
                }));
            }
            Thread.sleep(150 + random.nextInt(500)); // let load run for a random while, then crash
            child.kill();
            running.set(false);
            for (Thread t : clients) {
                t.join();
            }
            maybeApplied = inFlight.get();
        }
    }
}

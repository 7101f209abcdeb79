package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
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
 * never hangs (each start has a hard timeout). For the reliability table, an increment below the
 * acknowledged count or a put older than the acknowledged one counts as lost, a counter above
 * acknowledged + in flight as duplicated.
 */
@Timeout(900)
@FaultTest
class DocCrashIT {
    private static final int LOOPS = ReliabilityReport.loops(4, 15);
    private static final int CLIENTS = 4;

    @TempDir
    Path dir;

    @Test
    @Scenario("kill -9 during doc incr and put (fsync)")
    void acknowledgedDocChangesShouldSurviveKillNine(ReliabilityRow row) throws Exception {
        long seed = System.nanoTime();
        System.out.println("DocCrashIT seed " + seed);
        Random random = new Random(seed);
        AtomicLong ackedIncrs = new AtomicLong();
        long maybeApplied = 0;
        AtomicLongArray ackedPut = new AtomicLongArray(CLIENTS);
        AtomicLongArray sentPut = new AtomicLongArray(CLIENTS);
        AtomicLong sent = new AtomicLong();
        AtomicLong ackedCount = new AtomicLong();
        long lost = 0;
        long duplicated = 0;
        List<String> args = List.of("--durability", "fsync", "--doc-capacity", "10000", "--auth", "false");
        for (int loop = 0; loop <= LOOPS; loop++) {
            ServerProcess child = ServerProcess.start(dir, args, List.of());
            Http http = new Http(child.url, null);
            long counter = http.get("/v1/ws/crash/docs/ctr").status() == 404 ? 0
                    : http.get("/v1/ws/crash/docs/ctr").json().get("value").get("n").asLong();
            lost += Math.max(0, ackedIncrs.get() - counter);
            duplicated += Math.max(0, counter - (ackedIncrs.get() + maybeApplied));
            row.runs(loop).operations(sent.get()).acknowledged(ackedCount.get()).history(lost, duplicated);
            assertTrue(counter >= ackedIncrs.get() && counter <= ackedIncrs.get() + maybeApplied,
                    "loop " + loop + ": counter " + counter + " outside [" + ackedIncrs.get() + ", " + (ackedIncrs.get() + maybeApplied) + "]");
            ackedIncrs.set(counter); // unacknowledged increments that did land now count as done
            maybeApplied = 0;
            for (int c = 0; c < CLIENTS; c++) {
                if (ackedPut.get(c) > 0) {
                    JsonNode doc = http.get("/v1/ws/crash/docs/p-" + c).json();
                    long k = doc.get("value").get("k").asLong();
                    lost += k < ackedPut.get(c) ? 1 : 0;
                    row.history(lost, duplicated);
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
                            sent.incrementAndGet();
                            Http.Reply r = http.post("/v1/ws/crash/docs/ctr/incr", "{\"path\":\"n\",\"delta\":1}");
                            if (r.status() == 200) {
                                ackedIncrs.incrementAndGet();
                                ackedCount.incrementAndGet();
                                inFlight.decrementAndGet();
                            }
                            long k = sentPut.get(client) + 1;
                            sentPut.set(client, k);
                            sent.incrementAndGet();
                            Http.Reply p = http.put("/v1/ws/crash/docs/p-" + client, "{\"value\":{\"k\":" + k + "}}");
                            if (p.status() == 200) {
                                ackedPut.set(client, k);
                                ackedCount.incrementAndGet();
                            }
                        } catch (RuntimeException e) {
                            return; // killed under us: that request is in doubt
                        }
                    }
                }));
            }
            // crash only once this server acknowledged something, then after a random while of load
            io.strand.app.testing.Progress.awaitGrowth(ackedCount::get, ackedCount.get(), java.time.Duration.ofSeconds(60));
            Thread.sleep(150 + random.nextInt(500)); // fault injection timing, not synchronisation
            child.kill();
            running.set(false);
            for (Thread t : clients) {
                t.join();
            }
            maybeApplied = inFlight.get();
        }
    }
}

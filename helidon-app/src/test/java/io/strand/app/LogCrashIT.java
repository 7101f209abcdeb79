package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * kill -9 during appends, many times: every acknowledged entry survives at the seq it was acked
 * with, seqs stay dense, and no entry (acked or not) appears twice. The history check counts every
 * lost, duplicated and missing seq for the reliability table, then requires each count to be 0.
 */
@Timeout(900)
@FaultTest
class LogCrashIT {
    private static final int LOOPS = ReliabilityReport.loops(4, 15);
    private static final int CLIENTS = 4;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"fsync", "os"})
    @Scenario("kill -9 during appends")
    void acknowledgedAppendsShouldSurviveKillNine(String durability, ReliabilityRow row) throws Exception {
        long seed = System.nanoTime();
        System.out.println("LogCrashIT " + durability + " seed " + seed);
        Random random = new Random(seed);
        Map<String, Long> acked = new ConcurrentHashMap<>(); // "c-n" -> seq
        AtomicLong sent = new AtomicLong();
        History worst = new History(0, 0, 0);
        int generation = 0;
        for (int loop = 0; loop < LOOPS; loop++) {
            ServerProcess child = ServerProcess.start(dir, List.of("--durability", durability, "--auth", "false"), List.of());
            Http http = new Http(child.url, null);
            worst = worst.max(verify(http, acked, durability + " loop " + loop));
            AtomicBoolean running = new AtomicBoolean(true);
            List<Thread> clients = new ArrayList<>();
            int gen = generation++;
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(Thread.ofVirtual().start(() -> {
                    for (int n = 0; running.get(); n++) {
                        String id = gen + "-" + client + "-" + n;
                        boolean batch = n % 5 == 0;
                        String body = batch
                                ? "{\"entries\":[{\"data\":{\"id\":\"" + id + "\",\"part\":0}},{\"data\":{\"id\":\"" + id + "\",\"part\":1}}]}"
                                : "{\"data\":{\"id\":\"" + id + "\",\"part\":0}}";
                        try {
                            sent.incrementAndGet();
                            Http.Reply r = http.post("/v1/ws/crash/logs/l/entries", body);
                            if (r.status() == 200) {
                                acked.put(id, r.json().get("firstSeq").asLong());
                            }
                        } catch (RuntimeException e) {
                            return; // the server died under us: this request is unacknowledged
                        }
                    }
                }));
            }
            // crash only once this server acknowledged something, then after a random while of load
            io.strand.app.testing.Progress.awaitGrowth(acked::size, acked.size(), java.time.Duration.ofSeconds(60));
            Thread.sleep(200 + random.nextInt(600)); // fault injection timing, not synchronisation
            child.kill();
            running.set(false);
            for (Thread t : clients) {
                t.join();
            }
        }
        ServerProcess last = ServerProcess.start(dir, List.of("--durability", durability, "--auth", "false"), List.of());
        try {
            worst = worst.max(verify(new Http(last.url, null), acked, durability + " final"));
            row.runs(LOOPS).operations(sent.get()).acknowledged(acked.size()).history(worst.lost, worst.duplicated, worst.gaps);
            assertEquals(new History(0, 0, 0), worst, "lost, duplicated and gaps over all restarts");
            assertTrue(acked.size() > LOOPS * 10, "the test made progress: " + acked.size() + " acked");
        } finally {
            last.kill();
        }
    }

    /** Lost, duplicated and missing seqs found by one history check. */
    private record History(long lost, long duplicated, long gaps) {
        History max(History o) {
            return new History(Math.max(lost, o.lost), Math.max(duplicated, o.duplicated), Math.max(gaps, o.gaps));
        }
    }

    /**
     * Reads the whole log and counts what breaks the contract: an acknowledged entry missing or at
     * another seq (lost), an entry present twice (duplicated), a seq missing from 1..head (gaps).
     * A torn batch fails at once.
     */
    private static History verify(Http http, Map<String, Long> acked, String when) {
        Map<String, Long> firstSeqOf = new HashMap<>();
        Map<String, Integer> parts = new HashMap<>();
        long duplicated = 0;
        long gaps = 0;
        long expect = 1;
        long next = 1;
        while (true) {
            JsonNode page = http.get("/v1/ws/crash/logs/l/entries?from=" + next + "&limit=1000").json();
            if (page.get("entries").isEmpty()) {
                break;
            }
            for (JsonNode e : page.get("entries")) {
                long seq = e.get("seq").asLong();
                if (seq != expect) {
                    System.out.println("LogCrashIT " + when + ": expected seq " + expect + ", read " + seq);
                    gaps += Math.max(1, seq - expect);
                }
                expect = seq + 1;
                String id = e.get("data").get("id").asText();
                int part = e.get("data").get("part").asInt();
                if (part == 0 && firstSeqOf.putIfAbsent(id, seq) != null) {
                    System.out.println("LogCrashIT " + when + ": entry " + id + " appears twice");
                    duplicated++;
                }
                parts.merge(id, 1, Integer::sum);
            }
            next = page.get("next").asLong();
        }
        long lost = 0;
        for (Map.Entry<String, Long> a : acked.entrySet()) {
            if (!a.getValue().equals(firstSeqOf.get(a.getKey()))) {
                System.out.println("LogCrashIT " + when + ": acknowledged " + a.getKey() + " at seq " + a.getValue()
                        + " lost or moved (now " + firstSeqOf.get(a.getKey()) + ")");
                lost++;
            }
        }
        for (Map.Entry<String, Integer> p : parts.entrySet()) {
            int n = Integer.parseInt(p.getKey().substring(p.getKey().lastIndexOf('-') + 1));
            int whole = n % 5 == 0 ? 2 : 1;
            assertEquals(0, p.getValue() % whole, when + ": batch " + p.getKey() + " must be whole"); // twice is counted above
        }
        return new History(lost, duplicated, gaps);
    }
}

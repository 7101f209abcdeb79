package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * kill -9 during appends, many times: every acknowledged entry survives at the seq it was acked
 * with, seqs stay dense, and no entry (acked or not) appears twice.
 */
@Timeout(300)
class LogCrashIT {
    private static final int LOOPS = 10;
    private static final int CLIENTS = 4;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"fsync", "os"})
    void acknowledgedAppendsShouldSurviveKillNine(String durability) throws Exception {
        long seed = System.nanoTime();
        System.out.println("LogCrashIT " + durability + " seed " + seed);
        Random random = new Random(seed);
        Map<String, Long> acked = new ConcurrentHashMap<>(); // "c-n" -> seq
        int generation = 0;
        for (int loop = 0; loop < LOOPS; loop++) {
            ServerProcess child = ServerProcess.start(dir, List.of("--durability", durability, "--auth", "false"), List.of());
            Http http = new Http(child.url, null);
            verify(http, acked, durability + " loop " + loop);
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
            Thread.sleep(200 + random.nextInt(600)); // let load run for a random while, then crash
            child.kill();
            running.set(false);
            for (Thread t : clients) {
                t.join();
            }
        }
        ServerProcess last = ServerProcess.start(dir, List.of("--durability", durability, "--auth", "false"), List.of());
        try {
            verify(new Http(last.url, null), acked, durability + " final");
            assertTrue(acked.size() > LOOPS * 10, "the test made progress: " + acked.size() + " acked");
        } finally {
            last.kill();
        }
    }

    private static void verify(Http http, Map<String, Long> acked, String when) {
        Map<String, Long> firstSeqOf = new HashMap<>();
        Map<String, Integer> parts = new HashMap<>();
        long expect = 1;
        long next = 1;
        while (true) {
            JsonNode page = http.get("/v1/ws/crash/logs/l/entries?from=" + next + "&limit=1000").json();
            if (page.get("entries").isEmpty()) {
                break;
            }
            for (JsonNode e : page.get("entries")) {
                assertEquals(expect++, e.get("seq").asLong(), when + ": seqs must be dense");
                String id = e.get("data").get("id").asText();
                int part = e.get("data").get("part").asInt();
                if (part == 0) {
                    Long prev = firstSeqOf.put(id, e.get("seq").asLong());
                    assertEquals(null, prev, when + ": entry " + id + " appears twice");
                }
                parts.merge(id, 1, Integer::sum);
            }
            next = page.get("next").asLong();
        }
        for (Map.Entry<String, Long> a : acked.entrySet()) {
            assertEquals(a.getValue(), firstSeqOf.get(a.getKey()), when + ": acknowledged " + a.getKey() + " lost or moved");
        }
        for (Map.Entry<String, Integer> p : parts.entrySet()) {
            int n = Integer.parseInt(p.getKey().substring(p.getKey().lastIndexOf('-') + 1));
            assertEquals(n % 5 == 0 ? 2 : 1, p.getValue(), when + ": batch " + p.getKey() + " must be whole");
        }
    }
}

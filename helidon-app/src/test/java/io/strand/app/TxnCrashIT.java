package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * kill -9 and txns: a txn is whole or absent after any crash, and every acknowledged txn is whole.
 * The crash loop runs {@code -Dstrand.crashLoops} loops per durability mode (3 by default; the
 * reliability runs use 10). The fail points stop the server at each step between a txn's parts.
 */
@Timeout(600)
class TxnCrashIT {
    private static final int LOOPS = Integer.getInteger("strand.crashLoops", 3);
    private static final int CLIENTS = 4;
    private static final String TXN = "{\"docs\":{\"d\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}]}},"
            + "\"append\":[{\"log\":\"la\",\"data\":\"a\"},{\"log\":\"lb\",\"entries\":[{\"data\":\"b1\"},{\"data\":\"b2\"}]},"
            + "{\"log\":\"lnew\",\"data\":\"n\"}]}"; // lnew: created by the txn itself

    @TempDir
    Path dir;

    /** A crash at each step between a txn's parts: after restart all of it is there, or (before its commit record) none. */
    @ParameterizedTest
    @CsvSource({
        "fsync, txn.afterDocs, 1",
        "os, txn.afterAppend, 1",
        "os, txn.beforeCommitRecord, 0",
        "fsync, txn.afterCommitRecord, 1",
    })
    void aTxnCutByACrashShouldBeWholeOrAbsentAfterRestart(String durability, String failpoint, int applied) throws Exception {
        List<String> args = List.of("--durability", durability, "--auth", "false");
        try (ServerProcess child = ServerProcess.start(dir, args, List.of("-Dstrand.failpoint=" + failpoint))) {
            Http http = new Http(child.url, null);
            // the state one txn would leave, written by plain ops (the fail point halts the first txn)
            assertEquals(200, http.put("/v1/ws/w/docs/d", "{\"value\":{\"n\":1}}").status());
            assertEquals(200, http.post("/v1/ws/w/logs/la/entries", "{\"data\":\"a\"}").status());
            assertEquals(200, http.post("/v1/ws/w/logs/lb/entries", "{\"entries\":[{\"data\":\"b1\"},{\"data\":\"b2\"}]}").status());
            try {
                http.post("/v1/ws/w/txn", TXN);
            } catch (RuntimeException died) {
                // halted at the fail point: no answer
            }
            assertEquals(137, child.process.waitFor(), "the child halts at " + failpoint);
        }
        try (ServerProcess child = ServerProcess.start(dir, args, List.of())) {
            Http http = new Http(child.url, null);
            assertEquals(1 + applied, http.get("/v1/ws/w/docs/d").json().get("value").get("n").asLong(), failpoint + ": doc");
            assertEquals(1 + applied, http.get("/v1/ws/w/logs/la").json().get("head").asLong(), failpoint + ": log la");
            assertEquals(2 + 2 * applied, http.get("/v1/ws/w/logs/lb").json().get("head").asLong(), failpoint + ": log lb");
            assertEquals(applied == 1 ? 200 : 404, http.get("/v1/ws/w/logs/lnew").status(), failpoint + ": log lnew");
            assertEquals(200, http.post("/v1/ws/w/txn", TXN).status(), "txns go on after the restart");
            assertEquals(2 + applied, http.get("/v1/ws/w/docs/d").json().get("value").get("n").asLong());
            assertEquals(4 + 2 * applied, http.get("/v1/ws/w/logs/lb").json().get("head").asLong());
            assertEquals(1 + applied, http.get("/v1/ws/w/logs/lnew").json().get("head").asLong());
        }
    }

    /**
     * Concurrent txns, each client bumping its own counter doc and appending one entry to each of two
     * logs, killed at random moments: after every restart each acknowledged txn is in both logs, and
     * per client the counter equals the number of its entries in each log (no txn half there).
     */
    @ParameterizedTest
    @ValueSource(strings = {"fsync", "os"})
    void concurrentTxnsShouldBeWholeAfterKillNine(String durability) throws Exception {
        long seed = System.nanoTime();
        System.out.println("TxnCrashIT " + durability + " seed " + seed + " loops " + LOOPS);
        Random random = new Random(seed);
        Set<String> acked = ConcurrentHashMap.newKeySet();
        List<String> args = List.of("--durability", durability, "--auth", "false");
        for (int loop = 0; loop < LOOPS; loop++) {
            ServerProcess child = ServerProcess.start(dir, args, List.of());
            Http http = new Http(child.url, null);
            verify(http, acked, durability + " loop " + loop);
            AtomicBoolean running = new AtomicBoolean(true);
            List<Thread> clients = new ArrayList<>();
            int gen = loop;
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(Thread.ofVirtual().start(() -> {
                    for (int n = 0; running.get(); n++) {
                        String id = gen + "-" + client + "-" + n;
                        String entry = "{\"data\":{\"id\":\"" + id + "\",\"c\":" + client + "}}";
                        String body = "{\"docs\":{\"c" + client + "\":{\"ops\":[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1}]}},"
                                + "\"append\":[{\"log\":\"ta\",\"entries\":[" + entry + "]},{\"log\":\"tb\",\"entries\":[" + entry + "]}]}";
                        try {
                            if (http.post("/v1/ws/crash/txn", body).status() == 200) {
                                acked.add(id);
                            }
                        } catch (RuntimeException e) {
                            return; // the server died under us: unacknowledged
                        }
                    }
                }));
            }
            int before = acked.size();
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (acked.size() < before + 5 && System.nanoTime() < deadline) { // txns flow (a busy box starts slowly)
                Thread.sleep(5);
            }
            Thread.sleep(random.nextInt(600)); // then a random while more, and crash
            child.kill();
            running.set(false);
            for (Thread t : clients) {
                t.join();
            }
        }
        try (ServerProcess last = ServerProcess.start(dir, args, List.of())) {
            verify(new Http(last.url, null), acked, durability + " final");
            assertTrue(acked.size() > LOOPS * 10, "the test made progress: " + acked.size() + " acked");
        }
    }

    private static void verify(Http http, Set<String> acked, String when) {
        Map<String, Integer> a = ids(http, "ta", when);
        Map<String, Integer> b = ids(http, "tb", when);
        assertEquals(a.keySet(), b.keySet(), when + ": every txn is in both logs or in neither");
        for (String id : acked) {
            assertTrue(a.containsKey(id), when + ": acknowledged txn " + id + " lost");
        }
        for (int c = 0; c < CLIENTS; c++) {
            int client = c;
            long entries = a.values().stream().filter(v -> v == client).count();
            JsonNode doc = http.get("/v1/ws/crash/docs/c" + c).json();
            long n = doc.has("value") ? doc.get("value").get("n").asLong() : 0;
            assertEquals(entries, n, when + ": client " + c + "'s counter vs its txns' entries");
        }
    }

    /** id → client of every entry in the log; each id at most once. */
    private static Map<String, Integer> ids(Http http, String log, String when) {
        Map<String, Integer> ids = new HashMap<>();
        long next = 1;
        while (true) {
            JsonNode page = http.get("/v1/ws/crash/logs/" + log + "/entries?from=" + next + "&limit=1000").json();
            if (page.get("entries").isEmpty()) {
                return ids;
            }
            for (JsonNode e : page.get("entries")) {
                Integer prev = ids.put(e.get("data").get("id").asText(), e.get("data").get("c").asInt());
                assertNull(prev, when + ": " + e + " appears twice in " + log);
            }
            next = page.get("next").asLong();
        }
    }
}

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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * kill -9 and txns: a txn is whole or absent after any crash, and every acknowledged txn is whole.
 * The crash loop runs 3 loops per durability mode by default, 10 under the reliability profile
 * ({@code mvn verify -Preliability}). The fail points stop the server at each step between a txn's parts.
 */
@Timeout(900)
@FaultTest
class TxnCrashIT {
    private static final int LOOPS = ReliabilityReport.loops(3, 10);
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
    @Scenario("txn cut at a fail point")
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
    @Scenario("kill -9 during txns")
    void concurrentTxnsShouldBeWholeAfterKillNine(String durability, ReliabilityRow row) throws Exception {
        long seed = System.nanoTime();
        System.out.println("TxnCrashIT " + durability + " seed " + seed + " loops " + LOOPS);
        Random random = new Random(seed);
        Set<String> acked = ConcurrentHashMap.newKeySet();
        AtomicLong sent = new AtomicLong();
        Broken worst = new Broken(0, 0, 0);
        List<String> args = List.of("--durability", durability, "--auth", "false");
        for (int loop = 0; loop < LOOPS; loop++) {
            ServerProcess child = ServerProcess.start(dir, args, List.of());
            Http http = new Http(child.url, null);
            worst = worst.max(verify(http, acked, durability + " loop " + loop));
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
                            sent.incrementAndGet();
                            if (http.post("/v1/ws/crash/txn", body).status() == 200) {
                                acked.add(id);
                            }
                        } catch (RuntimeException e) {
                            return; // the server died under us: unacknowledged
                        }
                    }
                }));
            }
            // txns flow (a busy box starts slowly)
            io.strand.app.testing.Progress.awaitGrowth(acked::size, acked.size() + 4, java.time.Duration.ofSeconds(60));
            Thread.sleep(random.nextInt(600)); // then a random while more, and crash
            child.kill();
            running.set(false);
            for (Thread t : clients) {
                t.join();
            }
        }
        try (ServerProcess last = ServerProcess.start(dir, args, List.of())) {
            worst = worst.max(verify(new Http(last.url, null), acked, durability + " final"));
            row.runs(LOOPS).operations(sent.get()).acknowledged(acked.size()).history(worst.lost, worst.duplicated)
                    .note("torn txns " + worst.torn);
            assertEquals(new Broken(0, 0, 0), worst, "lost, duplicated and torn txns over all restarts");
            assertTrue(acked.size() > LOOPS * 10, "the test made progress: " + acked.size() + " acked");
        }
    }

    /** Acknowledged txns missing (lost), entries present twice (duplicated), txns only partly there (torn). */
    private record Broken(long lost, long duplicated, long torn) {
        Broken max(Broken o) {
            return new Broken(Math.max(lost, o.lost), Math.max(duplicated, o.duplicated), Math.max(torn, o.torn));
        }
    }

    /**
     * Reads both logs and the counters: an acknowledged txn missing from a log is lost; an id twice in
     * a log is duplicated; an id in one log only, or a client whose counter differs from its entries
     * in a log, is a torn txn.
     */
    private static Broken verify(Http http, Set<String> acked, String when) {
        long[] duplicated = {0};
        Map<String, Integer> a = ids(http, "ta", when, duplicated);
        Map<String, Integer> b = ids(http, "tb", when, duplicated);
        long lost = acked.stream().filter(id -> !a.containsKey(id) || !b.containsKey(id)).count();
        long torn = a.keySet().stream().filter(id -> !b.containsKey(id)).count() + b.keySet().stream().filter(id -> !a.containsKey(id)).count();
        for (int c = 0; c < CLIENTS; c++) {
            int client = c;
            long inA = a.values().stream().filter(v -> v == client).count();
            long inB = b.values().stream().filter(v -> v == client).count();
            JsonNode doc = http.get("/v1/ws/crash/docs/c" + c).json();
            long n = doc.has("value") ? doc.get("value").get("n").asLong() : 0;
            if (n != inA || n != inB) {
                System.out.println("TxnCrashIT " + when + ": client " + c + " counter " + n + ", entries " + inA + " / " + inB);
                torn += Math.max(Math.abs(n - inA), Math.abs(n - inB));
            }
        }
        return new Broken(lost, duplicated[0], torn);
    }

    /** id → client of every entry in the log, counting ids seen twice into {@code duplicated[0]}. */
    private static Map<String, Integer> ids(Http http, String log, String when, long[] duplicated) {
        Map<String, Integer> ids = new HashMap<>();
        long next = 1;
        while (true) {
            JsonNode page = http.get("/v1/ws/crash/logs/" + log + "/entries?from=" + next + "&limit=1000").json();
            if (page.get("entries").isEmpty()) {
                return ids;
            }
            for (JsonNode e : page.get("entries")) {
                if (ids.put(e.get("data").get("id").asText(), e.get("data").get("c").asInt()) != null) {
                    System.out.println("TxnCrashIT " + when + ": " + e + " appears twice in " + log);
                    duplicated[0]++;
                }
            }
            next = page.get("next").asLong();
        }
    }
}

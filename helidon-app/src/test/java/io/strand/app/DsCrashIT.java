package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.DsClient;
import io.strand.app.testing.DsClient.Reply;
import io.strand.core.Json;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 during Durable Streams appends (JSON, bytes, and an idempotent producer), many times:
 * every acknowledged append is present exactly once, a producer's retry after the crash is
 * applied once whether or not the crash beat its ack, and producer state, closure and TTL survive.
 */
@Timeout(300)
class DsCrashIT {
    private static final int LOOPS = 6;
    private static final String J = "/ds/crash/j";
    private static final String B = "/ds/crash/b";
    private static final String P = "/ds/crash/p";
    private static final String C = "/ds/crash/closed";
    private static final String T = "/ds/crash/ttl";

    @TempDir
    Path dir;

    static Reply send(String base, String method, String path, String body, String... headers) {
        return new DsClient(base).send(method, path, body, headers);
    }

    @Test
    void acknowledgedAppendsProducerStateClosureAndTtlShouldSurviveKillNine() throws Exception {
        long seed = System.nanoTime();
        System.out.println("DsCrashIT seed " + seed);
        Random random = new Random(seed);
        Set<String> ackedJson = ConcurrentHashMap.newKeySet();
        Set<String> ackedBytes = ConcurrentHashMap.newKeySet();
        AtomicLong producerAcked = new AtomicLong(-1); // highest acknowledged Producer-Seq
        AtomicLong producerSent = new AtomicLong(-1);  // highest Producer-Seq sent (maybe applied, maybe not)
        for (int loop = 0; loop < LOOPS; loop++) {
            ServerProcess child = ServerProcess.start(dir, List.of("--durability", "fsync", "--auth", "false"), List.of());
            String url = child.url;
            if (loop == 0) {
                assertEquals(201, send(url, "PUT", J, null, "Content-Type", "application/json").status());
                assertEquals(201, send(url, "PUT", B, null, "Content-Type", "application/octet-stream").status());
                assertEquals(201, send(url, "PUT", P, null, "Content-Type", "application/json").status());
                assertEquals(201, send(url, "PUT", C, "final", "Content-Type", "text/plain", "Stream-Closed", "true").status());
                assertEquals(201, send(url, "PUT", T, null, "Content-Type", "text/plain", "Stream-TTL", "3600").status());
            }
            verify(url, ackedJson, ackedBytes, producerAcked.get(), "loop " + loop);
            // the producer first retries whatever it sent last: applied once, whether or not the crash beat the ack
            long next = producerSent.get() + 1;
            if (producerSent.get() >= 0) {
                Reply retry = producerAppend(url, producerSent.get());
                assertTrue(retry.status() == 200 || retry.status() == 204, "retry of seq " + producerSent.get() + ": " + retry.status());
                producerAcked.set(producerSent.get());
                if (producerAcked.get() >= 0) {
                    assertEquals(204, producerAppend(url, producerAcked.get()).status(), "an acknowledged seq is a duplicate after restart");
                }
            }
            AtomicBoolean running = new AtomicBoolean(true);
            int gen = loop;
            List<Thread> clients = new ArrayList<>();
            clients.add(Thread.ofVirtual().start(() -> {
                for (int n = 0; running.get(); n++) {
                    String id = gen + "-" + n;
                    try {
                        String body = n % 4 == 0 ? "[{\"id\":\"" + id + "a\"},{\"id\":\"" + id + "b\"}]" : "{\"id\":\"" + id + "\"}";
                        if (send(url, "POST", J, body, "Content-Type", "application/json").status() == 204) {
                            if (n % 4 == 0) {
                                ackedJson.add(id + "a");
                                ackedJson.add(id + "b");
                            } else {
                                ackedJson.add(id);
                            }
                        }
                    } catch (RuntimeException e) {
                        return;
                    }
                }
            }));
            clients.add(Thread.ofVirtual().start(() -> {
                for (int n = 0; running.get(); n++) {
                    String id = "b" + gen + "-" + n;
                    try {
                        if (send(url, "POST", B, id + ";", "Content-Type", "application/octet-stream").status() == 204) {
                            ackedBytes.add(id);
                        }
                    } catch (RuntimeException e) {
                        return;
                    }
                }
            }));
            long first = next;
            clients.add(Thread.ofVirtual().start(() -> {
                for (long seq = first; running.get(); seq++) {
                    producerSent.set(seq);
                    try {
                        if (producerAppend(url, seq).status() == 200) {
                            producerAcked.set(seq);
                        }
                    } catch (RuntimeException e) {
                        return;
                    }
                }
            }));
            Thread.sleep(300 + random.nextInt(700)); // let load run for a random while, then crash
            child.kill();
            running.set(false);
            for (Thread t : clients) {
                t.join();
            }
        }
        ServerProcess last = ServerProcess.start(dir, List.of("--durability", "fsync", "--auth", "false"), List.of());
        try {
            verify(last.url, ackedJson, ackedBytes, producerAcked.get(), "final");
            assertTrue(ackedJson.size() > LOOPS * 5 && ackedBytes.size() > LOOPS * 5 && producerAcked.get() > LOOPS,
                    "the test made progress: " + ackedJson.size() + " JSON, " + ackedBytes.size() + " byte appends, producer seq "
                            + producerAcked.get());
        } finally {
            last.kill();
        }
    }

    @Test
    void producerRetryShouldBeADuplicateWhenTheCrashCameAfterTheAppendButBeforeTheStreamRow() throws Exception {
        try (ServerProcess child = ServerProcess.start(dir, List.of("--auth", "false"), List.of("-Dstrand.failpoint=ds.afterAppend"))) {
            assertEquals(201, send(child.url, "PUT", P, null, "Content-Type", "application/json").status());
            assertThrows(IllegalStateException.class, () -> producerAppend(child.url, 0), "the server halts before it answers");
            child.process.waitFor(30, TimeUnit.SECONDS);
        }
        ServerProcess restarted = ServerProcess.start(dir, List.of("--auth", "false"), List.of());
        try {
            Reply retry = producerAppend(restarted.url, 0);
            assertEquals(204, retry.status(), "the retry of an append the log already holds is a duplicate");
            assertEquals("0", retry.header("Producer-Seq"));
            assertEquals("[{\"seq\":0}]", new String(readAll(restarted.url, P), StandardCharsets.UTF_8));
            assertEquals(200, producerAppend(restarted.url, 1).status(), "and the producer goes on from there");
        } finally {
            restarted.kill();
        }
    }

    private static Reply producerAppend(String url, long seq) {
        return send(url, "POST", P, "{\"seq\":" + seq + "}", "Content-Type", "application/json", "Producer-Id", "w",
                "Producer-Epoch", "1", "Producer-Seq", Long.toString(seq));
    }

    private static void verify(String url, Set<String> ackedJson, Set<String> ackedBytes, long producerAcked, String when) {
        Set<String> seen = new HashSet<>();
        for (JsonNode m : Json.parse(readAll(url, J))) {
            assertTrue(seen.add(m.get("id").asText()), when + ": JSON message " + m + " appears twice");
        }
        assertTrue(seen.containsAll(ackedJson), when + ": an acknowledged JSON message was lost");
        Set<String> chunks = new HashSet<>();
        String bytes = new String(readAll(url, B), StandardCharsets.UTF_8);
        for (String c : bytes.isEmpty() ? new String[0] : bytes.split(";")) {
            assertTrue(chunks.add(c), when + ": byte append " + c + " appears twice");
        }
        assertTrue(chunks.containsAll(ackedBytes), when + ": an acknowledged byte append was lost");
        long expect = 0;
        for (JsonNode m : Json.parse(readAll(url, P))) {
            assertEquals(expect++, m.get("seq").asLong(), when + ": producer seqs must be applied once each, in order");
        }
        assertTrue(expect - 1 >= producerAcked, when + ": acknowledged producer seq " + producerAcked + " lost (have " + (expect - 1) + ")");
        if (producerAcked >= 0) {
            Reply stale = send(url, "POST", P, "{}", "Content-Type", "application/json", "Producer-Id", "w",
                    "Producer-Epoch", "0", "Producer-Seq", "0");
            assertEquals(403, stale.status(), when + ": the producer's epoch survived");
        }
        Reply closed = send(url, "POST", C, "more", "Content-Type", "text/plain");
        assertEquals(409, closed.status(), when + ": closure survived");
        assertEquals("final", new String(readAll(url, C), StandardCharsets.UTF_8));
        Reply head = send(url, "HEAD", T, null);
        assertEquals(200, head.status());
        assertEquals("3600", head.header("Stream-TTL"), when + ": TTL survived");
    }

    /** Every byte of a stream, following Stream-Next-Offset until up to date (JSON pages merged into one array). */
    private static byte[] readAll(String url, String path) {
        String offset = "-1";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<JsonNode> messages = new ArrayList<>();
        boolean json = false;
        while (true) {
            Reply r = send(url, "GET", path + "?offset=" + offset, null);
            assertEquals(200, r.status(), path);
            json = r.header("Content-Type").startsWith("application/json");
            if (json) {
                Json.parse(r.body()).forEach(messages::add);
            } else {
                out.writeBytes(r.body());
            }
            offset = r.header("Stream-Next-Offset");
            if ("true".equals(r.header("Stream-Up-To-Date"))) {
                break;
            }
        }
        return json ? Json.bytes(messages) : out.toByteArray();
    }
}

package io.strand.app.cluster;

import static io.strand.app.testing.ColdLogs.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.DsClient;
import io.strand.app.testing.DsClient.Reply;
import io.strand.core.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durable Streams on a cluster (SPEC §13, §14), three real nodes: a stream made through a
 * follower; a long-poll on one node woken by an append through another; an idempotent producer
 * appending through random nodes while the shard's leader is SIGKILLed, each try retried through
 * another node until answered; closure; a fork; a sliding-TTL stream expired by the leader on every
 * node. At the end every node serves the same messages, each producer seq exactly once, in order.
 */
@Timeout(300)
@FaultTest
class ClusterDsIT {
    private static final String JSON = "application/json";
    @TempDir
    Path dir;
    @AutoClose
    ClusterNodes nodes;

    private Reply send(String via, String method, String path, String body, String... headers) {
        return new DsClient(nodes.url(via)).send(method, path, body, headers);
    }

    /** {@link #send}, tried again through the next live node while the answer is 503 or the request fails (a node killed under it). */
    private Reply retried(List<String> live, int start, String method, String path, String body, String... headers) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        for (int i = start; ; i++) {
            String via = live.get(Math.floorMod(i, live.size()));
            try {
                Reply r = send(via, method, path, body, headers);
                if (r.status() != 503 || System.nanoTime() > deadline) {
                    return r;
                }
            } catch (IllegalStateException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L); // retry pace, not a wait for an event
        }
    }

    /** Producer "p" (epoch 0) appends {@code {"n":seq}}: 200 when applied, 204 when it already was. */
    private Reply produce(List<String> live, int start, String path, long seq) {
        Reply r = retried(live, start, "POST", path, "{\"n\":" + seq + "}", "Content-Type", JSON, "Producer-Id", "p",
                "Producer-Epoch", "0", "Producer-Seq", String.valueOf(seq));
        assertTrue(r.status() == 200 || r.status() == 204, "producer seq " + seq + ": " + r.status() + " " + r.text());
        return r;
    }

    private static Reply untilNot503(java.util.function.Supplier<Reply> call) {
        return ClusterNodes.untilNot503(call, Reply::status);
    }

    /** The stream's messages as node {@code id} serves them (catch-up from the start), and whether it says closed. */
    private List<JsonNode> messages(String id, String path) {
        List<JsonNode> out = new ArrayList<>();
        String offset = "-1";
        for (int i = 0; i < 1000; i++) {
            String at = offset;
            Reply r = untilNot503(() -> send(id, "GET", path + "?offset=" + at, null));
            assertEquals(200, r.status(), id + ": " + r.text());
            Json.parse(r.body()).forEach(out::add);
            offset = r.header("Stream-Next-Offset");
            if ("true".equals(r.header("Stream-Up-To-Date"))) {
                return out;
            }
        }
        throw new AssertionError(id + ": never up to date");
    }

    @Test
    @Scenario("Durable Streams on a cluster across a SIGKILL of the shard's leader")
    void streamsShouldBeTheSameOnEveryNodeAndEachProducerSeqLandOnceAcrossAKill(ReliabilityRow row) throws Exception {
        long seed = System.nanoTime();
        System.out.println("ClusterDsIT seed " + seed);
        Random random = new Random(seed);
        nodes = new ClusterNodes(dir, 3, 4, List.of("--ds-long-poll-timeout", "10s"));
        nodes.startAll();
        String ws = nodes.workspaceLedBy("n1", "ds-");
        String chat = "/ds/" + ws + "/rooms/chat";
        List<String> all = List.of("n1", "n2", "n3");

        Reply made = untilNot503(() -> send("n2", "PUT", chat, null, "Content-Type", JSON));
        assertEquals(201, made.status(), made.text());
        assertEquals(200, send("n3", "PUT", chat, null, "Content-Type", JSON).status(), "an identical create on another node");

        // a long-poll on n3 at the tail, woken by an append through n2 (the wait is 10 s: an answer before it is the wake)
        String tail = made.header("Stream-Next-Offset");
        CompletableFuture<Reply> poll = CompletableFuture.supplyAsync(() -> send("n3", "GET", chat + "?offset=" + tail + "&live=long-poll", null));
        // a round trip while the poll is out, so it is (almost always) parked before the append: without
        // a wake it then waits its 10 s and the get below fails (a poll that arrived after the append
        // would pass without one, which is why this is not a proof on its own)
        await("n3 answering while the long-poll is out", Duration.ofSeconds(10), () -> {
            Reply head = send("n3", "HEAD", chat, null);
            return head.status() == 200 && !poll.isDone();
        });
        assertEquals(200, produce(all, 1, chat, 0).status());
        Reply woken = poll.get(8, TimeUnit.SECONDS);
        assertEquals(200, woken.status(), woken.text());
        assertEquals("[{\"n\":0}]", woken.text());

        // the producer goes on through random nodes; n1 (the shard's leader) is SIGKILLed midway
        int total = 60;
        int killAt = 20 + random.nextInt(20);
        List<String> live = new ArrayList<>(all);
        int duplicates = 0;
        for (long seq = 1; seq < total; seq++) {
            if (seq == killAt) {
                nodes.kill("n1");
                live.remove("n1");
                // the last acknowledged seq again, through another node: a duplicate, not a second message
                assertEquals(204, produce(live, random.nextInt(2), chat, seq - 1).status(), "a retry after the kill");
                duplicates++;
            }
            produce(live, random.nextInt(live.size()), chat, seq);
        }
        Reply stale = retried(live, 0, "POST", chat, "{}", "Content-Type", JSON, "Producer-Id", "p", "Producer-Epoch", "0",
                "Producer-Seq", String.valueOf(total + 5));
        assertEquals(409, stale.status(), "a gap in producer seqs: " + stale.text());
        Reply closed = retried(live, 1, "POST", chat, null, "Stream-Closed", "true");
        assertEquals(204, closed.status(), closed.text());

        // a fork through n3, of the closed stream up to seq 10
        String fork = "/ds/" + ws + "/rooms/chat-fork";
        Reply forked = retried(live, 1, "PUT", fork, null, "Content-Type", JSON, "Stream-Forked-From", chat,
                "Stream-Fork-Offset", String.format("%016d_%016d", 10, 0));
        assertEquals(201, forked.status(), forked.text());

        // a sliding-TTL stream nobody touches: the (new) leader expires it, every live node answers 404
        String brief = "/ds/" + ws + "/brief";
        assertEquals(201, retried(live, 0, "PUT", brief, "[1]", "Content-Type", JSON, "Stream-TTL", "1").status());
        for (String id : live) {
            await(id + " answers 404 for the expired stream", Duration.ofSeconds(20),
                    () -> send(id, "HEAD", brief, null).status() == 404);
        }

        nodes.start("n1");
        String expected = null;
        for (String id : all) {
            List<JsonNode> got = messages(id, chat);
            assertEquals(total, got.size(), id + " serves each producer seq once: " + got);
            for (int i = 0; i < total; i++) {
                assertEquals(i, got.get(i).path("n").asInt(), id + ": message " + i + " in producer order");
            }
            Reply head = untilNot503(() -> send(id, "HEAD", chat, null));
            assertEquals("true", head.header("Stream-Closed"), id + ": closed");
            assertEquals(got.subList(0, 10).toString(), messages(id, fork).toString(), id + ": the fork holds seqs 1..10");
            assertEquals(404, untilNot503(() -> send(id, "HEAD", brief, null)).status(), id + ": expired");
            if (expected == null) {
                expected = got.toString();
            } else {
                assertEquals(expected, got.toString(), id + " serves other messages");
            }
        }
        row.runs(1).operations(total + duplicates).acknowledged(total).history(0, 0, 0)
                .note("1 kill at producer seq " + killAt + "; the same " + total + " messages, fork and expiry on every node");
    }
}

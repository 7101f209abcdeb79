package io.strand.app.cluster;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.logPath;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A retention policy across a leader's SIGKILL (three real nodes): the policy is set through a
 * follower, the leader (n1) trims every replica to it, then is killed; the next leader goes on
 * trimming as more entries come, n1 comes back (rebuilt from its snapshot and the log) with the
 * same first, and a trim through it holds on all three. Every node serves the same entries from
 * its first to the head, dense.
 */
@Timeout(300)
@FaultTest
class ClusterRetentionIT {
    private static final String LOG = "kept";
    @TempDir
    Path dir;
    @AutoClose
    ClusterNodes nodes;

    /** {@code n} entries as producer "it"'s seq {@code batch} ({@link ColdLogs#producerBatch}), retried on 503. */
    private void append(String via, String ws, int batch, int n) {
        String body = ColdLogs.producerBatch("it", batch, n);
        Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http(via).post(logPath(ws, LOG) + "/entries", body));
        assertEquals(200, r.status(), r.body());
    }

    /** Each node's last log info seen, for a failed wait's message. */
    private final java.util.Map<String, String> lastInfo = new java.util.concurrent.ConcurrentHashMap<>();

    private long first(String id, String ws) {
        Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http(id).get(logPath(ws, LOG)));
        lastInfo.put(id, r.status() + " " + r.body());
        return r.status() == 200 ? r.json().path("first").asLong() : -1;
    }

    /** Waits until node {@code id} reports {@code first}; a timeout names what each node last reported. */
    private void awaitFirst(String id, String ws, long first, String what, Duration timeout) {
        try {
            await(what, timeout, () -> first(id, ws) == first);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last log info per node: " + lastInfo, e);
        }
    }

    /** Node {@code id}'s entries from its first to the head, checked dense; returned as text to compare nodes. */
    private String entriesFrom(String id, String ws, long first, long head) {
        List<JsonNode> out = new ArrayList<>();
        long next = first;
        while (next <= head) {
            long from = next;
            Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http(id).get(logPath(ws, LOG) + "/entries?from=" + from + "&limit=100"));
            assertEquals(200, r.status(), id + ": " + r.body());
            for (JsonNode e : r.json().path("entries")) {
                assertEquals(first + out.size(), e.path("seq").asLong(), id + ": dense from first");
                out.add(e);
            }
            next = r.json().path("next").asLong();
        }
        assertEquals(head - first + 1, out.size(), id);
        return out.toString();
    }

    @Test
    @Scenario("cluster retention policy across a SIGKILL of the shard's leader")
    void theNextLeaderShouldGoOnTrimmingToThePolicyAndTheKilledNodeComeBackWithTheSameFirst(ReliabilityRow row) throws Exception {
        nodes = new ClusterNodes(dir, 3, 4, List.of("--retention-check-interval", "1s"));
        nodes.startAll();
        String ws = nodes.workspaceLedBy("n1", "ret-");
        for (int b = 1; b <= 10; b++) {
            append("n2", ws, b, 10);
        }
        Http.Reply put = ClusterNodes.untilNot503(() -> nodes.http("n3").put(logPath(ws, LOG) + "/retention", "{\"maxEntries\":20}"));
        assertEquals(200, put.status(), put.body());
        for (String id : List.of("n1", "n2", "n3")) {
            awaitFirst(id, ws, 81, id + " trimmed to the newest 20", Duration.ofSeconds(30));
        }

        nodes.kill("n1");
        for (int b = 11; b <= 13; b++) {
            append("n2", ws, b, 10); // retried through the election; the producer seq makes it land once
        }
        for (String id : List.of("n2", "n3")) {
            awaitFirst(id, ws, 111, id + " trimmed by the next leader", Duration.ofSeconds(60));
        }

        nodes.start("n1");
        awaitFirst("n1", ws, 111, "n1 back with the same first", Duration.ofSeconds(120));
        Http.Reply trim = ClusterNodes.untilNot503(() -> nodes.http("n1").post(logPath(ws, LOG) + "/trim", "{\"before\":121}"));
        assertEquals(200, trim.status(), trim.body());
        assertEquals(121, trim.json().path("first").asLong(), trim.body());
        String expected = null;
        for (String id : List.of("n1", "n2", "n3")) {
            assertEquals(121, first(id, ws), id);
            String entries = entriesFrom(id, ws, 121, 130);
            if (expected == null) {
                expected = entries;
            } else {
                assertEquals(expected, entries, id + " serves other entries");
            }
        }
        row.runs(1).operations(13).acknowledged(13).history(0, 0, 0).note("1 kill; first 81 → 111 → 121 on every node");
    }
}

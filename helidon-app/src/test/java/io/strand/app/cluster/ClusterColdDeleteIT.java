package io.strand.app.cluster;

import static io.strand.app.testing.ColdLogs.await;
import static io.strand.app.testing.ColdLogs.logPath;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.Http;
import io.strand.coldtier.Manifest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log deleted in a cluster with a shared cold tier (SPEC §13), its shard's leader killed in the
 * middle of the cold clean-up: n1 leads the workspace's shard and halts (fail point
 * {@code cold.deleted.afterEmpty}, like SIGKILL) right after it emptied the shared manifest and
 * before it recorded that in the shard's log. The delete (taken by a follower) is still answered,
 * the next leader finishes the clean-up, the name is used again and rolled, and after n1 comes back
 * (and replays the log) all three nodes read only the new log's entries and note no pending delete.
 */
@Timeout(300)
@FaultTest
class ClusterColdDeleteIT {
    private static final String LOG = "events";
    private static final String FAIL_POINT = "-Dstrand.failpoint=cold.deleted.afterEmpty";
    @TempDir
    Path dir;
    ClusterNodes nodes;
    Path shared;

    @AfterEach
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    /** {@code n} entries sent by {@code producer} as its seq {@code batch} ({@link ColdLogs#producerBatch}), retried on 503. */
    private void append(String via, String ws, String producer, int batch, int n) {
        String body = ColdLogs.producerBatch(producer, batch, n);
        Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http(via).post(logPath(ws, LOG) + "/entries", body));
        assertEquals(200, r.status(), r.body());
    }

    /** Every entry of the log from node {@code id}, forward from seq 1, checked dense. */
    private List<JsonNode> readAll(String id, String ws) {
        List<JsonNode> out = new ArrayList<>();
        long next = 1;
        while (true) {
            long from = next;
            Http.Reply r = ClusterNodes.untilNot503(() -> nodes.http(id).get(logPath(ws, LOG) + "/entries?from=" + from + "&limit=400"));
            assertEquals(200, r.status(), id + ": " + r.body());
            JsonNode page = r.json();
            if (page.path("entries").isEmpty()) {
                return out;
            }
            for (JsonNode e : page.path("entries")) {
                assertEquals(out.size() + 1, e.path("seq").asLong(), id + ": seqs dense");
                out.add(e);
            }
            next = page.path("next").asLong();
        }
    }

    private int coldSegments(String id, String ws) {
        Http.Reply r = nodes.http(id).get(logPath(ws, LOG) + "/cold");
        return r.status() == 200 ? r.json().path("segments").asInt() : -1;
    }

    @Test
    @Scenario("cluster log delete with --cold, leader killed between emptying the manifest and recording it")
    void aLeaderKilledMidwayThroughADeletesColdCleanUpShouldLeaveItToTheNextLeader(ReliabilityRow row) throws Exception {
        shared = Files.createDirectories(dir.resolve("shared-cold"));
        nodes = new ClusterNodes(dir, 3, 4, List.of("--cold", shared.toUri().toString(), "--hot-max-entries", "300",
                "--hot-roll-cycle", "secondly"));
        List<Thread> starts = new ArrayList<>();
        List<Exception> failed = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (String id : List.of("n1", "n2", "n3")) {
            starts.add(Thread.ofVirtual().start(() -> {
                try {
                    nodes.start(id, nodes.members(), List.of(), id.equals("n1") ? List.of(FAIL_POINT) : List.of());
                } catch (IOException e) {
                    failed.add(e);
                }
            }));
        }
        for (Thread t : starts) {
            t.join();
        }
        assertTrue(failed.isEmpty(), failed.toString());
        String ws = nodes.workspaceLedBy("n1", "del-");
        long n1 = nodes.pid("n1");

        for (int b = 1; b <= 10; b++) {
            append("n2", ws, "old", b, 100);
            LockSupport.parkNanos(120_000_000); // spreads the entries over several one-second hot files
        }
        await("n1 rolled the log", Duration.ofSeconds(60), () -> coldSegments("n1", ws) > 0);
        Manifest before = ColdLogs.storedManifest(shared, ws, LOG);
        assertTrue(before.term() >= 1 && !before.segments().isEmpty(), before.toString());

        Http.Reply delete = ClusterNodes.untilNot503(() -> nodes.http("n2").delete(logPath(ws, LOG)));
        assertEquals(200, delete.status(), "the delete is committed whatever happens to the clean-up: " + delete.body());
        await("n1 halted at the fail point", Duration.ofSeconds(30), () -> ProcessHandle.of(n1).map(p -> !p.isAlive()).orElse(true));
        nodes.kill("n1");
        System.out.println("ClusterColdDeleteIT: n1 (leader of " + ws + ") halted after emptying the manifest, before recording it");

        await("the next leader recorded the clean-up", Duration.ofSeconds(60), () -> {
            Http.Reply r = nodes.http("n2").get("/v1/cluster/shard?ws=" + ws);
            String leader = r.json().path("leader").asText("");
            return !leader.isEmpty() && !leader.equals("n1") && noPendingDelete(leader, ws);
        });
        Manifest emptied = ColdLogs.storedManifest(shared, ws, LOG);
        assertTrue(emptied.segments().isEmpty() && emptied.generation() > before.generation(), emptied.toString());
        try (Stream<Path> objects = Files.walk(shared.resolve(ws).resolve(LOG))) {
            assertEquals(List.of("manifest.json"), objects.filter(Files::isRegularFile).map(f -> f.getFileName().toString()).toList());
        }
        for (String id : List.of("n2", "n3")) {
            assertEquals(404, ClusterNodes.untilNot503(() -> nodes.http(id).get(logPath(ws, LOG))).status(), id);
        }

        // the name again, rolled by the new leader, then n1 back
        for (int b = 1; b <= 5; b++) {
            append("n3", ws, "again", b, 100);
            LockSupport.parkNanos(120_000_000);
        }
        await("the new log rolled", Duration.ofSeconds(60), () -> coldSegments("n3", ws) > 0);
        nodes.start("n1");
        await("n1 caught up", Duration.ofSeconds(120), () -> readAll("n1", ws).size() == 500);
        String first = null;
        for (String id : List.of("n1", "n2", "n3")) {
            List<JsonNode> entries = readAll(id, ws);
            assertEquals(500, entries.size(), id);
            for (int k = 0; k < entries.size(); k++) {
                JsonNode d = entries.get(k).path("data");
                assertEquals(k / 100 + 1, d.path("b").asLong(), id + " seq " + (k + 1) + ": " + d);
                assertEquals("again", d.path("p").asText(), id + " seq " + (k + 1) + " is the deleted log's: " + d);
            }
            String all = entries.toString();
            if (first == null) {
                first = all;
            } else {
                assertEquals(first, all, id + " reads other entries");
            }
            assertTrue(noPendingDelete(id, ws), id + " still notes the delete");
        }
        // 15 appends acknowledged (10 to the deleted log); the new log's 500 entries on every node, none of the old
        row.runs(1).operations(15).acknowledged(15).history(0, 0, 0).note("1 kill; the deleted log's 1,000 entries gone, its segments deleted");
    }

    /** True when no live shard directory of node {@code id} notes {@code ws/LOG} as a pending cold delete. */
    private boolean noPendingDelete(String id, String ws) {
        try (Stream<Path> files = Files.walk(nodes.dataDir(id))) {
            for (Path f : files.filter(p -> p.getFileName().toString().equals("cold-deletes.json") && p.toString().contains("live")).toList()) {
                if (Files.readString(f).contains("\"" + ws + "/" + LOG + "\"")) {
                    return false;
                }
            }
            return true;
        } catch (IOException | java.io.UncheckedIOException e) {
            return false; // a file replaced while we walked: look again
        }
    }
}

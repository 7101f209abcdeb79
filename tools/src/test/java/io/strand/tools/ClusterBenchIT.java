package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strand bench --cluster 3 --quick} end to end: one single-node server and then three cluster
 * nodes, all child JVMs, one scenario in both passes and one kill -9 failover round; the stored run
 * holds both rows, their ratio, the cluster's CPU summed over its three processes and the failover
 * figure, as JSON, Markdown and the HTML report. About 90 s on an idle 2-core machine (four JVM
 * starts, 100,000 entries, one election); 290 s was measured with other builds loading it to 45.
 */
@Timeout(600)
class ClusterBenchIT {
    @TempDir
    Path out;

    @Test
    void benchWithClusterShouldRunTheScenarioOnBothAndStoreThemSideBySide() throws Exception {
        String[] args = {"bench", "--cluster", "3", "--shards", "4", "--quick", "--warmup", "0", "--failovers", "1",
                "--out", out.toString(), "--report", out.resolve("report.html").toString(), "append-batched"};
        int exit = StrandCli.commandLine(args).execute(args);
        assertEquals(0, exit, "strand bench exit status (its output is above)");

        Path json;
        try (Stream<Path> files = Files.list(out)) {
            json = files.filter(p -> p.getFileName().toString().endsWith(".json")).findFirst().orElseThrow();
        }
        JsonNode run = Json.parse(Files.readAllBytes(json));
        assertTrue(run.path("command").asText().contains("--cluster 3 --shards 4"), run.path("command").asText());
        assertEquals("append batched", run.path("results").get(0).path("scenario").asText());
        JsonNode cluster = run.path("cluster");
        assertEquals(3, cluster.path("nodes").asInt());
        assertEquals(4, cluster.path("shards").asInt());
        assertEquals(3, cluster.path("replicas").asInt());
        assertEquals("leader", cluster.path("clientRole").asText());
        assertEquals(cluster.path("leaderAtStart").asText(), cluster.path("clientNode").asText());
        assertTrue(cluster.path("idleServerCores").asDouble() >= 0 && cluster.has("singleIdleServerCores"), "idle CPU of both: " + cluster);
        JsonNode row = cluster.path("results").get(0);
        assertEquals("append batched", row.path("scenario").asText());
        assertEquals(50_000, row.path("n").asLong(), "500 batches of 100 entries, every one acknowledged");
        assertTrue(row.path("serverCpuUsPerOp").asDouble() > 0, "CPU per entry summed over the three nodes: " + row);
        // 4 batches in flight: each Raft entry carries 1 to 4 of them (read from the nodes' own counters)
        double perEntry = row.path("commandsPerRaftEntry").asDouble();
        assertTrue(perEntry >= 1 && perEntry <= 4 && row.path("raftEntries").asLong() > 0, "client writes per Raft entry: " + row);
        JsonNode cmp = cluster.path("comparison").get(0);
        double ratio = cmp.path("throughputRatio").asDouble();
        assertEquals(cmp.path("clusterThroughputPerSec").asDouble() / cmp.path("singleThroughputPerSec").asDouble(), ratio, 0.01);
        assertTrue(cmp.has("serverCpuRatio"), cmp.toString());
        assertEquals(ratio >= 0.5, cluster.path("goal").path("met").asBoolean(), cluster.path("goal").toString());
        JsonNode failover = cluster.path("failover");
        assertEquals(1, failover.path("rounds").size(), failover.toString());
        JsonNode round = failover.path("rounds").get(0);
        assertTrue(round.path("killToAckMs").asDouble() > 0, round.toString());
        assertTrue(round.path("termAfter").asLong() > round.path("termBefore").asLong(), "a new leader was elected: " + round);

        Path md = out.resolve(json.getFileName().toString().replace(".json", ".md"));
        assertTrue(Files.readString(md).contains("| append batched (4 in flight) | "), "the Markdown comparison");
        assertTrue(Files.readString(out.resolve("report.html")).contains("<h2>Cluster vs single node"), "the HTML report's section");
    }
}

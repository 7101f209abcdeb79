package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ServerProcess;
import io.strand.core.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strand bench --server URL --cluster-nodes URL,…}: both passes against servers the bench did
 * not start (as on other machines), here a single server with auth on and a one-node cluster, both
 * child JVMs of the test. The bench writes to a new workspace, reads each server's CPU from its
 * {@code /observe/metrics}, leaves the servers running, and refuses a durability label the server
 * does not acknowledge with. About 40 s (two JVM starts, 2 × 50,000 entries).
 */
@Timeout(300)
class RunningServersBenchIT {
    @TempDir
    Path dir;

    @Test
    void benchShouldRunBothPassesAgainstServersStartedElsewhereAndLeaveThemRunning() throws Exception {
        Path out = dir.resolve("out");
        List<String> heap = List.of("-Xms256m", "-Xmx512m");
        try (ServerProcess single = ServerProcess.start(dir.resolve("single"), List.of("--durability", "fsync"), heap);
             LocalCluster cluster = new LocalCluster(dir.resolve("cluster"), 1, 2, List.of("--durability", "fsync"), heap)) {
            cluster.start();
            String token = Files.readString(dir.resolve("single").resolve("root.token")).strip();
            String node = cluster.url("n1");

            String[] wrongMode = {"bench", "--server", single.url, "--token", token, "--durability", "os", "--quick", "--warmup", "0",
                    "--out", out.toString(), "append-batched"};
            String said = run(wrongMode, 1);
            assertTrue(said.contains("acknowledges appends as durable \"fsync\", not \"os\""), said);

            String[] noToken = {"bench", "--server", single.url, "--token", "", "--quick", "--warmup", "0", "--out", out.toString(),
                    "append-batched"};
            said = run(noToken, 1);
            assertTrue(said.contains("refused a first append") && said.contains("no token given"), said);

            String[] args = {"bench", "--server", single.url, "--cluster-nodes", node, "--server-token", token, "--quick", "--warmup", "0",
                    "--out", out.toString(), "append-batched"};
            run(args, 0);

            JsonNode runDoc;
            try (Stream<Path> files = Files.list(out)) {
                runDoc = Json.parse(Files.readAllBytes(files.filter(p -> p.toString().endsWith(".json")).findFirst().orElseThrow()));
            }
            String command = runDoc.path("command").asText();
            assertTrue(command.contains("--server " + single.url) && command.contains("--cluster-nodes " + node), command);
            assertFalse(command.contains(token), "the token is not stored with the run: " + command);
            JsonNode singleRow = runDoc.path("results").get(0);
            assertEquals(50_000, singleRow.path("n").asLong(), singleRow.toString());
            assertTrue(singleRow.path("serverCpuUsPerOp").asDouble() > 0, "the server's CPU from its metrics: " + singleRow);
            JsonNode c = runDoc.path("cluster");
            assertEquals("operator", c.path("nodesStartedBy").asText());
            assertEquals(1, c.path("nodes").asInt());
            assertEquals(2, c.path("shards").asInt(), "the running cluster's own shard count, not --shards' default");
            String ws = c.path("workspace").asText();
            assertTrue(ws.matches("bench-\\d{8}-\\d{6}"), ws);
            JsonNode clusterRow = c.path("results").get(0);
            assertEquals(50_000, clusterRow.path("n").asLong(), clusterRow.toString());
            assertTrue(clusterRow.path("serverCpuUsPerOp").asDouble() > 0, "the node's CPU from its metrics: " + clusterRow);
            assertTrue(c.path("failover").isMissingNode(), "no kill of nodes the bench did not start");

            // both still serve, and the entries went to the run's workspaces, not to "bench"
            StrandClient toSingle = new StrandClient(single.url, token, java.time.Duration.ofSeconds(10));
            CliFailure none = org.junit.jupiter.api.Assertions.assertThrows(CliFailure.class, () -> toSingle.get("/v1/ws/bench/logs/batched"));
            assertTrue(none.getMessage().contains("not_found"), none.getMessage());
            JsonNode batched = new StrandClient(node, null, java.time.Duration.ofSeconds(10)).get("/v1/ws/" + ws + "/logs/batched");
            assertEquals(50_000, batched.path("head").asLong(), batched.toString());
            assertNotEquals(-1, CpuMeter.remoteCpuMicros(single.url));
        }
    }

    /** Runs the CLI with {@code args}, checks its exit status, and returns what it wrote to stderr. */
    private static String run(String[] args, int expectedExit) {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        int exit;
        try {
            exit = StrandCli.commandLine(args).execute(args);
        } finally {
            System.setErr(err);
        }
        String said = captured.toString(StandardCharsets.UTF_8);
        err.print(said);
        assertEquals(expectedExit, exit, "strand " + String.join(" ", args) + ": " + said);
        return said;
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ServerProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The server of {@code strand bench}'s single-node pass: a child JVM the bench starts on its temp
 * data directory ({@code --auth false}, the chosen durability), or a server started elsewhere
 * ({@code --server URL}, e.g. on one of the machines a cluster's nodes run on), which the bench only
 * writes to, in a new workspace per run, and reads the CPU of from its {@code /observe/metrics}.
 * Immutable; used by the bench's one thread.
 *
 * @param wsUrl the socket URL every scenario connects to
 * @param token the bearer token (null for a child, which runs with {@code --auth false})
 * @param pid   the child's pid; 0 for a running server (its memory and open files are not reported)
 * @param cpu   the server's and this JVM's CPU
 * @param child the child process, null for a running server
 */
record BenchServer(String wsUrl, String token, long pid, CpuMeter cpu, ServerProcess child) implements AutoCloseable {
    /** A child JVM serving {@code data} in durability mode {@code durability}, workspace {@value ClusterBench#WORKSPACE}. */
    static BenchServer child(Path data, String durability, List<String> jvmOptions) throws IOException {
        ServerProcess p = ServerProcess.start(data, List.of("--durability", durability, "--auth", "false"), jvmOptions);
        long pid = p.process.pid();
        return new BenchServer(StrandClient.socketUrl(p.url, ClusterBench.WORKSPACE), null, pid, CpuMeter.forServer(pid), p);
    }

    /**
     * The server at {@code url}, after one append to log {@code durability-check} of the run's workspace
     * has shown that it acknowledges in mode {@code durability} (so the figures are labelled with the
     * mode the server really ran in).
     *
     * @throws IllegalArgumentException when the server does not answer, refuses the append, or acknowledges in another mode
     */
    static BenchServer running(String url, String token, String durability) {
        String base = StrandClient.baseUrl(url, "--server");
        String ws = ClusterBench.runWorkspace(Instant.now());
        JsonNode ack;
        try {
            ack = new StrandClient(base, token, Duration.ofSeconds(10)).post("/v1/ws/" + ws + "/logs/durability-check/entries",
                    io.strand.core.Json.MAPPER.createObjectNode().put("data", "strand bench"));
        } catch (CliFailure e) {
            throw new IllegalArgumentException("--server: " + base + " refused a first append to workspace " + ws + ": " + e.getMessage()
                    + (token == null ? " (no token given: --token or STRAND_TOKEN)" : ""));
        }
        String acked = ack.path("durable").asText("");
        if (!acked.equals(durability)) {
            throw new IllegalArgumentException("--server: " + base + " acknowledges appends as durable \"" + acked + "\", not \"" + durability
                    + "\": run the bench with --durability " + acked + " (the figures are labelled with it)");
        }
        return new BenchServer(StrandClient.socketUrl(base, ws), token, 0, CpuMeter.forRemote(List.of(base)), null);
    }

    /** Where the CPU figures come from, for the run's header. */
    String cpuSource() {
        return child != null ? "the server's (child JVM, pid " + pid + ") and this client JVM's"
                : "the server's (from its /observe/metrics, strand_process_cpu_micros_total) and this client JVM's";
    }

    /** A child's clean stop (SIGTERM), so a flight recording it was asked for is written; nothing for a running server. */
    void terminate() throws InterruptedException {
        if (child != null) {
            child.terminate();
        }
    }

    @Override
    public void close() {
        if (child != null) {
            child.close();
        }
    }
}

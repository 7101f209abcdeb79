package io.strand.tools;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ChildJvm;
import io.strand.core.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strand bench}: measures the disk's own DSYNC write latency ({@link DiskProbe}), starts a
 * fresh server in a child process (its own temp data dir, the chosen durability mode), runs the
 * named scenarios over loopback, each after a fresh disk probe and a warm-up on its own objects
 * ({@link Warmup}), prints one line each (throughput beside the server's and the client's CPU per
 * unit, {@link CpuMeter}) and writes them as JSON and as a Markdown table ({@link BenchMarkdown}).
 * Numbers come from HdrHistogram; nothing is tuned per scenario. With {@code --cluster N} the same
 * scenarios then run again, in the same command, against N local nodes in cluster mode
 * ({@link ClusterBench}), and each row is shown beside its single-node figure ({@link ClusterComparison}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Run benchmarks against a fresh local server in a child process (or a local cluster with --cluster N), "
                + "or against servers already running (--server URL, --cluster-nodes URL,…).",
        footer = {"", "Examples:", "  strand bench                              every scenario, fresh local server", "  strand bench --quick append-serial        one scenario, short", "  strand bench --cluster 3 append-batched   beside a 3-node cluster"})
final class BenchCommand implements Callable<Integer> {
    @Parameters(arity = "0..*", paramLabel = "SCENARIO",
            description = "Scenarios (default: all): append-serial append-concurrent append-batched read-pagination "
                    + "replay-100k replay-1m live-tail cold-log-open many-logs cas-serial cas-contended incr-contended "
                    + "floor-debit txn-debit ds-append-serial ds-append-batched ds-catch-up ds-live-tail-sse; "
                    + "cold tier (own server): cold-read-pagination cold-replay roll compact")
    List<String> scenarios = new ArrayList<>();
    @Option(names = "--durability", defaultValue = "fsync", description = "fsync (default) or os.")
    String durability;
    @Option(names = "--quick", description = "A tenth of the default sizes and a 2 s warm-up (smoke run; not for reporting).")
    boolean quick;
    @Option(names = "--warmup", paramLabel = "SECONDS",
            description = "Warm-up per scenario, on separate objects, before the measured run (default 20; 2 with --quick; 0 for none).")
    Integer warmupSeconds;
    @Option(names = "--out", defaultValue = "bench-results",
            description = "Directory for the results: bench-<time>.json and the same run as a Markdown table, bench-<time>.md.")
    Path out;
    @Option(names = "--report", paramLabel = "FILE.html",
            description = "Also write the run as one self-contained HTML page: charts of each scenario's throughput (with CPU per unit) and "
                    + "latency percentiles, the disk probe, the durability mode and the machine.")
    Path report;
    @Option(names = "--cluster", paramLabel = "NODES",
            description = "After the single-node pass, run the same scenarios against NODES local nodes in cluster mode (child JVMs, "
                    + "--auth false, fresh data dirs, the same --durability) and show each beside its single-node figure, with CPU per "
                    + "unit summed over the NODES server JVMs and the ratio cluster/single node. Scenarios by default: "
                    + "append-serial append-concurrent append-batched replay-100k incr-contended live-tail (any but cold-*, roll, compact).")
    Integer clusterNodes;
    @Option(names = "--shards", description = "With --cluster: the cluster's shard count (default 8).")
    Integer shards;
    @Option(names = "--server", paramLabel = "URL",
            description = "Run the single-node pass against this running server (http://HOST:PORT, e.g. on another machine) instead of "
                    + "a child process: a new workspace bench-<UTC time> per run, the server's CPU read from its /observe/metrics. "
                    + "Not for ds-*, cold-*, roll or compact.")
    String serverUrl;
    @Option(names = "--cluster-nodes", split = ",", paramLabel = "URL",
            description = "Run the cluster pass against these running cluster nodes (every node's http://HOST:PORT, comma-separated; "
                    + "e.g. one per machine) instead of starting --cluster N here: a new workspace bench-<UTC time> per run, each "
                    + "node's CPU read from its /observe/metrics, no failover rounds (the bench kills only nodes it started).")
    List<String> clusterNodeUrls;
    @Option(names = "--token", defaultValue = "${env:STRAND_TOKEN}",
            description = "With --server or --cluster-nodes: a bearer token (env STRAND_TOKEN) that may write and read workspaces and "
                    + "read GET /v1/cluster (an admin's or root); none for servers started with --auth false.")
    String token;
    @Option(names = "--server-token", paramLabel = "TOKEN",
            description = "With --server: its token when it is not --token's (a server outside the cluster has a root token of its own).")
    String serverToken;
    @Option(names = "--cluster-client", defaultValue = "leader", paramLabel = "leader|follower",
            description = "With --cluster: the one node every client socket connects to: the leader of the bench workspace's shard "
                    + "(default), or a follower, whose writes go through Raft to the leader.")
    ClusterBench.Client clusterClient;
    @Option(names = "--failovers", paramLabel = "N",
            description = "With --cluster: after the scenarios, N rounds of kill -9 of the bench shard's leader during serial appends "
                    + "through another node, each timed from the kill to the next ack (default 3; 1 with --quick; 0 for none).")
    Integer failovers;
    private ColdBenchmarks cold;
    private Warmup warmup;

    @Override
    public Integer call() throws Exception {
        Map<String, Scenario> all = new LinkedHashMap<>();
        all.put("append-serial", LogBenchmarks::appendSerial);
        all.put("append-concurrent", LogBenchmarks::appendConcurrent);
        all.put("append-batched", LogBenchmarks::appendBatched);
        all.put("read-pagination", LogBenchmarks::readPagination);
        all.put("cold-read-pagination", b -> cold().readPagination());
        all.put("replay-100k", b -> b.subscribeReplay(100_000));
        all.put("replay-1m", b -> b.subscribeReplay(1_000_000));
        all.put("cold-replay", b -> cold().replay());
        all.put("live-tail", LogBenchmarks::liveTail);
        all.put("cold-log-open", LogBenchmarks::coldLogOpen);
        all.put("many-logs", LogBenchmarks::manyLogs);
        all.put("cas-serial", b -> b.docs().casSerial());
        all.put("cas-contended", b -> b.docs().casContended());
        all.put("incr-contended", b -> b.docs().incrContended());
        all.put("floor-debit", b -> b.docs().floorDebit());
        all.put("txn-debit", b -> b.docs().txnDebit());
        all.put("ds-append-serial", b -> b.ds().appendSerial());
        all.put("ds-append-batched", b -> b.ds().appendBatched());
        all.put("ds-catch-up", b -> b.ds().catchUpRead());
        all.put("ds-live-tail-sse", b -> b.ds().sseLiveTail());
        all.put("roll", b -> cold().roll());
        all.put("compact", b -> cold().compact());
        ClusterBench.Settings clusterSettings = clusterSettings();
        List<String> chosen = !scenarios.isEmpty() ? scenarios
                : clusterSettings != null ? ClusterBench.DEFAULT_SCENARIOS : new ArrayList<>(all.keySet());
        for (String s : chosen) {
            if (!all.containsKey(s)) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                        "unknown scenario '" + s + "'; choose from " + all.keySet());
            }
            if ((serverUrl != null || clusterNodeUrls != null) && !remoteSupported(s)) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "scenario '" + s
                        + "' does not run against --server or --cluster-nodes (the Durable Streams and cold-tier scenarios use a server of their own)");
            }
            if (clusterSettings != null && !ClusterBench.supported(s)) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                        "scenario '" + s + "' does not run on a cluster (its cold tier is the nodes' shared store, which the bench does not set up)");
            }
        }
        int warmupSecs = warmupSeconds != null ? warmupSeconds : quick ? 2 : 20;
        if (warmupSecs < 0) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "--warmup must be 0 or more seconds");
        }
        warmup = new Warmup(Duration.ofSeconds(warmupSecs));
        Instant startedAt = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        Path data = Files.createTempDirectory("strand-bench-");
        Path clusterData = data.resolveSibling(data.getFileName() + "-cluster"); // the cluster pass's nodes, one dir each
        ArrayNode results = Json.MAPPER.createArrayNode();
        System.out.println("strand bench: durability=" + durability + ", " + (serverUrl != null ? "server at " + serverUrl : "server in a child process, loopback")
                + (clusterNodeUrls != null ? ", cluster nodes at " + String.join(",", clusterNodeUrls) : "") + ", "
                + Runtime.getRuntime().availableProcessors() + " cores, warm-up " + warmupSecs + " s per scenario"
                + (quick ? ", QUICK sizes" : ""));
        DiskProbe.Result disk;
        try {
            disk = DiskProbe.run(data);
        } catch (java.io.IOException e) {
            deleteTree(data);
            throw e;
        }
        System.out.println(disk.line());
        if (serverUrl != null || clusterNodeUrls != null) {
            System.out.println("disk probe: of this machine's disk (the bench's temp directory); servers started elsewhere may have other disks");
        }
        ObjectNode clusterDoc = null;
        try (BenchServer server = serverUrl != null ? BenchServer.running(serverUrl, given(serverToken) != null ? given(serverToken) : token(), durability)
                : BenchServer.child(data, durability, serverJvmOptions())) {
            LogBenchmarks bench = new LogBenchmarks(server.wsUrl(), server.token(), durability, server.pid(), server.cpu(), quick, warmup);
            double singleIdleCores = Double.NaN;
            if (clusterSettings != null) {
                singleIdleCores = server.cpu().idle(ClusterBench.idleWindow(quick)).serverCores();
                System.out.printf(java.util.Locale.ROOT, "single-node pass: one server (durability %s; idle, it keeps %.2f cores busy),"
                        + " then the cluster pass%n", durability, singleIdleCores);
            }
            System.out.println("cpu: " + server.cpuSource() + " over each timed window, per counted unit (op, entry, attempt, commit); "
                    + (server.child() != null ? "" : "this JVM's ") + CpuMeter.source());
            for (String name : chosen) {
                System.out.print("  running " + name + "…\r");
                System.out.flush();
                DiskProbe.Result probe = DiskProbe.run(data); // the disk's flush latency moves from minute to minute: one per row
                BenchReport report = all.get(name).run(bench);
                report.disk = probe;
                System.out.println(report.line());
                results.add(report.json());
            }
            server.terminate(); // a child's clean stop, so a flight recording asked for in STRAND_BENCH_SERVER_OPTS is written
            if (clusterSettings != null) {
                clusterDoc = ClusterBench.run(clusterSettings, chosen, all, durability, quick, warmup, clusterData, results,
                        clusterJvmOptions());
                if (!Double.isNaN(singleIdleCores)) {
                    clusterDoc.put("singleIdleServerCores", Math.round(singleIdleCores * 100) / 100.0);
                }
            }
        } finally {
            deleteTree(data);
            deleteTree(clusterData);
            if (cold != null) {
                cold.close();
            }
        }
        Files.createDirectories(out);
        Path file = out.resolve("bench-" + Instant.now().toString().replace(':', '-') + ".json");
        ObjectNode doc = Json.MAPPER.createObjectNode();
        doc.put("startedAt", startedAt.toString());
        doc.put("command", command(chosen));
        doc.put("durability", durability);
        doc.put("quick", quick);
        doc.put("cores", Runtime.getRuntime().availableProcessors());
        doc.put("warmupSeconds", warmupSecs);
        doc.set("machine", machine());
        doc.set("diskProbe", disk.json());
        doc.put("cpuClock", CpuMeter.source() + "; server = its child JVM, client = this JVM");
        doc.set("results", results);
        if (clusterDoc != null) {
            doc.set("cluster", clusterDoc);
            System.out.println();
            System.out.print(ClusterComparison.text(clusterDoc));
        }
        Files.write(file, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc));
        System.out.println("results: " + file);
        Path table = out.resolve(file.getFileName().toString().replaceFirst("\\.json$", ".md"));
        Files.writeString(table, BenchMarkdown.render(doc));
        System.out.println("table: " + table);
        if (report != null) {
            BenchHtmlReport.write(doc, report);
            System.out.println("report: " + report);
        }
        return 0;
    }

    /** The command line that runs the same scenarios again ({@code --out} and {@code --report} left out). */
    String command(List<String> chosen) {
        StringBuilder c = new StringBuilder("strand bench --durability ").append(durability);
        if (quick) {
            c.append(" --quick");
        }
        if (warmupSeconds != null) {
            c.append(" --warmup ").append(warmupSeconds);
        }
        if (serverUrl != null) {
            c.append(" --server ").append(serverUrl);
        }
        if (clusterNodeUrls != null) {
            c.append(" --cluster-nodes ").append(String.join(",", clusterNodeUrls));
        }
        if (clusterNodes != null) {
            c.append(" --cluster ").append(clusterNodes).append(" --shards ").append(shards());
        }
        if ((clusterNodes != null || clusterNodeUrls != null) && clusterClient != ClusterBench.Client.leader) {
            c.append(" --cluster-client ").append(clusterClient);
        }
        if (clusterNodes != null && failovers != null) {
            c.append(" --failovers ").append(failovers);
        }
        if (!scenarios.isEmpty()) {
            c.append(' ').append(String.join(" ", chosen));
        }
        return c.toString();
    }

    /** The cluster pass's settings from the options; null without {@code --cluster} or {@code --cluster-nodes}. */
    private ClusterBench.Settings clusterSettings() {
        if (clusterNodes == null && clusterNodeUrls == null) {
            return null;
        }
        try {
            if (clusterNodeUrls != null) {
                if (clusterNodes != null || shards != null) {
                    throw new IllegalArgumentException("--cluster-nodes benches a cluster that is already running: without --cluster N"
                            + " or --shards (which set up a local one)");
                }
                // shards: 1 stands in; the pass reads the running cluster's own count from GET /v1/cluster
                return new ClusterBench.Settings(clusterNodeUrls.size(), 1, clusterClient, failovers != null ? failovers : 0,
                        clusterNodeUrls, token());
            }
            return new ClusterBench.Settings(clusterNodes, shards(), clusterClient, failovers != null ? failovers : quick ? 1 : 3);
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), e.getMessage());
        }
    }

    private int shards() {
        return shards != null ? shards : 8;
    }

    private String token() {
        return given(token);
    }

    /** A token option's value, or null when it was not given or is blank (e.g. an empty STRAND_TOKEN). */
    private static String given(String token) {
        return token == null || token.isBlank() ? null : token.strip();
    }

    /** What runs against a server started elsewhere: not the ones that start servers of their own. */
    static boolean remoteSupported(String scenario) {
        return ClusterBench.supported(scenario) && !scenario.startsWith("ds-");
    }

    /** What the figures were measured on: cores, memory, CPU model, kernel and JDK. */
    static ObjectNode machine() {
        ObjectNode m = Json.MAPPER.createObjectNode();
        m.put("cores", Runtime.getRuntime().availableProcessors());
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            m.put("memoryBytes", os.getTotalMemorySize());
        }
        try (var lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            lines.filter(l -> l.startsWith("model name")).findFirst()
                    .ifPresent(l -> m.put("cpu", l.substring(l.indexOf(':') + 1).trim()));
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            // not Linux: the CPU model is left out
        }
        m.put("kernel", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        m.put("jdk", System.getProperty("java.vm.vendor") + " " + System.getProperty("java.runtime.version"));
        return m;
    }

    /**
     * The bench server's JVM options: a fixed 2 GiB heap (initial = maximum, as server JVMs are usually
     * run, e.g. Kafka's start scripts), then whatever {@code STRAND_BENCH_SERVER_OPTS}
     * adds (space-separated), e.g. {@code -XX:StartFlightRecording=filename=/tmp/server.jfr} to
     * profile the server rather than the client ({@code STRAND_JAVA_OPTS} reaches only the CLI JVM).
     */
    static List<String> serverJvmOptions() {
        return jvmOptions(List.of("-Xms2g", "-Xmx2g"));
    }

    /**
     * Each cluster node's JVM options: a fixed 1 GiB heap (three of them share the machine), the
     * {@link #clusterJitFlags() JIT flags} {@code ./strand serve} gives a cluster node, then
     * {@code STRAND_BENCH_SERVER_OPTS}. Fixed, because with only a maximum G1 kept each node's heap at
     * 125–260 MiB under load, and with its live 65–90 MiB (the Raft log's entry cache among it) that
     * started a concurrent mark every few seconds: in one {@code --warmup 90 append-batched} run the
     * three nodes spent 27.7 s marking against 0.7 s with the fixed heap (GC logs, 2026-12-05).
     */
    static List<String> clusterJvmOptions() {
        List<String> own = new ArrayList<>(List.of("-Xms1g", "-Xmx1g"));
        own.addAll(clusterJitFlags());
        return jvmOptions(own);
    }

    /**
     * A cluster node's JIT flags ({@code strand.clusterJitFlags} in the root pom, which the launcher
     * passes as that system property and gives {@code ./strand serve --cluster} too), so the nodes of
     * the cluster pass compile as served nodes do. None when the property is absent (a bench run
     * outside the launcher).
     */
    static List<String> clusterJitFlags() {
        return ChildJvm.words(System.getProperty("strand.clusterJitFlags"));
    }

    private static List<String> jvmOptions(List<String> own) {
        List<String> options = new ArrayList<>(own);
        options.addAll(ChildJvm.words(System.getenv("STRAND_BENCH_SERVER_OPTS")));
        return options;
    }

    /** The cold-tier scenarios, with their own server started on first use. */
    private ColdBenchmarks cold() {
        if (cold == null) {
            cold = new ColdBenchmarks(durability, quick, warmup);
        }
        return cold;
    }

    interface Scenario {
        BenchReport run(LogBenchmarks bench) throws Exception;
    }

    static void deleteTree(Path root) throws java.io.IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}

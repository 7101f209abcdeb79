package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The cluster pass of {@code strand bench --cluster N}, run after the single-node pass in the same
 * command: starts {@link LocalCluster} (N child JVMs in cluster mode, fresh data directories, the
 * same durability mode), or with {@code --cluster-nodes} uses a {@link RunningCluster} started
 * elsewhere, waits for every shard's leader, then runs the chosen scenarios with the bench's client
 * connected to one node, its CPU per unit summed over all the nodes ({@link BenchCluster#cpu}), then
 * (local nodes only) the {@link FailoverProbe} rounds, and returns the run's {@code cluster} object
 * with the rows beside the single-node ones ({@link ClusterComparison}). Every scenario uses one
 * workspace ({@value #WORKSPACE} on local nodes, a new one per run on running nodes), so one shard
 * (one Raft group) carries all of its writes. Used by the bench's one thread.
 */
final class ClusterBench {
    /** The workspace of every scenario (the socket URL's), as in the single-node pass. */
    static final String WORKSPACE = "bench";
    /** What {@code --cluster} runs when no scenario is named: the six. */
    static final List<String> DEFAULT_SCENARIOS = List.of("append-serial", "append-concurrent", "append-batched", "replay-100k",
            "incr-contended", "live-tail");

    /** How long each pass's server is watched idle before its first scenario ({@link CpuMeter#idle}). */
    static java.time.Duration idleWindow(boolean quick) {
        return java.time.Duration.ofSeconds(quick ? 2 : 5);
    }

    /** Where the clients' sockets go: the node that leads the bench workspace's shard, or one that follows it. */
    enum Client { leader, follower }

    /**
     * {@code --cluster N}, {@code --shards}, {@code --cluster-client} and {@code --failovers}; or, for
     * nodes started elsewhere, {@code --cluster-nodes} ({@code nodeUrls}, null for a local cluster)
     * with {@code --token}.
     *
     * @param failovers kill -9 rounds after the scenarios (each but the last restarts the killed node), 0 for none
     */
    record Settings(int nodes, int shards, Client client, int failovers, List<String> nodeUrls, String token) {
        Settings {
            if (nodeUrls != null) {
                nodeUrls = List.copyOf(nodeUrls);
                if (nodeUrls.isEmpty()) {
                    throw new IllegalArgumentException("--cluster-nodes needs the URL of every node");
                }
                if (failovers != 0) {
                    throw new IllegalArgumentException("--failovers kills nodes, which the bench does only to nodes it started"
                            + " (--cluster N), not to --cluster-nodes");
                }
                nodes = nodeUrls.size();
            }
            if (nodes < 1) {
                throw new IllegalArgumentException("--cluster needs at least 1 node, not " + nodes);
            }
            if (shards < 1) {
                throw new IllegalArgumentException("--shards must be at least 1, not " + shards);
            }
            if (client == Client.follower && nodes < 2) {
                throw new IllegalArgumentException("--cluster-client follower needs at least 2 nodes");
            }
            if (failovers < 0) {
                throw new IllegalArgumentException("--failovers must be 0 or more, not " + failovers);
            }
        }

        /** A cluster of {@code nodes} local child JVMs. */
        Settings(int nodes, int shards, Client client, int failovers) {
            this(nodes, shards, client, failovers, null, null);
        }

        /** Whether the nodes were started elsewhere ({@code --cluster-nodes}). */
        boolean running() {
            return nodeUrls != null;
        }
    }

    private ClusterBench() {
    }

    /** Scenarios a cluster can run: not the Durable Streams ones (501 in cluster mode for now) and not the cold tier's (the bench starts its cluster without {@code --cold}). */
    static boolean supported(String scenario) {
        return !scenario.startsWith("cold-") && !scenario.equals("roll") && !scenario.equals("compact");
    }

    /**
     * Runs the pass over a cluster with data under {@code root}; {@code single} holds the
     * single-node rows of the same run, to compare with. A failed failover round is reported in the
     * object, not thrown, so the scenarios' rows are kept.
     */
    static ObjectNode run(Settings settings, List<String> chosen, Map<String, BenchCommand.Scenario> all, String durability,
                          boolean quick, Warmup warmup, Path root, JsonNode single, List<String> jvmOptions) throws Exception {
        Files.createDirectories(root); // the nodes' data (local ones) and the disk probe
        ObjectNode doc = Json.MAPPER.createObjectNode();
        String workspace = settings.running() ? runWorkspace(java.time.Instant.now()) : WORKSPACE;
        try (BenchCluster cluster = settings.running() ? RunningCluster.of(settings.nodeUrls(), settings.token())
                : new LocalCluster(root, settings.nodes(), settings.shards(), List.of("--durability", durability), jvmOptions)) {
            if (cluster instanceof LocalCluster local) {
                System.out.println("cluster pass: starting " + settings.nodes() + " nodes (child JVMs, --auth false, " + settings.shards()
                        + " shards, durability " + durability + ", data in " + root + ")…");
                local.start();
            } else {
                System.out.println("cluster pass: " + cluster.up().size() + " running nodes (" + String.join(", ", cluster.urls())
                        + "), started elsewhere; the bench writes to a new workspace, " + workspace + ", and leaves them running");
            }
            BenchCluster.Leaders leaders = cluster.awaitLeaders();
            BenchCluster.Shard shard = cluster.shardOf(workspace);
            int shards = leaders.status().path("shards").size();
            String via = settings.client() == Client.leader ? shard.leader()
                    : cluster.up().stream().filter(id -> !id.equals(shard.leader())).findFirst().orElseThrow();
            String clients = "one node, " + via + (settings.client() == Client.leader
                    ? ", which led shard " + shard.shard() + " (workspace " + workspace + ") at the start"
                    : ", a follower of shard " + shard.shard() + " (workspace " + workspace + "; leader " + shard.leader()
                            + "): its writes go through Raft to the leader");
            doc.put("nodes", cluster.up().size()).put("shards", shards)
                    .put("nodesStartedBy", cluster instanceof LocalCluster ? "bench" : "operator")
                    .put("replicas", leaders.status().path("shards").path(0).path("replicas").size())
                    .put("workspace", workspace).put("workspaceShard", shard.shard())
                    .put("clientNode", via).put("clientRole", settings.client().name()).put("clients", clients)
                    .put("leaderAtStart", shard.leader()).put("termAtStart", shard.term())
                    .put("leadersElectedSeconds", Math.round(leaders.electedSeconds() * 10) / 10.0)
                    .put("leadersOnPreferredReplicas", leaders.preferred())
                    .put("cpuIs", "user+system of the " + cluster.up().size() + " server JVMs summed" + (cluster instanceof LocalCluster
                            ? "" : ", each from its /observe/metrics (strand_process_cpu_micros_total)") + "; client = this JVM");
            System.out.printf(java.util.Locale.ROOT, "cluster: leaders on all %d shards after %.1f s%s; clients on %s%n", shards,
                    leaders.electedSeconds(), leaders.preferred() ? "" : " (not all on their preferred replica)", clients);
            CpuMeter cpu = cluster.cpu();
            CpuMeter.Used idle = cpu.idle(idleWindow(quick));
            if (idle.serverKnown()) {
                doc.put("idleServerCores", Math.round(idle.serverCores() * 100) / 100.0);
                System.out.printf(java.util.Locale.ROOT, "cluster: idle, the %d nodes keep %.2f cores busy (heartbeats of %d Raft groups"
                        + " per node; the CPU per unit below includes it)%n", cluster.up().size(), idle.serverCores(), shards);
            }
            LogBenchmarks bench = new LogBenchmarks(cluster.socketUrl(via, workspace), cluster.token(), durability, 0, cpu, quick, warmup);
            ArrayNode results = doc.putArray("results");
            for (String name : chosen) {
                System.out.print("  running " + name + " on the cluster…\r");
                System.out.flush();
                DiskProbe.Result probe = DiskProbe.run(root);
                RaftBatching.Count before = RaftBatching.read(cluster.urls(), shard.shard());
                BenchReport report = all.get(name).run(bench);
                RaftBatching.Count after = RaftBatching.read(cluster.urls(), shard.shard());
                report.disk = probe;
                report.extra.put("servers", cluster.up().size());
                if (before != null && after != null && after.entries() > before.entries()) {
                    // over the scenario's warm-up and run alike (the same requests): the client writes per Raft entry
                    RaftBatching.Count d = after.minus(before);
                    report.extra.put("raftEntries", d.entries())
                            .put("commandsPerRaftEntry", Math.round(d.perEntry() * 100) / 100.0);
                }
                System.out.println(report.line());
                results.add(report.json());
            }
            BenchCluster.Shard end = cluster.shardOf(workspace);
            doc.put("leaderAtEnd", end.leader()).put("termAtEnd", end.term());
            ArrayNode comparison = ClusterComparison.rows(single, results);
            doc.set("comparison", comparison);
            ObjectNode goal = ClusterComparison.goal(comparison);
            if (goal != null) {
                doc.set("goal", goal);
            }
            if (settings.failovers() > 0 && cluster instanceof LocalCluster local) {
                doc.set("failover", failovers(local, settings.failovers()));
            }
            cluster.terminate();
        }
        return doc;
    }

    /**
     * The workspace of a run against nodes started elsewhere: new for each run ({@code bench-} and the
     * UTC second it started), so nothing an earlier run left there is read, and nothing else is written.
     */
    static String runWorkspace(java.time.Instant at) {
        return "bench-" + java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(java.time.ZoneOffset.UTC).format(at);
    }

    /** {@code rounds} kill -9 rounds; between two, the killed node is restarted and every shard given a leader again. */
    private static ObjectNode failovers(LocalCluster cluster, int rounds) {
        List<FailoverProbe.Round> done = new ArrayList<>();
        String error = null;
        try {
            for (int i = 0; i < rounds; i++) {
                if (i > 0) {
                    String killed = done.get(i - 1).killed();
                    cluster.start(killed);
                    cluster.awaitLeaders();
                }
                FailoverProbe.Round round = FailoverProbe.round(cluster, WORKSPACE, "failover");
                System.out.println(round.line());
                done.add(round);
            }
        } catch (Exception e) {
            error = e.getMessage();
            System.out.println("failover: round " + (done.size() + 1) + " failed: " + error);
        }
        ObjectNode o = FailoverProbe.json(done);
        if (error != null) {
            o.put("error", "round " + (done.size() + 1) + ": " + error);
        }
        return o;
    }
}

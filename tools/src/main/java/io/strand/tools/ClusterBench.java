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
 * same durability mode), waits for every shard's leader, then runs the chosen scenarios with the
 * bench's client connected to one node, its CPU per unit summed over all N server JVMs
 * ({@link CpuMeter#forServers}), then the {@link FailoverProbe} rounds, and returns the run's
 * {@code cluster} object with the rows beside the single-node ones ({@link ClusterComparison}).
 * Every scenario uses the workspace {@value #WORKSPACE}, so one shard (one Raft group) carries all of
 * its writes. Used by the bench's one thread.
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
     * {@code --cluster N}, {@code --shards}, {@code --cluster-client} and {@code --failovers}.
     *
     * @param failovers kill -9 rounds after the scenarios (each but the last restarts the killed node), 0 for none
     */
    record Settings(int nodes, int shards, Client client, int failovers) {
        Settings {
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
        Files.createDirectories(root);
        ObjectNode doc = Json.MAPPER.createObjectNode();
        try (LocalCluster cluster = new LocalCluster(root, settings.nodes(), settings.shards(), List.of("--durability", durability),
                jvmOptions)) {
            System.out.println("cluster pass: starting " + settings.nodes() + " nodes (child JVMs, --auth false, " + settings.shards()
                    + " shards, durability " + durability + ", data in " + root + ")…");
            cluster.start();
            LocalCluster.Leaders leaders = cluster.awaitLeaders();
            LocalCluster.Shard shard = cluster.shardOf(WORKSPACE);
            String via = settings.client() == Client.leader ? shard.leader()
                    : cluster.up().stream().filter(id -> !id.equals(shard.leader())).findFirst().orElseThrow();
            String clients = "one node, " + via + (settings.client() == Client.leader
                    ? ", which led shard " + shard.shard() + " (workspace " + WORKSPACE + ") at the start"
                    : ", a follower of shard " + shard.shard() + " (workspace " + WORKSPACE + "; leader " + shard.leader()
                            + "): its writes go through Raft to the leader");
            doc.put("nodes", settings.nodes()).put("shards", settings.shards())
                    .put("replicas", leaders.status().path("shards").path(0).path("replicas").size())
                    .put("workspace", WORKSPACE).put("workspaceShard", shard.shard())
                    .put("clientNode", via).put("clientRole", settings.client().name()).put("clients", clients)
                    .put("leaderAtStart", shard.leader()).put("termAtStart", shard.term())
                    .put("leadersElectedSeconds", Math.round(leaders.electedSeconds() * 10) / 10.0)
                    .put("leadersOnPreferredReplicas", leaders.preferred())
                    .put("cpuIs", "user+system of the " + settings.nodes() + " server JVMs summed; client = this JVM");
            System.out.printf(java.util.Locale.ROOT, "cluster: leaders on all %d shards after %.1f s%s; clients on %s%n", settings.shards(),
                    leaders.electedSeconds(), leaders.preferred() ? "" : " (not all on their preferred replica)", clients);
            CpuMeter cpu = CpuMeter.forServers(cluster.pids());
            CpuMeter.Used idle = cpu.idle(idleWindow(quick));
            if (idle.serverKnown()) {
                doc.put("idleServerCores", Math.round(idle.serverCores() * 100) / 100.0);
                System.out.printf(java.util.Locale.ROOT, "cluster: idle, the %d nodes keep %.2f cores busy (heartbeats of %d Raft groups"
                        + " per node; the CPU per unit below includes it)%n", settings.nodes(), idle.serverCores(), settings.shards());
            }
            LogBenchmarks bench = new LogBenchmarks(cluster.socketUrl(via, WORKSPACE), null, durability, 0, cpu, quick, warmup);
            ArrayNode results = doc.putArray("results");
            for (String name : chosen) {
                System.out.print("  running " + name + " on the cluster…\r");
                System.out.flush();
                DiskProbe.Result probe = DiskProbe.run(root);
                RaftBatching.Count before = RaftBatching.read(urls(cluster), shard.shard());
                BenchReport report = all.get(name).run(bench);
                RaftBatching.Count after = RaftBatching.read(urls(cluster), shard.shard());
                report.disk = probe;
                report.extra.put("servers", settings.nodes());
                if (before != null && after != null && after.entries() > before.entries()) {
                    // over the scenario's warm-up and run alike (the same requests): the client writes per Raft entry
                    RaftBatching.Count d = after.minus(before);
                    report.extra.put("raftEntries", d.entries())
                            .put("commandsPerRaftEntry", Math.round(d.perEntry() * 100) / 100.0);
                }
                System.out.println(report.line());
                results.add(report.json());
            }
            LocalCluster.Shard end = cluster.shardOf(WORKSPACE);
            doc.put("leaderAtEnd", end.leader()).put("termAtEnd", end.term());
            ArrayNode comparison = ClusterComparison.rows(single, results);
            doc.set("comparison", comparison);
            ObjectNode goal = ClusterComparison.goal(comparison);
            if (goal != null) {
                doc.set("goal", goal);
            }
            if (settings.failovers() > 0) {
                doc.set("failover", failovers(cluster, settings.failovers()));
            }
            cluster.terminate();
        }
        return doc;
    }

    private static List<String> urls(LocalCluster cluster) {
        return cluster.up().stream().map(cluster::url).toList();
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

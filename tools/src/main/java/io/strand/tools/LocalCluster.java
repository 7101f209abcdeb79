package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ServerProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The nodes of a cluster (SPEC §13) that {@code strand bench --cluster N} starts on loopback: node
 * {@code nK} is a server in its own child JVM ({@link ServerProcess}) in cluster mode, with its own
 * fresh data directory under one root, a Raft port fixed for its life and an HTTP port picked at each
 * start, {@code --auth false}. It knows every node's HTTP address (a node's {@code GET /v1/cluster}
 * knows only its own) and waits on that route for the shards' leaders. Thread-safe: the running
 * nodes are a concurrent map; start, kill and restart of one node are called from one thread.
 */
final class LocalCluster implements AutoCloseable {
    /** Every shard with a leader: a fresh cluster's first elections, or the failover after a kill. */
    static final Duration LEADERS_TIMEOUT = Duration.ofSeconds(120);
    /** After that, how long to give leadership to settle on each shard's preferred replica (Ratis priorities). */
    static final Duration PREFERRED_GRACE = Duration.ofSeconds(20);
    /**
     * How long one node may take to listen: it opens a store set and a Raft group per shard it holds;
     * with 8 shards on a 2-core machine that other builds were loading, one took over 2 minutes.
     */
    static final Duration START_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration POLL = Duration.ofMillis(100);

    private final Path root;
    private final int shards;
    private final List<String> serverArgs;
    private final List<String> jvmOptions;
    private final Map<String, Integer> raftPorts = new LinkedHashMap<>();
    private final Map<String, ServerProcess> running = new ConcurrentHashMap<>();

    /**
     * {@code nodes} nodes over {@code shards} shards (3 replicas each, or all nodes when fewer), data
     * under {@code root}; {@code serverArgs} are added to every node's (e.g. the durability mode).
     */
    LocalCluster(Path root, int nodes, int shards, List<String> serverArgs, List<String> jvmOptions) throws IOException {
        if (nodes < 1) {
            throw new IllegalArgumentException("a cluster needs at least one node, not " + nodes);
        }
        this.root = root;
        this.shards = shards;
        this.serverArgs = List.copyOf(serverArgs);
        this.jvmOptions = List.copyOf(jvmOptions);
        List<ServerSocket> held = new ArrayList<>();
        try {
            // every port held open until all are chosen: the kernel may offer a just-closed port again
            for (int i = 1; i <= nodes; i++) {
                ServerSocket s = new ServerSocket(0);
                held.add(s);
                raftPorts.put("n" + i, s.getLocalPort());
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    /** The {@code --cluster} list every node is started with. */
    String members() {
        return raftPorts.entrySet().stream().map(e -> e.getKey() + "=127.0.0.1:" + e.getValue()).collect(Collectors.joining(","));
    }

    List<String> ids() {
        return List.copyOf(raftPorts.keySet());
    }

    int shards() {
        return shards;
    }

    /**
     * Starts every node, one after the other: a node listens before its peers are up (its shards
     * elect leaders once a majority is), and one JVM starting at a time gets each the whole start
     * timeout on a busy 2-core machine. Then wait with {@link #awaitLeaders}.
     */
    void start() throws IOException {
        for (String id : ids()) {
            start(id);
        }
    }

    /** Starts (or restarts, over the same data) node {@code id}; returns when it listens. */
    void start(String id) throws IOException {
        List<String> args = new ArrayList<>(List.of("--auth", "false", "--node-id", id, "--cluster", members(),
                "--shards", Integer.toString(shards)));
        args.addAll(serverArgs);
        try {
            running.put(id, ServerProcess.start(dataDir(id), args, jvmOptions, START_TIMEOUT));
        } catch (IOException e) {
            throw new IOException("cluster node " + id + ": " + e.getMessage(), e);
        }
    }

    Path dataDir(String id) {
        return root.resolve(id);
    }

    /** The HTTP base URL of running node {@code id}. */
    String url(String id) {
        return node(id).url;
    }

    /** The socket URL of workspace {@code ws} on node {@code id}. */
    String socketUrl(String id, String ws) {
        return url(id).replace("http://", "ws://") + "/v1/ws/" + ws + "/socket";
    }

    long pid(String id) {
        return node(id).process.pid();
    }

    /** The pids of the running nodes, in node order. */
    List<Long> pids() {
        return ids().stream().filter(running::containsKey).map(this::pid).toList();
    }

    List<String> up() {
        return ids().stream().filter(running::containsKey).toList();
    }

    private ServerProcess node(String id) {
        ServerProcess p = running.get(id);
        if (p == null) {
            throw new IllegalStateException("node " + id + " is not running");
        }
        return p;
    }

    /** SIGKILL, and wait until the process is gone. */
    void kill(String id) throws InterruptedException {
        ServerProcess p = running.remove(id);
        if (p != null) {
            p.process.toHandle().destroyForcibly();
            p.process.waitFor();
        }
    }

    /** {@code GET /v1/cluster} asked of node {@code id}. */
    JsonNode status(String id) {
        return new StrandClient(url(id), null, Duration.ofSeconds(10)).get("/v1/cluster");
    }

    /** {@code GET /v1/cluster/shard?ws=}: the shard holding workspace {@code ws}, its leader (null while none) and term. */
    Shard shardOf(String ws) {
        CliFailure last = null;
        for (String id : up()) {
            try {
                JsonNode r = new StrandClient(url(id), null, Duration.ofSeconds(10)).get("/v1/cluster/shard?ws=" + ws);
                return new Shard(r.path("shard").asInt(), r.path("leader").isTextual() ? r.path("leader").asText() : null,
                        r.path("term").asLong(), r.path("replicas").get(0).asText());
            } catch (CliFailure e) {
                last = e;
            }
        }
        throw new IllegalStateException("no running node answered /v1/cluster/shard?ws=" + ws + (last == null ? "" : ": " + last));
    }

    /** A shard as the cluster reports it: its number, leader (null while there is none), term and preferred leader. */
    record Shard(int shard, String leader, long term, String preferred) {
    }

    /**
     * Polls {@code GET /v1/cluster} on the running nodes until every node is up and every shard has
     * a leader (failing after {@link #LEADERS_TIMEOUT}), then for up to {@link #PREFERRED_GRACE} until
     * each shard's leader is its preferred replica, so leadership does not move in a timed window.
     *
     * @return the last status, and whether leadership settled on the preferred replicas
     */
    Leaders awaitLeaders() throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + LEADERS_TIMEOUT.toNanos();
        JsonNode status = null;
        String why = "no answer yet";
        while (true) {
            for (String id : up()) {
                try {
                    status = status(id);
                    why = missing(status, up().size());
                    if (why == null) {
                        break;
                    }
                } catch (CliFailure e) {
                    why = id + ": " + e.getMessage();
                }
            }
            if (why == null) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the cluster has no leader for every shard after " + LEADERS_TIMEOUT + ": " + why);
            }
            Thread.sleep(POLL);
        }
        double electedSeconds = (System.nanoTime() - start) / 1e9;
        long grace = System.nanoTime() + PREFERRED_GRACE.toNanos();
        while (!preferredLead(status) && System.nanoTime() < grace) {
            Thread.sleep(POLL);
            try {
                JsonNode next = status(up().get(0));
                if (missing(next, up().size()) == null) {
                    status = next;
                }
            } catch (CliFailure e) {
                // a node busy or between leaders: ask again
            }
        }
        return new Leaders(status, preferredLead(status), electedSeconds);
    }

    /** The cluster's status once every shard had a leader; {@code preferred}: each led by its first replica. */
    record Leaders(JsonNode status, boolean preferred, double electedSeconds) {
    }

    /** Null when {@code status} shows {@code nodes} nodes up and a leader on every shard, else what is missing. */
    static String missing(JsonNode status, int nodes) {
        long upCount = 0;
        for (JsonNode n : status.path("nodes")) {
            upCount += n.path("up").asBoolean() ? 1 : 0;
        }
        if (upCount < nodes) {
            return upCount + " of " + nodes + " nodes up";
        }
        List<String> leaderless = new ArrayList<>();
        for (JsonNode s : status.path("shards")) {
            if (!s.path("leader").isTextual()) {
                leaderless.add(s.path("shard").asText());
            }
        }
        if (status.path("shards").isEmpty()) {
            return "no shards listed";
        }
        return leaderless.isEmpty() ? null : "no leader on shard(s) " + String.join(",", leaderless);
    }

    /** True when every shard of {@code status} is led by its preferred replica (listed first). */
    static boolean preferredLead(JsonNode status) {
        for (JsonNode s : status.path("shards")) {
            if (!s.path("leader").asText("").equals(s.path("replicas").path(0).asText())) {
                return false;
            }
        }
        return true;
    }

    /** SIGTERM to every node (a clean stop, so a flight recording is written), each in turn; one that does not stop is killed. */
    void terminate() throws InterruptedException {
        for (String id : up()) {
            ServerProcess p = running.remove(id);
            if (p != null) {
                try {
                    p.terminate();
                } catch (IllegalStateException stillRunning) {
                    p.close();
                }
            }
        }
    }

    /** SIGKILL to whatever still runs. */
    @Override
    public void close() {
        for (String id : up()) {
            ServerProcess p = running.remove(id);
            if (p != null) {
                p.close();
            }
        }
    }
}

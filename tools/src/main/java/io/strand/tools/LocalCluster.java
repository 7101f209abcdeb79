package io.strand.tools;

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
final class LocalCluster implements BenchCluster {
    /**
     * How long one node may take to listen: it opens a store set and a Raft group per shard it holds;
     * with 8 shards on a 2-core machine that other builds were loading, one took over 2 minutes.
     */
    static final Duration START_TIMEOUT = Duration.ofMinutes(5);

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

    @Override
    public String url(String id) {
        return node(id).url;
    }

    long pid(String id) {
        return node(id).process.pid();
    }

    /** No token: the nodes run with {@code --auth false}. */
    @Override
    public String token() {
        return null;
    }

    /** The nodes' CPU from {@code /proc} (their pids), summed, with their JIT threads'. */
    @Override
    public CpuMeter cpu() {
        return CpuMeter.forServers(pids());
    }

    /** The pids of the running nodes, in node order. */
    List<Long> pids() {
        return ids().stream().filter(running::containsKey).map(this::pid).toList();
    }

    @Override
    public List<String> up() {
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

    /** SIGTERM to every node (a clean stop, so a flight recording is written), each in turn; one that does not stop is killed. */
    @Override
    public void terminate() throws InterruptedException {
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

package io.strand.app.testing;

import io.strand.app.ServerProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A cluster of real server processes on loopback (SPEC §13): node {@code nK} has its own data
 * directory under {@code dir} and a fixed Raft port, its HTTP port is picked at each start. Nodes
 * are killed with SIGKILL and restarted over the same data. Owned by the test thread.
 */
public final class ClusterNodes implements AutoCloseable {
    private final Path dir;
    private final List<String> extraArgs;
    private final Map<String, Integer> raftPorts = new LinkedHashMap<>();
    private final Map<String, ServerProcess> running = new LinkedHashMap<>();
    private final int shards;
    private final boolean auth;

    /** Nodes started with {@code --auth false}. */
    public ClusterNodes(Path dir, int nodes, int shards, List<String> extraArgs) throws IOException {
        this(dir, nodes, shards, extraArgs, false);
    }

    /** Nodes with signed tokens when {@code auth} (each writes the cluster's root token to {@code DATA/root.token}). */
    public ClusterNodes(Path dir, int nodes, int shards, List<String> extraArgs, boolean auth) throws IOException {
        this.dir = dir;
        this.shards = shards;
        this.extraArgs = extraArgs;
        this.auth = auth;
        for (int i = 1; i <= nodes; i++) {
            raftPorts.put("n" + i, freePort());
        }
    }

    /** The {@code --cluster} list every node is started with. */
    public String members() {
        return raftPorts.entrySet().stream().map(e -> e.getKey() + "=127.0.0.1:" + e.getValue()).collect(Collectors.joining(","));
    }

    /** Adds a node that is not in the original list (for {@code replace}); returns its {@code id=HOST:PORT}. */
    public String addSpare(String id) throws IOException {
        raftPorts.put(id, freePort());
        return id + "=127.0.0.1:" + raftPorts.get(id);
    }

    /** Starts every node of the original list at once (a new cluster's nodes wait for each other). */
    public void startAll() throws Exception {
        List<Thread> starts = new ArrayList<>();
        List<Exception> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (String id : List.copyOf(raftPorts.keySet())) {
            starts.add(Thread.ofVirtual().start(() -> {
                try {
                    start(id);
                } catch (Exception e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread t : starts) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
    }

    /** Starts (or restarts) node {@code id} over its data directory. */
    public ServerProcess start(String id) throws IOException {
        return start(id, members());
    }

    /** Starts node {@code id} with {@code memberList} as its {@code --cluster} (a replacement node knows the new list). */
    public synchronized ServerProcess start(String id, String memberList) throws IOException {
        List<String> args = new ArrayList<>(List.of("--auth", String.valueOf(auth), "--node-id", id, "--cluster", memberList,
                "--shards", String.valueOf(shards)));
        args.addAll(extraArgs);
        ServerProcess p = ServerProcess.start(dataDir(id), args, List.of("-Xmx256m"));
        synchronized (this) {
            running.put(id, p);
        }
        return p;
    }

    public Path dataDir(String id) {
        return dir.resolve(id);
    }

    /** SIGKILL, and wait until the process is gone. */
    public void kill(String id) throws InterruptedException {
        ServerProcess p;
        synchronized (this) {
            p = running.remove(id);
        }
        if (p != null) {
            p.process.destroyForcibly();
            p.process.waitFor();
        }
    }

    public synchronized String url(String id) {
        ServerProcess p = running.get(id);
        return p == null ? null : p.url;
    }

    public synchronized List<String> up() {
        return List.copyOf(running.keySet());
    }

    public synchronized long pid(String id) {
        return running.get(id).process.pid();
    }

    @Override
    public void close() {
        for (String id : up()) {
            try {
                kill(id);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}

package io.strand.app.testing;

import io.strand.app.ServerProcess;
import io.strand.core.FreePorts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A cluster of real server processes on loopback (SPEC §13): node {@code nK} has its own data
 * directory under {@code dir} and a fixed Raft port, its HTTP port is picked at each start. Nodes
 * are killed with SIGKILL and restarted over the same data, paused with SIGSTOP and resumed with
 * SIGCONT. A {@link Net} other than {@link Net#LOOPBACK} gives each node its own addresses and runs
 * it under a launcher (a network namespace), so a test can cut one node's links. Owned by the test
 * thread.
 */
public final class ClusterNodes implements AutoCloseable {
    /** Where each node listens and how its JVM is launched. */
    public interface Net {
        /** Every node on 127.0.0.1, launched directly. */
        Net LOOPBACK = new Net() {
        };

        /** The host of the node's Raft server in the {@code --cluster} list. */
        default String raftHost(String id) {
            return "127.0.0.1";
        }

        /** The node's {@code --host} (HTTP and WebSocket). */
        default String httpHost(String id) {
            return "127.0.0.1";
        }

        /** The command the node's java runs under (it must exec java), none by default. */
        default List<String> launcher(String id) {
            return List.of();
        }
    }

    private final Path dir;
    private final List<String> extraArgs;
    private final List<String> jvmArgs;
    private final Net net;
    private final Map<String, Integer> raftPorts = new LinkedHashMap<>();
    private final Map<String, ServerProcess> running = new LinkedHashMap<>();
    private final int shards;
    private final boolean auth;

    /** Nodes started with {@code --auth false}. */
    public ClusterNodes(Path dir, int nodes, int shards, List<String> extraArgs) throws IOException {
        this(dir, nodes, shards, extraArgs, List.of(), Net.LOOPBACK, false);
    }

    /** Nodes with signed tokens when {@code auth} (each writes the cluster's root token to {@code DATA/root.token}). */
    public ClusterNodes(Path dir, int nodes, int shards, List<String> extraArgs, boolean auth) throws IOException {
        this(dir, nodes, shards, extraArgs, List.of(), Net.LOOPBACK, auth);
    }

    /** @param jvmArgs JVM options of every node, e.g. the hidden {@code -Dstrand.cluster.snapshotEvery=…} */
    public ClusterNodes(Path dir, int nodes, int shards, List<String> extraArgs, List<String> jvmArgs, Net net) throws IOException {
        this(dir, nodes, shards, extraArgs, jvmArgs, net, false);
    }

    /** The general form. */
    public ClusterNodes(Path dir, int nodes, int shards, List<String> extraArgs, List<String> jvmArgs, Net net, boolean auth)
            throws IOException {
        this.dir = dir;
        this.shards = shards;
        this.extraArgs = extraArgs;
        this.jvmArgs = jvmArgs;
        this.net = net;
        this.auth = auth;
        for (int i = 1; i <= nodes; i++) {
            raftPorts.put("n" + i, FreePorts.next());
        }
    }

    /** The {@code --cluster} list every node is started with. */
    public String members() {
        return raftPorts.keySet().stream().map(this::member).collect(Collectors.joining(","));
    }

    /** Node {@code id} as it appears in the {@code --cluster} list: {@code id=HOST:RAFTPORT}. */
    public String member(String id) {
        return id + "=" + net.raftHost(id) + ":" + raftPorts.get(id);
    }

    /** Adds a node that is not in the original list (for {@code replace}); returns its {@code id=HOST:PORT}. */
    public String addSpare(String id) throws IOException {
        raftPorts.put(id, FreePorts.next());
        return member(id);
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
    public ServerProcess start(String id, String memberList) throws IOException {
        return start(id, memberList, List.of());
    }

    /** {@link #start(String, String)} with {@code moreArgs} for this start only (e.g. {@code --cluster-join true}). */
    public ServerProcess start(String id, String memberList, List<String> moreArgs) throws IOException {
        return start(id, memberList, moreArgs, List.of());
    }

    /** As above, with {@code moreJvm} JVM options for this start only (e.g. a {@code -Dstrand.failpoint=…}). */
    public synchronized ServerProcess start(String id, String memberList, List<String> moreArgs, List<String> moreJvm)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("--auth", String.valueOf(auth), "--node-id", id, "--cluster", memberList,
                "--shards", String.valueOf(shards), "--host", net.httpHost(id)));
        args.addAll(extraArgs);
        args.addAll(moreArgs);
        List<String> jvm = new ArrayList<>(List.of("-Xmx256m"));
        jvm.addAll(jvmArgs);
        jvm.addAll(moreJvm);
        ServerProcess p = ServerProcess.start(dataDir(id), args, jvm, net.launcher(id));
        System.out.println("ClusterNodes: " + id + " started, pid " + p.process.pid() + " (its output: target/child-logs/"
                + p.process.pid() + ".log)");
        synchronized (this) {
            running.put(id, p);
        }
        return p;
    }

    /** A client of node {@code id}'s HTTP port (no token: the nodes run with {@code --auth false} unless made with auth). */
    public Http http(String id) {
        return new Http(url(id), null);
    }

    /**
     * Retries {@code call} while it answers {@code 503} (no leader yet, an election, or the node's
     * replica catching up before it serves a read), for up to 60 s; returns the last answer.
     */
    public static Http.Reply untilNot503(java.util.function.Supplier<Http.Reply> call) {
        return untilNot503(call, Http.Reply::status);
    }

    /** {@link #untilNot503(java.util.function.Supplier)} for any client's answers, {@code status} reading their status. */
    public static <R> R untilNot503(java.util.function.Supplier<R> call, java.util.function.ToIntFunction<R> status) {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(60).toNanos();
        R r = call.get();
        while (status.applyAsInt(r) == 503 && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L); // poll pace, not a wait for an event
            r = call.get();
        }
        return r;
    }

    /**
     * A workspace named {@code prefix}N whose shard node {@code id} leads now and is the preferred leader
     * of ({@code replicas[0]}), so that it keeps leading. A shard led by another node's stand-in moves
     * to its preferred leader once that one has caught up (Ratis's priorities): in CI on a slow machine
     * (2026-12-06) n3 came up 8 s after n1, n1 handed it a shard 0.5 s after this method had picked that
     * shard's workspace, and ClusterColdDeleteIT's fail point on n1 never fired.
     */
    public String workspaceLedBy(String id, String prefix) {
        for (int i = 0; i < 200; i++) {
            String ws = prefix + i;
            String asking = up().getFirst();
            Http.Reply r = untilNot503(() -> http(asking).get("/v1/cluster/shard?ws=" + ws));
            if (r.status() == 200 && id.equals(r.json().path("leader").asText())
                    && id.equals(r.json().path("replicas").path(0).asText())) {
                return ws;
            }
        }
        throw new AssertionError(id + " leads no shard it is the preferred leader of");
    }

    /** Node {@code id}'s {@code root.token} (a cluster with auth), once it has loaded the cluster's signing key and written it. */
    public String rootToken(String id, java.time.Duration timeout) throws IOException, InterruptedException {
        Path file = dataDir(id).resolve("root.token");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!java.nio.file.Files.exists(file) && System.nanoTime() < deadline) {
            Thread.sleep(50); // polling a file with a deadline; nothing to wait on
        }
        if (!java.nio.file.Files.exists(file)) {
            throw new AssertionError(id + " wrote no root.token within " + timeout);
        }
        return java.nio.file.Files.readString(file).trim();
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

    /** SIGSTOP: the node stops dead (no thread runs, its sockets stay open) until {@link #resume}. */
    public void pause(String id) throws IOException, InterruptedException {
        signal("-STOP", id);
    }

    /** SIGCONT after {@link #pause}. */
    public void resume(String id) throws IOException, InterruptedException {
        signal("-CONT", id);
    }

    private void signal(String signal, String id) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(pid(id))).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill " + signal + " " + pid(id) + " failed");
        }
    }

    /** Deletes node {@code id}'s data directory (the node must be down): it comes back empty. */
    public void wipe(String id) throws IOException {
        if (up().contains(id)) {
            throw new IllegalStateException("wipe " + id + " while it runs");
        }
        Path data = dataDir(id);
        if (java.nio.file.Files.exists(data)) {
            try (var walk = java.nio.file.Files.walk(data)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    java.nio.file.Files.delete(p);
                }
            }
        }
    }

    public int raftPort(String id) {
        return raftPorts.get(id);
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
}

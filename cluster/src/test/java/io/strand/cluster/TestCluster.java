package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.strand.core.FreePorts;
import io.strand.core.StrandException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * N in-process cluster nodes on random loopback ports with temp data dirs, each with
 * {@link LedgerEngine}s, and the polling helpers the cluster tests share. Used by one test thread.
 * A test class holds one as a per-test extension, which gives each test a fresh temp dir and stops
 * every node after it:
 * <pre>{@code
 * @RegisterExtension
 * final TestCluster cluster = TestCluster.perTest(3, SHARDS); // or perTest(), then cluster.start(...) in the test
 * }</pre>
 */
final class TestCluster implements AutoCloseable, BeforeEachCallback, AfterEachCallback {
    static {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
    }

    /** How long a test waits for one step of the cluster (an ack, a catch-up) unless it says otherwise. */
    static final Duration WAIT = Duration.ofSeconds(30);

    private static final Logger RATIS_LOG = Logger.getLogger("org.apache.ratis");
    private static final Logger GRPC_LOG = Logger.getLogger("org.apache.ratis.thirdparty");
    private static final Logger STRAND_LOG = Logger.getLogger("strand.cluster");

    static { // Ratis is chatty about every refused connection of a stopped node; STRAND_TEST_RATIS_LOG=INFO to see it
        RATIS_LOG.setLevel(Level.parse(System.getProperty("strand.test.ratisLog", System.getenv().getOrDefault("STRAND_TEST_RATIS_LOG", "OFF"))));
        GRPC_LOG.setLevel(Level.OFF);
        STRAND_LOG.setLevel(Level.WARNING);
    }

    /** One node's factory: remembers the engine each shard has now and how often it was replaced. */
    static final class Engines implements ShardEngineFactory {
        final Map<Integer, LedgerEngine> current = new ConcurrentHashMap<>();
        final AtomicInteger replacements = new AtomicInteger();
        final AtomicInteger openedFromSnapshot = new AtomicInteger();

        @Override
        public ShardEngine open(int shard, Path liveDir) throws IOException {
            LedgerEngine e = new LedgerEngine(shard, liveDir);
            if (e.count() > 0) {
                openedFromSnapshot.incrementAndGet();
            }
            current.put(shard, e);
            return e;
        }

        @Override
        public void replaced(int shard, ShardEngine old, ShardEngine now) {
            replacements.incrementAndGet();
        }
    }

    private final int startNodes;
    private final int startShards;
    private Path root;
    private ClusterSpec base;
    private final Map<String, RaftNode> running = new java.util.concurrent.ConcurrentSkipListMap<>();
    private final Map<String, Engines> engines = new ConcurrentHashMap<>();
    private final Map<String, ClusterSpec> specs = new LinkedHashMap<>();
    private final Map<String, java.util.concurrent.CompletableFuture<Void>> dying = new ConcurrentHashMap<>();

    private TestCluster(int startNodes, int startShards) {
        this.startNodes = startNodes;
        this.startShards = startShards;
    }

    /** A cluster for {@code @RegisterExtension} that each test starts itself with {@link #start}. */
    static TestCluster perTest() {
        return new TestCluster(0, 0);
    }

    /** A cluster for {@code @RegisterExtension} of {@code nodes} nodes and {@code shards} shards, started before each test. */
    static TestCluster perTest(int nodes, int shards) {
        return new TestCluster(nodes, shards);
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        root = Files.createTempDirectory("strand-cluster-test");
        if (startNodes > 0) {
            start(startNodes, startShards, s -> s);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws IOException {
        close();
        ShardSnapshots.deleteTree(root);
    }

    /** Starts {@code nodes} nodes with {@code shards} shards and returns once every shard has a leader. */
    void start(int nodes, int shards, UnaryOperator<ClusterSpec> tune) throws IOException {
        StringBuilder list = new StringBuilder();
        for (int i = 1; i <= nodes; i++) {
            list.append(i > 1 ? "," : "").append("n").append(i).append("=127.0.0.1:").append(FreePorts.next());
        }
        base = tune.apply(ClusterSpec.of("n1", list.toString(), shards, root.resolve("n1")));
        for (ClusterSpec.Member m : base.members()) {
            specs.put(m.id(), base.forNode(m.id(), root.resolve(m.id())));
        }
        try { // in parallel, as real nodes start: the first election needs a majority up
            List<java.util.concurrent.CompletableFuture<RaftNode>> starting = new ArrayList<>();
            for (String id : specs.keySet()) {
                starting.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return startNode(id);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }, r -> Thread.ofPlatform().daemon().start(r)));
            }
            starting.forEach(java.util.concurrent.CompletableFuture::join);
            for (int k = 0; k < shards; k++) { // ready: every shard has a leader
                leaderOf(k, Duration.ofSeconds(30));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Where node {@code id} keeps its data (under this test's temp dir). */
    Path dir(String id) {
        return root.resolve(id);
    }

    RaftNode startNode(String id) throws IOException {
        awaitDead(id);
        Engines e = new Engines();
        engines.put(id, e);
        RaftNode node = RaftNode.start(specs.get(id), e);
        running.put(id, node);
        return node;
    }

    /** Starts a node that is not in the member list, to be added by replace. */
    RaftNode startJoining(String id) throws IOException {
        ClusterSpec.Member self = new ClusterSpec.Member(id, "127.0.0.1", FreePorts.next());
        specs.put(id, base.joiningAs(self, root.resolve(id)));
        return startNode(id);
    }

    ClusterSpec.Member member(String id) {
        return specs.get(id).self();
    }

    RaftNode node(String id) {
        RaftNode n = running.get(id);
        if (n == null) {
            throw new IllegalStateException(id + " is not running");
        }
        return n;
    }

    List<RaftNode> nodes() {
        return List.copyOf(running.values());
    }

    /**
     * Stops a node the way kill -9 looks from outside: its Raft port closes at once, then its replicas
     * stop on a background thread (the test goes on at once, as a client of a dying process would); a
     * restart of the node waits for that.
     */
    void kill(String id) {
        RaftNode n = running.remove(id);
        if (n != null) {
            dying.put(id, java.util.concurrent.CompletableFuture.runAsync(n::halt, r -> Thread.ofPlatform().daemon().start(r)));
        }
    }

    /** Waits until a {@link #kill killed} node is down (its halt runs in the background). */
    void awaitDead(String id) {
        java.util.concurrent.CompletableFuture<Void> d = dying.remove(id);
        if (d != null) {
            d.join();
        }
    }

    /** Stops a node cleanly (replicas snapshot on stop when the spec says so). */
    void stop(String id) {
        RaftNode n = running.remove(id);
        if (n != null) {
            n.close();
        }
    }

    /** Kills node {@code id} and deletes its data dir; returns its spec, to start it again empty. */
    ClusterSpec killAndWipe(String id) throws IOException {
        ClusterSpec spec = node(id).spec();
        kill(id);
        wipe(id);
        return spec;
    }

    void wipe(String id) throws IOException {
        awaitDead(id);
        if (running.containsKey(id)) {
            throw new IllegalStateException("stop " + id + " before wiping it");
        }
        ShardSnapshots.deleteTree(root.resolve(id));
    }

    Engines engines(String id) {
        return engines.get(id);
    }

    /** The engines of shard k on the running nodes that host it. */
    Map<String, LedgerEngine> replicas(int shard) {
        Map<String, LedgerEngine> out = new TreeMap<>();
        for (Map.Entry<String, RaftNode> e : running.entrySet()) {
            if (e.getValue().hosts(shard)) {
                LedgerEngine le = engines.get(e.getKey()).current.get(shard);
                if (le != null) {
                    out.put(e.getKey(), le);
                }
            }
        }
        return out;
    }

    /** Waits until every running replica of {@code shard} holds exactly {@code count} commands, all identical. */
    void awaitIdentical(int shard, int count, int replicas, Duration timeout) {
        until(timeout, () -> "shard " + shard + " replicas identical with " + count + " commands: " + fingerprints(shard), () -> {
            Map<String, LedgerEngine> r = replicas(shard);
            return r.size() == replicas && r.values().stream().allMatch(e -> e.count() == count)
                    && r.values().stream().map(LedgerEngine::fingerprint).distinct().count() == 1;
        });
    }

    Map<String, String> fingerprints(int shard) {
        Map<String, String> out = new TreeMap<>();
        replicas(shard).forEach((id, e) -> out.put(id, e.fingerprint()));
        return out;
    }

    /** The current leader of {@code shard}, once one of the running nodes knows it and it is running. */
    String leaderOf(int shard, Duration timeout) {
        String[] leader = new String[1];
        until(timeout, () -> "a running leader of shard " + shard, () -> {
            for (RaftNode n : running.values()) {
                if (n.hosts(shard)) {
                    String l = n.status().shard(shard).leader();
                    if (l != null && running.containsKey(l) && running.get(l).division(shard)
                            .map(d -> d.getInfo().isLeader()).orElse(false)) {
                        leader[0] = l;
                        return true;
                    }
                }
            }
            return false;
        });
        return leader[0];
    }

    /** Submits until acked (each try bounded by the request timeout); returns the reply. */
    static byte[] submitUntilAck(RaftNode via, int shard, byte[] command, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        StrandException last = null;
        while (System.nanoTime() < deadline) {
            try {
                return via.submit(shard, command).join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof StrandException se) {
                    last = se;
                    continue;
                }
                throw e;
            }
        }
        throw new AssertionError("no ack for shard " + shard + " within " + timeout, last);
    }

    static byte[] command(String text) {
        return RaftNode.utf8(text);
    }

    /** Asserts the reply is the engine's reply to exactly this command (counter, then the command). */
    static long counterOf(byte[] reply, byte[] command) {
        byte[] echoed = java.util.Arrays.copyOfRange(reply, 8, reply.length);
        assertEquals(new String(command), new String(echoed), "a caller got another command's reply");
        return java.nio.ByteBuffer.wrap(reply).getLong();
    }

    static void until(Duration timeout, Supplier<String> what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + timeout + " waiting for " + what.get());
            }
            try {
                Thread.sleep(20); // polling interval, not synchronisation
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    List<String> runningIds() {
        return new ArrayList<>(running.keySet());
    }

    @Override
    public void close() {
        for (String id : new ArrayList<>(running.keySet())) {
            stop(id);
        }
        for (String id : new ArrayList<>(dying.keySet())) {
            awaitDead(id);
        }
    }
}

package io.strand.app.cluster;

import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.stores.Placement;
import io.strand.app.stores.ReplicatedStreams;
import io.strand.app.stores.Stores;
import io.strand.app.stores.WritePath;
import io.strand.cluster.ClusterSpec;
import io.strand.cluster.RaftNode;
import io.strand.cluster.ShardEngine;
import io.strand.cluster.ShardEngineFactory;
import io.strand.cluster.ShardMetrics;
import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.ColdStore;
import io.strand.core.Durability;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.ReplicatedRolls;
import io.strand.logtier.ReplicatedTrims;
import io.strand.logtier.ColdTier;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntConsumer;

/**
 * A cluster node's placement (SPEC §13): one {@link Stores} per shard this node replicates, each
 * the state machine of the shard's Raft group ({@link StoresEngine}), writes proposed to the group
 * ({@link ReplicatedWrites}), reads served from the local replica after a read barrier. Thread-safe:
 * the engine map is swapped only by the shard's apply thread (snapshot installed), read by any.
 *
 * <p>Replicas run their stores in {@code os} mode with no write-ahead log of their own: the Raft
 * log, fsynced on a majority before the ack, is the durable copy, and a restarted replica rebuilds
 * from its last snapshot plus the log.
 *
 * <p>Cold tier (SPEC §13), with {@code --cold} only (each node's data directory is its own, so
 * there is no default): one object store shared by every node, opened once here, and a block cache
 * shared by this node's shards. Every replica reads it; each shard's roller writes it only while
 * this node leads the shard ({@link RaftNode#leaderTerm}, which also fences each manifest commit),
 * and proposes step 6 of each roll to the shard ({@link ShardCommands#coldCovered}), so every
 * replica drops its own hot files when it applies that entry.
 */
public final class ClusterPlacement implements Placement {
    /** How long a read waits for the local replica to catch up, and a write for a quorum, before {@code 503}. */
    static final long TIMEOUT_MILLIS = 5_000;
    /** How long a read waits for a read index before it is served from the local copy as it is. */
    static final long READ_BARRIER_MILLIS = 2_000;
    private final java.util.concurrent.atomic.AtomicLong localOnlyReads = new java.util.concurrent.atomic.AtomicLong();
    private final ServerConfig config;
    private final StrandMetrics metrics;
    /** What each shard replica applies Durable Streams writes through. */
    private final ReplicatedStreams streams;
    private final ClusterSpec spec;
    private final Map<Integer, StoresEngine> engines = new ConcurrentHashMap<>();
    /** Told of the leader's policy trims of every shard replica's stores, set once the audit log exists. */
    private volatile io.strand.logtier.Retention.PolicyTrims policyTrims = (ws, log, first, policy) -> { };
    /** Where every node serves HTTP (the system shard's {@code _system/nodes}). */
    private final NodeDirectory directory;
    /** Told just before a shard's stores close (see {@link #onStoresClosing}). */
    private final List<IntConsumer> closingListeners = new CopyOnWriteArrayList<>();
    private final RaftNode node;
    /** {@link #node} for the rollers, which start (inside {@link RaftNode#start}) before it is assigned. */
    private final java.util.concurrent.atomic.AtomicReference<RaftNode> raft = new java.util.concurrent.atomic.AtomicReference<>();
    private final ReplicatedWrites writes;
    /** The shared cold store and this node's block cache over it; null without {@code --cold}. */
    private final ColdStore coldStore;
    private final BlockCache coldCache;

    private ClusterPlacement(ServerConfig config, StrandMetrics metrics, ReplicatedStreams streams) {
        this.streams = streams;
        this.config = config;
        this.metrics = metrics;
        ServerConfig.Cluster c = config.cluster();
        ClusterSpec base = tuned(ClusterSpec.of(c.nodeId(), c.members(), c.shards(), config.dataDir()).withReplicas(c.replicas())
                .withElectionTimeout(c.electionTimeout()));
        this.spec = c.joining() ? base.joiningAs(base.member(c.nodeId()).orElseThrow(() -> new IllegalArgumentException(
                "--node-id " + c.nodeId() + " is not in --cluster " + c.members())), config.dataDir()) : base;
        this.directory = new NodeDirectory(this, spec.nodeId());
        io.strand.coldtier.ColdStoreConfig cold = config.coldStoreConfig();
        this.coldStore = cold == null ? null : cold.open();
        this.coldCache = cold == null ? null : new BlockCache(BlockCache.DEFAULT_BUDGET_BYTES);
        try {
            this.node = RaftNode.start(spec, new Factory());
        } catch (java.io.IOException | RuntimeException e) {
            if (coldStore != null) {
                coldStore.close();
            }
            if (e instanceof RuntimeException r) {
                throw r;
            }
            throw new java.io.UncheckedIOException("cannot start the cluster node " + c.nodeId() + ": " + e.getMessage(), (java.io.IOException) e);
        }
        raft.set(node);
        this.writes = new ReplicatedWrites(spec::shardOf, node::submit, this, coldStore != null);
        registerShardMetrics();
    }

    /** Per shard (label {@code shard}): leader, term, commit index, apply lag, follower lag, leader changes, proposals. */
    private void registerShardMetrics() {
        metrics.counter("strand.cluster.local.reads", "Reads served from the local copy because no read index came in time "
                + "and no majority of the shard's replicas was reachable", localOnlyReads::get);
        for (int k = 0; k < spec.shards(); k++) {
            int shard = k;
            java.util.function.Function<java.util.function.ToLongFunction<ShardMetrics>, java.util.function.Supplier<Number>> read =
                    f -> () -> ShardMetrics.of(node, shard).map(m -> (Number) f.applyAsLong(m)).orElse(null);
            metrics.shardGauge("strand.cluster.leader", "1 when this node leads the shard", shard, read.apply(ShardMetrics::leader));
            metrics.shardGauge("strand.cluster.term", "The shard's current Raft term", shard, read.apply(ShardMetrics::term));
            metrics.shardGauge("strand.cluster.commit.index", "The shard's Raft commit index as this replica knows it", shard,
                    read.apply(ShardMetrics::commitIndex));
            metrics.shardGauge("strand.cluster.apply.lag", "Entries committed but not yet applied by this replica", shard,
                    read.apply(ShardMetrics::applyLag));
            metrics.shardGauge("strand.cluster.follower.lag", "On the leader: the furthest follower's distance behind the commit index",
                    shard, read.apply(ShardMetrics::followerLag));
            metrics.shardGauge("strand.cluster.leader.changes", "Leader changes this replica saw since start (elections)", shard,
                    read.apply(ShardMetrics::leaderChanges));
            metrics.shardGauge("strand.cluster.proposed.entries", "Raft entries this node proposed to the shard since start",
                    shard, () -> node.proposer().entriesProposed(shard));
            metrics.shardGauge("strand.cluster.proposed.commands", "Client writes those entries carried (÷ entries: the batching factor)",
                    shard, () -> node.proposer().commandsProposed(shard));
        }
    }

    /** Starts this node's shard replicas; {@code streams} applies their Durable Streams writes (it may see some before this returns). */
    public static ClusterPlacement start(ServerConfig config, StrandMetrics metrics, ReplicatedStreams streams) {
        return new ClusterPlacement(config, metrics, streams);
    }

    /**
     * Hidden settings for fault tests, read as system properties like {@code strand.failpoint}:
     * {@code strand.cluster.snapshotEvery} (applied entries between snapshots, default
     * {@value ClusterSpec#DEFAULT_SNAPSHOT_EVERY}), {@code strand.cluster.snapshotDefer} (how many intervals a snapshot
     * may wait for the log to outgrow its copy, default {@value ClusterSpec#DEFAULT_SNAPSHOT_DEFER}; 1 makes the
     * interval exact) and {@code strand.cluster.segmentBytes} (Raft log
     * segment size, default 8 MiB), so a test can make the leader purge its log behind a snapshot
     * after a few hundred writes and force a snapshot install on a follower.
     */
    static ClusterSpec tuned(ClusterSpec spec) {
        Long every = Long.getLong("strand.cluster.snapshotEvery");
        Long segment = Long.getLong("strand.cluster.segmentBytes");
        Integer defer = Integer.getInteger("strand.cluster.snapshotDefer");
        ClusterSpec out = every == null ? spec : spec.withSnapshotEvery(every, spec.snapshotOnStop());
        out = defer == null ? out : out.withSnapshotDefer(defer);
        return segment == null ? out : out.withSegmentSizeMax(segment);
    }

    private final class Factory implements ShardEngineFactory {
        @Override
        public ShardEngine open(int shard, Path liveDir) {
            Stores stores = Stores.open("shard" + shard, config, liveDir, Durability.OS, 1, metrics, null);
            if (coldStore != null) {
                ColdTier tier = new ColdTier(coldStore, coldCache, ColdLogConfig.defaults(config.dataDir().resolve("cold-tmp")),
                        () -> coldWriterTerm(shard));
                stores.logs().enableColdTier(tier, new ReplicatedRolls() {
                    @Override
                    public CompletableFuture<?> proposeCovered(String ws, String log, long coldLast) {
                        return propose(shard, ShardCommands.coldCovered(ws, log, coldLast));
                    }

                    @Override
                    public CompletableFuture<?> proposeColdDeleted(String ws, String log, long generation) {
                        return propose(shard, ShardCommands.coldDeleted(ws, log, generation)).thenAccept(ShardCommands::readEmpty);
                    }
                });
            }
            // trims and policies come through the shard's log; only the leader's worker decides policy trims
            io.strand.logtier.Retention retention = stores.startRetention(config.retentionDefaults(),
                    config.retentionCheckInterval(), new ReplicatedTrims() {
                @Override
                public boolean leads() {
                    RaftNode n = raft.get();
                    return n != null && n.leaderTerm(shard) >= 0;
                }

                @Override
                public CompletableFuture<?> proposeTrim(String ws, String log, long before) {
                    return propose(shard, ShardCommands.trim(ws, log, before, true)).thenApply(ShardCommands::readTrimmed);
                }
            });
            retention.onPolicyTrim((ws, log, first, policy) -> policyTrims.trimmed(ws, log, first, policy));
            StoresEngine[] self = new StoresEngine[1];
            self[0] = new StoresEngine(stores, () -> closing(shard, self[0]), streams);
            engines.put(shard, self[0]);
            return self[0];
        }

        /** A command of this node's own background work (rolls, retention) to the shard; {@code 503} while the node starts. */
        private CompletableFuture<byte[]> propose(int shard, byte[] command) {
            RaftNode n = raft.get();
            return n == null ? CompletableFuture.failedFuture(unavailable(shard, "the node is starting")) : n.submit(shard, command);
        }

        @Override
        public void replaced(int shard, ShardEngine old, ShardEngine now) {
            engines.put(shard, (StoresEngine) now);
        }
    }

    /**
     * On the shard's apply thread, before {@code engine}'s stores close: requests stop finding them
     * ({@link #local} answers {@code 503} until the new ones are open), then the listeners let go.
     */
    private void closing(int shard, StoresEngine engine) {
        engines.remove(shard, engine);
        for (IntConsumer l : closingListeners) {
            try {
                l.accept(shard);
            } catch (RuntimeException e) {
                System.getLogger("strand.cluster").log(System.Logger.Level.WARNING, "shard " + shard
                        + ": a listener failed before its stores closed", e);
            }
        }
    }

    /**
     * Readiness {@code cluster}: UP when every shard this node replicates has a leader (writes can be
     * acknowledged); details name each local shard's leader and apply lag.
     */
    public io.helidon.health.HealthCheckResponse health() {
        var response = io.helidon.health.HealthCheckResponse.builder().detail("node", spec.nodeId());
        boolean ok = true;
        for (int k = 0; k < spec.shards(); k++) {
            var m = ShardMetrics.of(node, k);
            if (m.isEmpty()) {
                continue; // no replica here
            }
            String leader = m.get().leaderId();
            ok &= leader != null;
            response.detail("shard" + k, (leader == null ? "no leader" : "leader " + leader) + ", apply lag " + m.get().applyLag());
        }
        return response.status(ok).build();
    }

    public ClusterSpec spec() {
        return spec;
    }

    /** The term under which this node writes shard {@code shard}'s cold part: its Raft term while it leads the shard, else -1. */
    private long coldWriterTerm(int shard) {
        RaftNode n = raft.get();
        return n == null ? -1 : n.leaderTerm(shard);
    }

    /** True when this cluster has a cold tier ({@code --cold}). */
    public boolean hasColdTier() {
        return coldStore != null;
    }

    /**
     * Returns when this node may run a cold write for {@code ws} (roll, compact, orphan clean-up):
     * it leads the workspace's shard. Otherwise {@code 503 unavailable} naming the leader
     * ({@code "leader"}, null while there is none), where the request should go.
     */
    public void requireColdWriter(String ws) {
        int shard = spec.shardOf(ws);
        if (node.leaderTerm(shard) >= 0) {
            return;
        }
        String leader = node.status().shard(shard).leader();
        Map<String, Object> extras = new java.util.LinkedHashMap<>();
        extras.put("retryable", true);
        extras.put("shard", shard);
        extras.put("leader", leader);
        throw new StrandException(ErrorCode.UNAVAILABLE, "only the leader of shard " + shard + " (workspace '" + ws
                + "') writes its cold tier, and node " + spec.nodeId() + " does not lead it"
                + (leader == null ? " (no leader now; retry)" : "; send this to node " + leader), extras);
    }

    public RaftNode node() {
        return node;
    }

    /**
     * {@code listener} is told (on the shard's apply thread, with the shard) just before a shard's
     * stores on this node close: a snapshot from the leader replaces them (a follower that fell
     * behind the leader's purged log), the replica is removed by {@code replace}, or the node stops.
     * Whatever still reads those stores (subscriptions) must end before it returns; the shard's
     * new stores, if any, open right after.
     */
    public void onStoresClosing(IntConsumer listener) {
        closingListeners.add(listener);
    }

    /** What a subscription on a shard's closing stores ends with: retryable, resume from its {@code next}. */
    public static StrandException storesClosing(int shard) {
        return new StrandException(ErrorCode.UNAVAILABLE, "shard " + shard + "'s replica on this node is being rebuilt"
                + " (a snapshot from the leader replaces it) or removed: subscribe again from 'next', here or on"
                + " another node", Map.of("retryable", true, "shard", shard));
    }

    @Override
    public boolean leads(String ws) {
        return node.leaderTerm(spec.shardOf(ws)) >= 0;
    }

    @Override
    public Stores local(String ws) {
        int shard = spec.shardOf(ws);
        StoresEngine engine = engines.get(shard);
        if (engine == null && !node.hosts(shard)) {
            List<String> replicas = node.replicaIds(shard);
            throw new StrandException(ErrorCode.UNAVAILABLE, "node " + spec.nodeId() + " does not replicate shard " + shard
                    + " (workspace '" + ws + "'); its replicas are " + replicas, Map.of("retryable", false, "shard", shard,
                    "replicas", replicas));
        }
        if (engine == null) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "this node holds no replica of shard " + shard
                    + " (workspace '" + ws + "') yet", Map.of("retryable", true, "shard", shard));
        }
        return engine.stores();
    }

    /**
     * Publishes this node's HTTP address ({@link NodeDirectory}): the host of its Raft address in
     * {@code --cluster}, where the other nodes reach it, and {@code httpPort}. Call once it listens.
     */
    public void publishHttp(int httpPort) {
        directory.publish("http://" + spec.self().host() + ":" + httpPort);
    }

    /** Node {@code id}'s HTTP address, once it published one. */
    public java.util.Optional<String> httpOf(String id) {
        return directory.urlOf(id);
    }

    /** The route that relays the HTTP requests of workspaces this node does not replicate ({@link ReplicaForwarding}). */
    public io.helidon.webserver.http.Handler forwarding(long maxBodyBytes) {
        return new ReplicaForwarding(this, maxBodyBytes);
    }

    /**
     * The HTTP addresses of shard {@code shard}'s replicas other than this node, in its configuration's
     * order, for those that published one: where this node relays what it does not replicate.
     */
    List<String> replicaUrls(int shard) {
        return node.replicaIds(shard).stream().filter(id -> !id.equals(spec.nodeId()))
                .flatMap(id -> directory.urlOf(id).stream()).toList();
    }

    @Override
    public java.util.Optional<String> relayFor(String ws) {
        if (hostsWorkspace(ws)) {
            return java.util.Optional.empty();
        }
        int shard = spec.shardOf(ws);
        return java.util.Optional.of(replicaUrls(shard).stream().findFirst().orElseThrow(() -> new StrandException(
                ErrorCode.UNAVAILABLE, "node " + spec.nodeId() + " does not replicate shard " + shard + " (workspace '" + ws
                + "') and knows no address of its replicas yet", Map.of("retryable", true, "shard", shard))));
    }

    @Override
    public List<com.fasterxml.jackson.databind.JsonNode> workspacesElsewhere(String authorization) {
        java.util.Set<String> ask = new java.util.LinkedHashSet<>();
        for (int k = 0; k < spec.shards(); k++) {
            if (!node.hosts(k)) {
                replicaUrls(k).stream().findFirst().ifPresent(ask::add);
            }
        }
        List<com.fasterxml.jackson.databind.JsonNode> out = new java.util.ArrayList<>();
        for (String url : ask) {
            out.addAll(ReplicaForwarding.workspacesOf(url, authorization, spec.nodeId()));
        }
        return out;
    }

    /** True when this node replicates {@code ws}'s shard (false on a cluster with more nodes than replicas, for some). */
    public boolean hostsWorkspace(String ws) {
        return node.hosts(spec.shardOf(ws));
    }

    /**
     * Waits for a read index from the shard's leader and for this replica to apply through it. If
     * that takes more than {@link #READ_BARRIER_MILLIS} and this node cannot reach a majority of the
     * shard's replicas (the majority is down, or this node is cut off), the read is served from the
     * local copy as it is: reads of local data keep working while writes are refused, and such a read
     * can miss only writes acknowledged in the moments before the majority was lost that this replica
     * had not received yet. While a majority is reachable the replica is merely behind (restarted,
     * catching up, not fed by the leader, or an election is running) and never serves its stale copy:
     * the read waits for the barrier up to {@link #TIMEOUT_MILLIS} and is answered {@code 503
     * unavailable} (retryable) if it does not come.
     */
    @Override
    public boolean awaitCaughtUp(String ws) {
        int shard = spec.shardOf(ws);
        boolean current = awaitBarrier(() -> node.readBarrier(shard), READ_BARRIER_MILLIS, TIMEOUT_MILLIS,
                () -> majorityReachable(shard), shard);
        if (!current) {
            localOnlyReads.incrementAndGet();
        }
        return current;
    }

    /** True when this node reaches (TCP connect to the Raft port within 300 ms) a majority of the shard's replicas, itself included. */
    private boolean majorityReachable(int shard) {
        io.strand.cluster.ClusterStatus status = node.status();
        List<String> replicas = status.shard(shard).replicas();
        long up = status.nodes().stream().filter(n -> n.up() && replicas.contains(n.id())).count();
        return up > replicas.size() / 2;
    }

    /**
     * The read policy of {@link #awaitCaughtUp}: true once {@code barrier} completed; false (serve the
     * local copy) when it has not within {@code localAfterMillis}, or failed, while {@code shardAlive}
     * says the shard is down from here (no majority reachable); {@code 503 unavailable} when the shard
     * is alive and the barrier does not complete within {@code maxMillis} in all.
     */
    static boolean awaitBarrier(java.util.concurrent.CompletableFuture<Void> barrier, long localAfterMillis, long maxMillis,
                                java.util.function.BooleanSupplier shardAlive, int shard) {
        return awaitBarrier(() -> barrier, localAfterMillis, maxMillis, shardAlive, shard);
    }

    /**
     * As above, asking {@code barriers} for a new barrier when one fails fast within the first
     * {@code localAfterMillis} (a replica that has not heard from the leader yet fails at once): only
     * a shard that stays down from here for that long is read from the local copy.
     */
    static boolean awaitBarrier(java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> barriers,
                                long localAfterMillis, long maxMillis, java.util.function.BooleanSupplier shardAlive, int shard) {
        long start = System.nanoTime();
        try {
            java.util.concurrent.CompletableFuture<Void> barrier = barriers.get();
            while (true) {
                long left = localAfterMillis - (System.nanoTime() - start) / 1_000_000;
                if (left <= 0) {
                    break;
                }
                try {
                    barrier.get(left, TimeUnit.MILLISECONDS);
                    return true;
                } catch (TimeoutException e) {
                    break;
                } catch (ExecutionException e) {
                    java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L); // a pause between asks, not a wait for a state
                    barrier = barriers.get();
                }
            }
            if (!shardAlive.getAsBoolean()) {
                return false;
            }
            long left = maxMillis - (System.nanoTime() - start) / 1_000_000;
            try {
                barrier.get(Math.max(1, left), TimeUnit.MILLISECONDS);
                return true;
            } catch (TimeoutException | ExecutionException e) {
                if (!shardAlive.getAsBoolean()) {
                    return false; // the shard went down meanwhile: serve what is here
                }
                throw unavailable(shard, "this replica has not caught up with the leader within " + maxMillis + " ms ("
                        + (e instanceof ExecutionException ? e.getCause() : "still waiting") + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable(shard, "interrupted");
        }
    }

    /** Reads served from the local copy because no read index came in time (see {@link #awaitCaughtUp}). */
    public long localOnlyReads() {
        return localOnlyReads.get();
    }

    private static StrandException unavailable(int shard, String why) {
        return new StrandException(ErrorCode.UNAVAILABLE, "shard " + shard + " cannot serve a current read: " + why,
                Map.of("retryable", true, "shard", shard));
    }

    @Override
    public WritePath writes() {
        return writes;
    }

    @Override
    public List<Stores> all() {
        return engines.values().stream().map(StoresEngine::stores).toList();
    }

    @Override
    public void onPolicyTrim(io.strand.logtier.Retention.PolicyTrims trims) {
        this.policyTrims = trims;
    }

    @Override
    public String durableWire() {
        return ReplicatedWrites.QUORUM;
    }

    @Override
    public boolean clustered() {
        return true;
    }

    @Override
    public void close() {
        directory.close();
        node.close(); // closes the engines, and with them the stores and their rollers
        if (coldStore != null) {
            coldStore.close();
        }
    }
}

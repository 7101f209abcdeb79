package io.strand.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.util.TimeDuration;

/**
 * This JVM's member of the cluster: one Ratis {@link RaftServer} on the node's Raft port hosting a
 * replica (a Raft group division with a {@link ShardStateMachine}) of every shard placement gives the
 * node, plus the clients that propose to and read from any shard ({@link ShardClients}, and
 * {@link LocalLeaderSubmitter} for a shard it leads itself). Thread-safe: Ratis owns its threads; this
 * class keeps a concurrent map of state machines and immutable configuration.
 *
 * <p>Storage: Ratis under {@code DATA/raft/<group-uuid>/} (log segments, term/vote metadata), each
 * shard's engine and snapshots under {@code DATA/shards/<k>/} ({@link ShardSnapshots}). On start Ratis
 * recovers every group it finds in its storage; a group placement gives this node and storage lacks
 * (first start of the cluster, or a node restarted with an emptied data directory) is created with the
 * placement's peers; the leader then brings it up to date by snapshot install and log. A node started
 * {@link ClusterSpec#joining()} creates no group: {@link #replace} adds it to groups.
 */
public final class RaftNode implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final ClusterSpec spec;
    private final ShardEngineFactory factory;
    private final RaftServer server;
    private final Map<UUID, Integer> shardOfGroup = new HashMap<>();
    /** Each shard's Raft group id (a name-based UUID, an MD5 to derive), derived once. */
    private final RaftGroupId[] groupIds;
    private final Map<Integer, ShardStateMachine> machines = new ConcurrentHashMap<>();
    /** This node's clients of every shard ({@link #client}, {@link #readClient}). */
    private final ShardClients clients;
    /** Peers of shards this node learned from {@link #replace} (placement no longer says them). */
    private final Map<Integer, List<RaftPeer>> knownPeers = new ConcurrentHashMap<>();
    private final ClientId adminClientId = ClientId.randomId();
    private final AtomicLong adminCallId = new AtomicLong();
    private final ShardProposer proposer;
    private final ReadBarrier readBarrier;
    /** Deadlines and retries of proposals and read barriers, on one daemon thread of this node. */
    private final ScheduledExecutorService timers;
    /** Asks a leader that stopped feeding one of this node's follower replicas to step down; set at start. */
    private volatile StalledReplicaWatch stalledReplicas;
    /** This node's requests to a shard replica of its own that leads ({@link #submitLocally}). */
    private final LocalLeaderSubmitter local;
    /** Stages each shard's next snapshot in the background (one at a time per node: it is disk-bound). */
    private final ExecutorService snapshotStager;

    /**
     * Diagnostics: with the system property {@code strand.cluster.ratisReport=S}, Ratis's own metrics (its
     * log worker's write and sync timers, each follower's append round trip, the leader's client-request
     * timer, per group) go to standard output every {@code S} seconds, through Ratis's console reporter.
     * Once per JVM, before the first group registers its metrics. Off by default: it prints every group.
     */
    private static final AtomicBoolean RATIS_REPORT = new AtomicBoolean();

    private static void startRatisReportIfAsked() {
        Long seconds = Long.getLong("strand.cluster.ratisReport");
        if (seconds != null && seconds > 0 && RATIS_REPORT.compareAndSet(false, true)) {
            MetricRegistries.global().enableConsoleReporter(TimeDuration.valueOf(seconds, TimeUnit.SECONDS));
        }
    }

    private RaftNode(ClusterSpec spec, ShardEngineFactory factory) throws IOException {
        startRatisReportIfAsked();
        this.spec = spec;
        this.factory = factory;
        this.groupIds = new RaftGroupId[spec.shards()];
        for (int k = 0; k < spec.shards(); k++) {
            shardOfGroup.put(ClusterSpec.groupId(k), k);
            groupIds[k] = RaftGroupId.valueOf(ClusterSpec.groupId(k));
        }
        this.clients = new ShardClients(spec, this::peersOf, this::localLeader);
        java.util.concurrent.ScheduledThreadPoolExecutor timer = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "strand-cluster-timer-" + spec.nodeId());
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true); // every write and read sets a deadline, cancelled when it completes
        this.timers = timer;
        this.snapshotStager = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "strand-snapshot-stager-" + spec.nodeId());
            t.setDaemon(true);
            return t;
        });
        this.server = RaftServer.newBuilder()
                .setServerId(RaftPeerId.valueOf(spec.nodeId()))
                .setProperties(RatisConfig.server(spec))
                .setStateMachineRegistry(this::newStateMachine)
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
        this.local = new LocalLeaderSubmitter(spec.nodeId(), server, this::division);
        this.readBarrier = new ReadBarrier(this, timers);
        this.proposer = new ShardProposer(spec.shards(), new ShardProposer.Clients() {
            @Override
            public RaftClient get(int shard) {
                return client(shard);
            }

            @Override
            public void failed(int shard, RaftClient client) {
                clientFailed(shard, client);
            }

            @Override
            public Optional<CompletableFuture<RaftClientReply>> submitLocally(int shard, Message proposal) {
                return RaftNode.this.submitLocally(shard, proposal, RaftClientRequest.writeRequestType());
            }
        }, timers, spec.requestTimeout(), ShardProposer.DEFAULT_MAX_IN_FLIGHT, ShardProposer.HOLD);
    }

    /** Starts the Raft server and creates the shard groups this node should have and storage lacks. */
    public static RaftNode start(ClusterSpec spec, ShardEngineFactory factory) throws IOException {
        RaftNode node = new RaftNode(spec, factory);
        try {
            node.server.start();
            node.createMissingGroups();
            node.stalledReplicas = StalledReplicaWatch.start(node, node.timers);
            PeerReconnectWatch.start(node, node.timers);
        } catch (IOException | RuntimeException e) {
            node.close();
            throw e;
        }
        LOG.log(System.Logger.Level.INFO, "cluster node " + spec.nodeId() + " up on " + spec.self().address()
                + " with shards " + node.localShards());
        return node;
    }

    private ShardStateMachine newStateMachine(RaftGroupId groupId) {
        Integer k = shardOfGroup.get(groupId.getUuid());
        if (k == null) {
            throw new IllegalArgumentException("group " + groupId + " is not a shard of this cluster ("
                    + spec.shards() + " shards)");
        }
        ShardStateMachine sm = new ShardStateMachine(k, new ShardSnapshots(k, spec.shardDir(k)), factory,
                snapshotPolicy(k),
                snapshotStager);
        machines.put(k, sm);
        return sm;
    }

    /**
     * Shard {@code k}'s snapshot policy on this node, ranked among the shard's replicas in the spec
     * until the state machine reads the group's own configuration ({@link ShardStateMachine}).
     */
    private SnapshotPolicy snapshotPolicy(int k) {
        return new SnapshotPolicy(spec.snapshotEvery(), spec.snapshotDefer())
                .amongReplicas(spec.replicasOf(k).stream().map(ClusterSpec.Member::id).toList(), spec.nodeId());
    }

    private void createMissingGroups() throws IOException {
        if (spec.joining()) {
            return;
        }
        List<RaftGroupId> present = new ArrayList<>();
        server.getGroupIds().forEach(present::add);
        for (int k : spec.shardsOf(spec.nodeId())) {
            RaftGroup group = placementGroup(k);
            if (!present.contains(group.getGroupId())) {
                LOG.log(System.Logger.Level.INFO, "node " + spec.nodeId() + ": creating shard " + k + " replica "
                        + group.getPeers());
                addGroup(k, group);
                RejoinWatch.watch(this, k, timers); // a leader that knew this replica before may not feed it
            }
        }
    }

    /**
     * Adds a group to the running server. Retried: when the node rejoins with an emptied data directory
     * the shard's leader contacts the new replica at once, and Ratis 3.3.0 can lose the race between
     * starting the division and the leader's first request ({@code IllegalStateException: previous !=
     * null} in {@code RoleInfo.startFollowerState}); the add then fails and a second one succeeds.
     */
    private void addGroup(int k, RaftGroup group) throws IOException {
        IOException last = null;
        for (int attempt = 1; attempt <= 5; attempt++) {
            try {
                RaftClientReply reply = server.groupManagement(GroupManagementRequest.newAdd(adminClientId,
                        server.getId(), adminCallId.incrementAndGet(), group, true));
                if (reply.isSuccess()) {
                    return;
                }
                last = new IOException(String.valueOf(reply.getException()));
            } catch (IOException e) {
                last = e;
            }
            if (division(k).map(d -> d.getInfo().isAlive()).orElse(false)) {
                return; // added after all (the failure came after the division started)
            }
            LOG.log(System.Logger.Level.WARNING, "node " + spec.nodeId() + ": creating shard " + k + " failed (try "
                    + attempt + " of 5), retrying: " + last);
            // the failed try may have formatted the group's storage already; the next add formats again and
            // refuses an existing directory ("Failed to FORMAT"), so every retry failed. The group was not in
            // this node's storage at start (else Ratis had recovered it), so the directory is that try's leftover.
            if (division(k).isEmpty()) { // never under a division Ratis still holds
                ShardSnapshots.deleteTree(spec.raftDir().resolve(group.getGroupId().getUuid().toString()));
            }
            try {
                Thread.sleep(200L * attempt); // back-off between tries of a start-up step
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while creating shard " + k, e);
            }
        }
        throw new IOException("node " + spec.nodeId() + " could not create shard " + k, last);
    }

    /** Shard {@code k}'s group as placement gives it: preferred leader first with a higher priority. */
    RaftGroup placementGroup(int k) {
        List<RaftPeer> peers = new ArrayList<>();
        for (ClusterSpec.Member m : spec.replicasOf(k)) {
            peers.add(peer(m.id(), m.address(), peers.isEmpty() ? ClusterSpec.PREFERRED_PRIORITY : 0));
        }
        return RaftGroup.valueOf(RaftGroupId.valueOf(ClusterSpec.groupId(k)), peers);
    }

    static RaftPeer peer(String id, String address, int priority) {
        return RaftPeer.newBuilder().setId(id).setAddress(address).setPriority(priority).build();
    }

    /** The ids of shard {@code k}'s replicas as best known here ({@link #peersOf}). */
    public List<String> replicaIds(int k) {
        return ids(peersOf(k));
    }

    /** Shard {@code k}'s peers as best known here: the local replica's configuration, then replace, then placement. */
    List<RaftPeer> peersOf(int k) {
        Optional<RaftServer.Division> d = division(k);
        if (d.isPresent()) {
            List<RaftPeer> conf = new ArrayList<>(d.get().getRaftConf().getCurrentPeers());
            if (!conf.isEmpty()) {
                return conf;
            }
        }
        return knownPeers.getOrDefault(k, List.copyOf(placementGroup(k).getPeers()));
    }

    void learnedPeers(int k, List<RaftPeer> peers) {
        knownPeers.put(k, List.copyOf(peers));
        clients.peersChanged(k);
    }

    /** The client that proposes to shard {@code k}'s group (writes, no-op nudges), created on first use. */
    RaftClient client(int k) {
        return clients.proposals(k);
    }

    /** The client that asks shard {@code k}'s leader for read indexes ({@link ShardClients#reads}). */
    RaftClient readClient(int k) {
        return clients.reads(k);
    }

    /**
     * {@code message} submitted in-process when this node's replica of {@code shard} leads and is ready;
     * empty when another node leads, and the caller uses its {@link #client} ({@link LocalLeaderSubmitter}).
     */
    Optional<CompletableFuture<RaftClientReply>> submitLocally(int shard, Message message, RaftClientRequest.Type type) {
        return local.submit(shard, message, type);
    }

    /** Requests this node submitted in-process to a local leader since start ({@link #submitLocally}). */
    long localRequests() {
        return local.submitted();
    }

    /** The leader of {@code shard} as this node's replica knows it, if it holds one and knows one. */
    Optional<RaftPeerId> localLeader(int shard) {
        return division(shard).filter(d -> d.getInfo().isAlive()).map(d -> d.getInfo().getLeaderId());
    }

    /** Drops a client whose ordered window Ratis closed after a failure; the next call makes a new one. */
    void clientFailed(int shard, RaftClient broken) {
        clients.failed(shard, broken);
    }

    /** A one-shot client for admin calls on {@code group} (no retry, short timeout). */
    RaftClient adminClient(RaftGroup group) {
        return adminClient(group, java.time.Duration.ofSeconds(2));
    }

    /** {@link #adminClient(RaftGroup)} with another request timeout (a call that does real work on the peer). */
    RaftClient adminClient(RaftGroup group, java.time.Duration timeout) {
        return ShardClients.admin(group, timeout);
    }

    public ClusterSpec spec() {
        return spec;
    }

    public String nodeId() {
        return spec.nodeId();
    }

    /** Group commit of commands to any shard, from this node (Ratis routes to the shard's leader). */
    public ShardProposer proposer() {
        return proposer;
    }

    /** {@link ShardProposer#submit} on this node's proposer. */
    public CompletableFuture<byte[]> submit(int shard, byte[] command) {
        return proposer.submit(shard, command);
    }

    /**
     * Completes once this node's replica of {@code shard} has applied (and its engine shows the effects
     * of) every entry committed before the call; {@code unavailable} (503, retryable) within the request
     * timeout when no leader answers, and a failure at once when this node holds no replica. See
     * {@link ReadBarrier}.
     */
    public CompletableFuture<Void> readBarrier(int shard) {
        return readBarrier.await(shard);
    }

    /** No-op entries proposed by read barriers that waited too long for a ReadIndex (see {@link ReadBarrier}). */
    public long barrierNudges() {
        return readBarrier.nudges();
    }

    /** True when this node holds a live replica of {@code shard}. */
    public boolean hosts(int shard) {
        return division(shard).map(d -> d.getInfo().isAlive()).orElse(false);
    }

    /**
     * The current term while this node's replica of {@code shard} leads its group and is ready (it
     * has committed an entry of its own term, so it has applied everything committed before it),
     * else -1. Who may write the shard's part of a shared cold tier (SPEC §13); cheap (no I/O).
     */
    public long leaderTerm(int shard) {
        return division(shard).map(RaftServer.Division::getInfo)
                .filter(info -> info.isLeader() && info.isLeaderReady())
                .map(org.apache.ratis.server.DivisionInfo::getCurrentTerm).orElse(-1L);
    }

    /** The engine of this node's replica of {@code shard}, if it holds one (it changes on snapshot install). */
    public Optional<ShardEngine> engine(int shard) {
        return hosts(shard) ? Optional.ofNullable(machines.get(shard)).map(ShardStateMachine::engine) : Optional.empty();
    }

    /** The shards this node holds a replica of, ascending. */
    /** Step-downs this node asked of leaders that stopped feeding one of its replicas ({@link StalledReplicaWatch}). */
    long stalledReplicaStepDowns() {
        StalledReplicaWatch w = stalledReplicas;
        return w == null ? 0 : w.stepDowns();
    }

    public List<Integer> localShards() {
        List<Integer> out = new ArrayList<>();
        for (int k = 0; k < spec.shards(); k++) {
            if (hosts(k)) {
                out.add(k);
            }
        }
        return out;
    }

    /**
     * Makes Ratis drop its channel to {@code peer} (closed on a virtual thread: a close may wait for
     * the channel's open calls); the next Raft call to the peer connects anew ({@link PeerReconnectWatch}).
     */
    void resetRaftChannel(RaftPeerId peer) {
        Thread.ofVirtual().name("raft-channel-reset-" + peer).start(() -> {
            try {
                server.getServerRpc().handleException(peer, new IOException("peer " + peer + " reachable again"), true);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "node " + spec.nodeId() + ": reset of the channel to " + peer + ": " + e);
            }
        });
    }

    Optional<RaftServer.Division> division(int shard) {
        if (!machines.containsKey(shard)) {
            return Optional.empty(); // never a replica here: no lookup (which would throw GroupMismatchException) per call
        }
        try {
            return Optional.of(server.getDivision(groupIds[shard]));
        } catch (IOException e) {
            return Optional.empty(); // not a replica here (GroupMismatchException) or closed
        }
    }

    Optional<ShardStateMachine> machine(int shard) {
        return Optional.ofNullable(machines.get(shard));
    }

    /** Whether the local replica asked for a snapshot that is not taken yet. */
    boolean snapshotPending(int shard) {
        return machine(shard).map(ShardStateMachine::snapshotPending).orElse(false);
    }

    /** Newest snapshot index of the local replica, -1 without one. */
    long snapshotIndex(int shard) {
        return machine(shard).map(ShardStateMachine::getLatestSnapshot)
                .map(s -> ((FileListSnapshotInfo) s).getIndex()).orElse(-1L);
    }

    RaftServer server() {
        return server;
    }

    /** What this node sees of every shard and node now. */
    public ClusterStatus status() {
        return new ClusterStatusReader(this).read();
    }

    /**
     * Moves every replica of {@code oldId} to a new node {@code newId} at {@code newAddress} (HOST:PORT),
     * which must be running ({@link ClusterSpec#joiningAs}): for each shard whose configuration holds
     * {@code oldId}, the group is added on the new node, then the shard's configuration is changed by
     * Raft (the new node catches up by snapshot and log before the change commits). Usable from any node.
     *
     * @return the shards moved
     */
    public List<Integer> replace(String oldId, String newId, String newAddress) throws IOException {
        return new Membership(this).replace(oldId, newId, newAddress);
    }

    static List<String> ids(List<RaftPeer> peers) {
        return peers.stream().map(p -> p.getId().toString()).toList();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.DEBUG, "close failed: " + e);
        }
    }

    /**
     * Test stand-in for kill -9: closes the Raft port (every inbound connection drops, as when the
     * process dies) and stops every replica, all on their own threads at once. A plain {@link #close} keeps the
     * port answering while the replicas shut down one by one; closing only the port keeps a leader's
     * outbound heartbeats going for seconds. Neither is what peers see of a dead process.
     */
    void halt() {
        List<CompletableFuture<Void>> dying = new ArrayList<>();
        java.util.concurrent.Executor threads = r -> Thread.ofVirtual().start(r);
        dying.add(CompletableFuture.runAsync(() -> {
            try {
                server.getServerRpc().close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "node " + spec.nodeId() + ": Raft port close failed: " + e);
            }
        }, threads));
        for (RaftGroupId gid : server.getGroupIds()) { // every replica at once, as a process dies
            dying.add(CompletableFuture.runAsync(() -> {
                try {
                    server.getDivision(gid).close();
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "node " + spec.nodeId() + ": " + gid + " already gone: " + e);
                }
            }, threads));
        }
        dying.forEach(CompletableFuture::join);
        close();
    }

    /** Stops the Raft server (each replica stops after applying what it has committed) and the clients. */
    @Override
    public void close() {
        timers.shutdownNow();
        local.close();
        snapshotStager.shutdownNow();
        clients.close();
        try {
            server.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "node " + spec.nodeId() + ": Raft server close failed: " + e);
        }
    }
}

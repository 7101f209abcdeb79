package io.strand.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.util.LifeCycle;

/**
 * The Ratis state machine of one shard replica: applies committed entries ({@link ShardEntry}) to the
 * shard's {@link ShardEngine} in log order and snapshots it. Owned by the group's apply thread (the
 * Ratis state machine updater): {@code applyTransaction}, {@code takeSnapshot}, {@code reinitialize}
 * and {@code close} run there; {@code startTransaction} (leader only) and {@code query} run on Ratis
 * request threads and touch only atomics and the immutable apply tail.
 *
 * <p><b>Restart rule</b> (what makes kill -9 safe without an applied index kept per engine write): at
 * {@code initialize} (start) and {@code reinitialize} (after Ratis installed a snapshot from the leader)
 * the live directory is wiped and refilled from the newest complete snapshot (or left empty), the engine
 * is opened over it, and Ratis replays the Raft log from the snapshot index + 1. The engine's files are
 * therefore derived state: whatever a crash left in them is discarded, so an entry applied before the
 * crash is never applied twice. Cost: every start copies the newest snapshot (one sequential read and
 * write of the shard's snapshot size, checked against its manifest CRCs) and replays up to
 * {@code snapshotEvery} entries; the Raft log (fsynced on a majority before an ack) and the snapshots are
 * the only durable truth, so the engine itself needs no fsync in cluster mode except in
 * {@link ShardEngine#snapshotTo}.
 *
 * <p><b>Clock.</b> The leader stamps its wall clock into the entry in {@code startTransaction} (never
 * below the newest stamp it has applied). Requests are stamped in parallel and appended in another
 * order, and a new leader's clock may be behind, so the time an engine sees is the shard clock
 * {@code max(stamp, shard clock after the previous entry)}: deterministic, identical on every replica,
 * never going backwards. It is kept in each snapshot's manifest so a replica rebuilt from a snapshot
 * continues from the same value.
 *
 * <p><b>Engine failure.</b> A failed engine future (I/O) is fatal for this replica: the shard's
 * replica is closed loudly (error log, {@link #failure()}), no later entry reaches the engine, reads
 * and snapshots refuse. The other replicas go on; restarting the node rebuilds this one by the restart
 * rule.
 */
final class ShardStateMachine extends BaseStateMachine {
    private static final System.Logger LOG = System.getLogger("strand.cluster");
    private static final long SNAPSHOT_REQUEST_TIMEOUT_MS = 600_000;

    private final int shard;
    private final ShardSnapshots snapshots;
    private final ShardEngineFactory factory;
    private final Object snapshotLock = new Object();
    private final AtomicLong elections = new AtomicLong();
    private final AtomicLong newestStamp = new AtomicLong(Long.MIN_VALUE);
    /** The shard clock after the last applied entry; only the apply thread writes it. */
    private volatile long shardClock = Long.MIN_VALUE;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** Completes when every entry handed to the engine so far has taken effect (success or failure). */
    private volatile CompletableFuture<Void> applied = CompletableFuture.completedFuture(null);
    private volatile ShardEngine engine;
    /** Index of the last command entry whose effects are in the engine; read barriers wait on it. */
    private final AtomicLong lastCommandIndex = new AtomicLong(-1);
    private final java.util.concurrent.ConcurrentSkipListMap<Long, CompletableFuture<Void>> commandWaiters =
            new java.util.concurrent.ConcurrentSkipListMap<>();

    /**
     * When the next snapshot is due; Ratis's own entry-count trigger is only its backstop. Apply
     * thread only: re-ranked among the group's current members at the start of each snapshot cycle.
     */
    private SnapshotPolicy policy;
    private final Executor stager;
    /** Apply thread only: entries applied since the last snapshot, their Raft log bytes, whether staged (part way, and again once due) and ranked. */
    private long entriesSince;
    private long logBytesSince;
    private boolean staged;
    private boolean restaged;
    private boolean ranked;
    /** The staging started once the snapshot was due has ended (set by the stager thread, reset by the apply thread). */
    private final AtomicBoolean restageDone = new AtomicBoolean();
    /** A snapshot request is with Ratis: set on the apply thread, cleared by the snapshot and when the request completes. */
    private final AtomicBoolean snapshotRequested = new AtomicBoolean();

    ShardStateMachine(int shard, ShardSnapshots snapshots, ShardEngineFactory factory, SnapshotPolicy policy, Executor stager) {
        this.shard = shard;
        this.snapshots = snapshots;
        this.factory = factory;
        this.policy = policy;
        this.stager = stager;
    }

    private void snapshotTaken() {
        entriesSince = 0;
        logBytesSince = 0;
        staged = false;
        restaged = false;
        ranked = false;
        snapshotRequested.set(false);
    }

    /**
     * Apply thread: counts the entry, starts staging part way to the next snapshot, stages again once a
     * snapshot taken in turns is due, and asks Ratis for it in this replica's turn after that staging.
     */
    private void countForSnapshot(LogEntryProto entry) {
        if (!ranked) {
            rankAmongCurrentMembers();
        }
        entriesSince++;
        logBytesSince += entry.getSerializedSize();
        long copy = snapshots.lastCopyBytes();
        if (!staged && policy.stageDue(entriesSince, logBytesSince, copy)) {
            staged = true;
            stageNext(() -> { });
        }
        boolean inTurns = policy.inTurns(entriesSince, logBytesSince, copy);
        if (inTurns && !restaged && policy.due(entriesSince, logBytesSince, copy)) {
            // Due, and taken in turns: stage again first, so the take writes only what changed since
            // now, not since the part-way staging. The take waits for this staging (restageDone) and for
            // this replica's turn (SnapshotPolicy#window), whichever comes later.
            restaged = true;
            restageDone.set(false);
            stageNext(() -> restageDone.set(true));
        }
        if (policy.takeDue(entriesSince, logBytesSince, copy, entry.getIndex()) && (!inTurns || restageDone.get())
                && snapshotRequested.compareAndSet(false, true)) {
            requestSnapshot();
        }
    }

    /**
     * Sets {@link #policy}'s staging rank from the group's current configuration (the spec's replica
     * list is out of date once a node was replaced). Once per snapshot cycle; until the server is up,
     * the rank stays as it was.
     */
    private void rankAmongCurrentMembers() {
        CompletableFuture<RaftServer> server = getServer();
        if (server == null || !server.isDone() || server.isCompletedExceptionally()) {
            return;
        }
        try {
            List<String> members = server.join().getDivision(getGroupId()).getRaftConf().getCurrentPeers().stream()
                    .map(p -> p.getId().toString()).toList();
            if (!members.isEmpty()) {
                policy = policy.amongReplicas(members, getId().toString());
            }
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": snapshot staging rank " + policy.rank() + " among " + members);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": no configuration to rank snapshots by: " + e);
        } finally {
            ranked = true; // once per cycle, whatever happened: never a lookup per entry
        }
    }

    /**
     * Asks Ratis to take a snapshot at its next apply loop (it calls {@link #takeSnapshot} on this
     * thread, then purges the log behind it), as its own trigger does but decided by {@link #policy}.
     */
    private void requestSnapshot() {
        // Ratis takes no snapshot when fewer than `gap` entries were applied since its last one: so this
        // request takes none when Ratis's own trigger took one meanwhile. Half the count: Ratis may read
        // its applied index before this entry is counted in it.
        long gap = Math.max(1, entriesSince / 2);
        getServer().thenCompose(server -> server.snapshotManagementAsync(SnapshotManagementRequest.newCreate(
                        ClientId.randomId(), getId(), getGroupId(), 0, SNAPSHOT_REQUEST_TIMEOUT_MS, gap)))
                .whenComplete((reply, e) -> {
                    snapshotRequested.set(false); // taken, or not needed, or failed: the next due entry asks again
                    if (e != null || !reply.isSuccess()) {
                        LOG.log(System.Logger.Level.WARNING, "shard " + shard + ": snapshot request failed: "
                                + (e != null ? e : reply.getException()));
                    }
                });
    }

    /**
     * Snapshots are taken on this (the apply) thread, so their length stalls the shard's writes: the
     * files are staged on the node's stager thread first, and the snapshot then writes only what
     * changed since ({@link ShardSnapshots#prestage}).
     */
    private void stageNext(Runnable then) {
        ShardEngine current = engine;
        try {
            stager.execute(() -> {
                try {
                    snapshots.prestage(current::prestageTo);
                } finally {
                    then.run();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) { // the node is closing
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": no snapshot staging while closing");
            then.run();
        }
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage storage) throws IOException {
        super.initialize(server, groupId, storage);
        snapshots.init(storage);
        getLifeCycle().startAndTransition(this::openFromSnapshot, IOException.class);
    }

    /** The restart rule: live dir := newest snapshot, engine opened over it, applied := its term-index. */
    private void openFromSnapshot() throws IOException {
        FileListSnapshotInfo latest = snapshots.reload();
        snapshots.refillLive(latest);
        engine = factory.open(shard, snapshots.liveDir());
        shardClock = latest == null ? Long.MIN_VALUE : ShardSnapshots.stampOf(latest);
        newestStamp.accumulateAndGet(shardClock, Math::max);
        setLastAppliedTermIndex(latest == null ? TermIndex.INITIAL_VALUE : latest.getTermIndex());
        commandApplied(latest == null ? -1 : latest.getIndex());
        snapshotTaken();
        LOG.log(System.Logger.Level.INFO, "shard " + shard + ": engine opened from "
                + (latest == null ? "an empty directory" : "snapshot " + latest.getTermIndex())
                + "; Ratis replays the log after it");
    }

    @Override
    public ShardSnapshots getStateMachineStorage() {
        return snapshots;
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        TransactionContext.Builder trx = TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request);
        try {
            long now = Math.max(System.currentTimeMillis(), newestStamp.get());
            return trx.setLogData(ShardEntry.stamp(now, request.getMessage().getContent())).build();
        } catch (IllegalArgumentException e) {
            TransactionContext rejected = trx.build();
            rejected.setException(e);
            return rejected;
        }
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        TermIndex ti = TermIndex.valueOf(entry);
        if (failure.get() != null) {
            return CompletableFuture.failedFuture(new IOException("shard " + shard + " replica on " + getId()
                    + " stopped after an engine failure; entry " + ti + " not applied", failure.get()));
        }
        countForSnapshot(entry);
        ShardEntry.Decoded decoded = ShardEntry.decode(entry.getStateMachineLogEntry().getLogData());
        long clock = Math.max(decoded.stampedAtMillis(), shardClock);
        shardClock = clock;
        newestStamp.accumulateAndGet(clock, Math::max);
        List<CompletableFuture<byte[]>> replies = new ArrayList<>(decoded.commands().size());
        try {
            for (byte[] command : decoded.commands()) {
                replies.add(engine.apply(clock, command));
            }
        } catch (RuntimeException e) {
            replies.add(CompletableFuture.failedFuture(e));
        }
        CompletableFuture<Message> reply = CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
                .thenApply(done -> {
                    advanceApplied(ti);
                    return Message.valueOf(ShardEntry.replies(replies.stream().map(CompletableFuture::join).toList()));
                });
        reply.whenComplete((m, e) -> {
            if (e != null) {
                engineFailed(ti, e);
            }
        });
        // The engine completes commands on its own threads (log writer, doc turns), so an entry can take
        // effect before an earlier one has: read barriers pass this index only once every earlier entry
        // has taken effect too, else a barrier could let a read in that misses the earlier entry.
        CompletableFuture<Void> before = applied;
        reply.thenAcceptBoth(before, (m, v) -> commandApplied(ti.getIndex()));
        applied = before.thenCombine(reply.handle((m, e) -> null), (a, b) -> null);
        return reply;
    }

    private void advanceApplied(TermIndex ti) {
        synchronized (this) { // futures may complete on engine threads; applied only moves forward
            TermIndex last = getLastAppliedTermIndex();
            if (last == null || ti.compareTo(last) > 0) {
                updateLastAppliedTermIndex(ti);
            }
        }
    }

    private void commandApplied(long index) {
        lastCommandIndex.accumulateAndGet(index, Math::max);
        while (!commandWaiters.isEmpty() && commandWaiters.firstKey() <= lastCommandIndex.get()) {
            var first = commandWaiters.pollFirstEntry();
            if (first != null) {
                first.getValue().complete(null);
            }
        }
    }

    /** Completes once the command entry at {@code index} (or a later one) has taken effect in this replica's engine. */
    CompletableFuture<Void> awaitCommand(long index) {
        if (lastCommandIndex.get() >= index) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = commandWaiters.computeIfAbsent(index, i -> new CompletableFuture<>());
        commandApplied(-1); // an apply may have passed index between the check and the registration
        return f;
    }

    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        advanceApplied(TermIndex.valueOf(term, index)); // configuration and metadata entries
    }

    private void engineFailed(TermIndex ti, Throwable e) {
        if (!failure.compareAndSet(null, e)) {
            return;
        }
        LOG.log(System.Logger.Level.ERROR, "shard " + shard + " replica on " + getId() + ": the engine failed to apply"
                + " entry " + ti + "; this replica stops (restart the node to rebuild it from its snapshot and the log)", e);
        Thread stopper = new Thread(() -> {
            try {
                getServer().join().getDivision(getGroupId()).close();
            } catch (IOException | RuntimeException closeFailed) {
                LOG.log(System.Logger.Level.ERROR, "shard " + shard + ": could not close the failed replica", closeFailed);
            }
        }, "strand-shard-" + shard + "-stop");
        stopper.setDaemon(true);
        stopper.start();
    }

    /** A snapshot this replica asked Ratis for is not taken yet. */
    boolean snapshotPending() {
        return snapshotRequested.get();
    }

    /** The engine failure that stopped this replica, if any. */
    Throwable failure() {
        return failure.get();
    }

    boolean tailDone() {
        return applied.isDone();
    }

    /**
     * The read barrier's query, run on the leader after its ReadIndex: once every entry applied so far
     * has taken effect, answers the index of the last command entry (8 bytes, big-endian), which a
     * replica then waits for ({@link #awaitCommand}).
     */
    @Override
    public CompletableFuture<Message> query(Message request) {
        Throwable failed = failure.get();
        if (failed != null) {
            return CompletableFuture.failedFuture(new IOException("shard " + shard + " replica stopped", failed));
        }
        return applied.thenApply(v -> Message.valueOf(org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(
                java.nio.ByteBuffer.allocate(8).putLong(0, lastCommandIndex.get()).array())));
    }

    @Override
    public long takeSnapshot() throws IOException {
        if (failure.get() != null) {
            throw new IOException("shard " + shard + ": no snapshot of a replica whose engine failed", failure.get());
        }
        applied.join();
        TermIndex ti = getLastAppliedTermIndex();
        if (ti == null || ti.getIndex() < 0) {
            return -1;
        }
        FileListSnapshotInfo latest = snapshots.getLatestSnapshot();
        if (latest != null && latest.getIndex() >= ti.getIndex()) {
            return latest.getIndex();
        }
        synchronized (snapshotLock) {
            ShardEngine current = engine;
            snapshots.take(ti, shardClock, current::snapshotTo);
            snapshotTaken();
        }
        return ti.getIndex();
    }

    /** Ratis is about to replace the snapshot directory with one received from the leader. */
    @Override
    public void pause() {
        synchronized (snapshotLock) { // never while a snapshot of our own is being written
            LifeCycle lc = getLifeCycle();
            if (lc.getCurrentState() == LifeCycle.State.RUNNING) {
                lc.transition(LifeCycle.State.PAUSING);
                lc.transition(LifeCycle.State.PAUSED);
            }
        }
    }

    /** After a snapshot install: the old engine goes, the restart rule opens a new one over the snapshot. */
    @Override
    public void reinitialize() throws IOException {
        applied.handle((v, e) -> null).join();
        ShardEngine old = engine;
        engine = null;
        if (old != null) {
            old.close();
        }
        getLifeCycle().startAndTransition(this::openFromSnapshot, IOException.class);
        factory.replaced(shard, old, engine);
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeaderId) {
        if (newLeaderId != null) {
            elections.incrementAndGet();
        }
    }

    /** Leader changes this replica has seen since it started. */
    long leaderChanges() {
        return elections.get();
    }

    int shard() {
        return shard;
    }

    /** The engine serving this replica now (changes when a snapshot is installed), or null while closed. */
    ShardEngine engine() {
        return engine;
    }

    @Override
    public void close() {
        getLifeCycle().checkStateAndClose(() -> {
            applied.handle((v, e) -> null).join();
            ShardEngine current = engine;
            engine = null;
            if (current != null) {
                current.close();
            }
        });
    }
}

package io.strand.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
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
 * <p><b>Clock.</b> The leader stamps its wall clock into the entry in {@code startTransaction}, never
 * below the newest stamp this replica has applied, so stamps never go backwards within a shard even
 * across a failover to a node whose clock is behind (as long as the new leader has applied what was
 * committed before it took over, which Ratis's leader-ready check gives).
 *
 * <p><b>Engine failure.</b> A failed engine future (I/O) is fatal for this replica: the shard's
 * replica is closed loudly (error log, {@link #failure()}), no later entry reaches the engine, reads
 * and snapshots refuse. The other replicas go on; restarting the node rebuilds this one by the restart
 * rule.
 */
final class ShardStateMachine extends BaseStateMachine {
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final int shard;
    private final ShardSnapshots snapshots;
    private final ShardEngineFactory factory;
    private final Object snapshotLock = new Object();
    private final AtomicLong elections = new AtomicLong();
    private final AtomicLong newestStamp = new AtomicLong(Long.MIN_VALUE);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** Completes when every entry handed to the engine so far has taken effect (success or failure). */
    private volatile CompletableFuture<Void> applied = CompletableFuture.completedFuture(null);
    private volatile ShardEngine engine;

    ShardStateMachine(int shard, ShardSnapshots snapshots, ShardEngineFactory factory) {
        this.shard = shard;
        this.snapshots = snapshots;
        this.factory = factory;
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
        setLastAppliedTermIndex(latest == null ? TermIndex.INITIAL_VALUE : latest.getTermIndex());
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
        ShardEntry.Decoded decoded = ShardEntry.decode(entry.getStateMachineLogEntry().getLogData());
        newestStamp.accumulateAndGet(decoded.stampedAtMillis(), Math::max);
        List<CompletableFuture<byte[]>> replies = new ArrayList<>(decoded.commands().size());
        try {
            for (byte[] command : decoded.commands()) {
                replies.add(engine.apply(decoded.stampedAtMillis(), command));
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
        applied = applied.thenCombine(reply.handle((m, e) -> null), (a, b) -> null);
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

    /** The engine failure that stopped this replica, if any. */
    Throwable failure() {
        return failure.get();
    }

    /** Completes once every entry applied so far has taken effect in the engine; for read barriers. */
    @Override
    public CompletableFuture<Message> query(Message request) {
        Throwable failed = failure.get();
        if (failed != null) {
            return CompletableFuture.failedFuture(new IOException("shard " + shard + " replica stopped", failed));
        }
        return applied.thenApply(v -> Message.EMPTY);
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
            long started = System.nanoTime();
            snapshots.take(ti, current::snapshotTo);
            LOG.log(System.Logger.Level.INFO, "shard " + shard + " on " + getId() + ": snapshot " + ti + " taken in "
                    + (System.nanoTime() - started) / 1_000_000 + " ms");
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

package io.strand.app.ds;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.stores.Placement;
import io.strand.app.stores.ReplicatedStreams;
import io.strand.app.stores.Stores;
import io.strand.core.Agent;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Thread-safe (a concurrent map of store set → {@link DsState}, built on first use): the Durable
 * Streams state of every store set on this node, the node's subscriptions, and the
 * {@code ds-expiry} agent. On a cluster node it is also what each shard replica applies stream
 * writes through ({@link ReplicatedStreams}, on the shard's apply thread); the states of a store set
 * are dropped when it closes.
 *
 * <p>Expiry: on a single node the agent removes a stream past its TTL or Expires-At that no
 * request touched. On a cluster only the shard's leader decides: it proposes the expiry as a write
 * ({@link DsCall#expire}), which every replica applies at the leader's stamp.
 */
public final class DsStates implements ReplicatedStreams, AutoCloseable {
    /** Expired streams are removed within about this long even when no request touches them. */
    static final long SWEEP_MILLIS = 1000;

    private final ConcurrentHashMap<Stores, DsState> states = new ConcurrentHashMap<>();
    private final boolean replicated;
    private final long longPollMillis;
    private final DsSubscriptions subscriptions;
    private final Agent sweeper;
    /** Set once by {@link #serveThrough}, before requests come; null while a cluster node starts. */
    private volatile Placement placement;

    /** {@code replicated}: a cluster node's (see {@link DsStreams#readable}). */
    public DsStates(boolean replicated, Duration longPollTimeout) {
        this.replicated = replicated;
        this.longPollMillis = longPollTimeout.toMillis();
        // subscriptions read tails and append wake events through the states of the streams they name
        this.subscriptions = new DsSubscriptions(this::tailOffset, this::appendWake);
        this.sweeper = Agent.start("ds-expiry", Duration.ofMillis(SWEEP_MILLIS), this::sweep);
    }

    /** Where the workspaces' stores are, and how a cluster node proposes writes. */
    public void serveThrough(Placement placement) {
        this.placement = placement;
    }

    DsSubscriptions subscriptions() {
        return subscriptions;
    }

    /** The state over {@code stores}. */
    DsState of(Stores stores) {
        return states.computeIfAbsent(stores, s -> new DsState(s.logs(), s.dir().resolve("ds"), replicated, subscriptions,
                longPollMillis));
    }

    /** The state holding workspace {@code ws}'s streams on this node. */
    DsState of(String ws) {
        return of(placement.local(ws));
    }

    private String tailOffset(String ws, String path) {
        return of(ws).streams.tailOffset(ws, path);
    }

    /** A pull-wake event: appended here on a single node; on a cluster proposed like any stream write (a virtual thread waits). */
    private boolean appendWake(String ws, String path, byte[] json) {
        if (!replicated) {
            return of(ws).appender.appendWake(ws, path, json, System.currentTimeMillis());
        }
        byte[] answer = placement.writes().dsWrite(ws, DsCall.wake(ws, path, json).bytes()).join();
        return DsAnswer.read(answer).status() == io.helidon.http.Status.NO_CONTENT_204.code();
    }

    /** The paths of a workspace's streams under {@code root}, relative to it. */
    List<String> underRoot(String ws, String root) {
        return of(ws).streams.underRoot(ws, root);
    }

    /** Adds {@code dsPath} and {@code contentType} to a native log's info when the log holds a DS stream. */
    public void annotate(String ws, String log, ObjectNode info) {
        of(ws).annotate(ws, log, info);
    }

    @Override
    public String streamPath(Stores stores, String ws, String log) {
        return of(stores).streamPath(ws, log);
    }

    @Override
    public byte[] apply(Stores stores, byte[] call, long stampedAtMillis) {
        return of(stores).apply(DsCall.read(call), stampedAtMillis).bytes();
    }

    @Override
    public void beforeSnapshot(Stores stores) {
        DsState s = states.get(stores);
        if (s != null) {
            s.registry.saveTouched();
        }
    }

    @Override
    public void closing(Stores stores) {
        states.remove(stores);
    }

    /**
     * One pass of the {@code ds-expiry} agent over every store set that holds streams. A stream that
     * cannot be removed is skipped, the others still are; the pass then throws, so the agent counts
     * and reports it, and the stream is tried again next pass.
     */
    private void sweep() {
        Placement p = placement;
        if (p == null) {
            return;
        }
        long now = System.currentTimeMillis();
        RuntimeException failed = null;
        String failedStream = null;
        int failures = 0;
        for (Stores stores : p.all()) {
            if (!states.containsKey(stores) && !Files.isDirectory(stores.dir().resolve("ds"))) {
                continue; // no stream was ever made here
            }
            DsState state = of(stores);
            for (DsStream s : state.expired(now)) {
                try {
                    if (!replicated) {
                        state.streams.expire(s, now);
                    } else if (p.leads(s.ws)) {
                        p.writes().dsWrite(s.ws, DsCall.expire(s.ws, s.path).bytes()).join();
                    }
                } catch (RuntimeException e) {
                    failures++;
                    if (failed == null) {
                        failed = e;
                        failedStream = s.ws + "/" + s.path;
                    }
                }
            }
        }
        if (failed != null) {
            throw new IllegalStateException("cannot delete " + failures + " expired stream(s), the first "
                    + failedStream + ": " + failed.getMessage(), failed);
        }
    }

    /** Stops the expiry agent and the subscriptions' timers and webhook client. */
    @Override
    public void close() {
        sweeper.close();
        subscriptions.close();
    }
}

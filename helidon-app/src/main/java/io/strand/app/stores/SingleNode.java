package io.strand.app.stores;

import java.util.List;

/** The embedded default: one store set over {@code --data}, written directly. Thread-safe (immutable). */
public final class SingleNode implements Placement {
    private final Stores stores;
    private final LocalWrites writes;

    public SingleNode(Stores stores) {
        this(stores, StreamBackedLogs.NONE);
    }

    /** @param streams which logs hold a Durable Streams stream (native appends and deletes of them are refused) */
    public SingleNode(Stores stores, StreamBackedLogs streams) {
        this.stores = stores;
        this.writes = new LocalWrites(ws -> stores, streams);
    }

    @Override
    public Stores local(String ws) {
        return stores;
    }

    @Override
    public boolean awaitCaughtUp(String ws) {
        return true; // one copy: every acknowledged write is already in it
    }

    @Override
    public WritePath writes() {
        return writes;
    }

    @Override
    public List<Stores> all() {
        return List.of(stores);
    }

    @Override
    public void onPolicyTrim(io.strand.logtier.Retention.PolicyTrims trims) {
        stores.retention().onPolicyTrim(trims);
    }

    @Override
    public String durableWire() {
        return stores.writers().durability().wire();
    }

    @Override
    public void close() {
        stores.close();
    }
}

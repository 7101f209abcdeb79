package io.strand.docstore;

import io.strand.core.ErrorCode;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Thread-safe ({@link LongAdder}s and volatiles): writer threads, readers and the checkpointer all count here.
 * Counters a server publishes for the doc store (SPEC §11: doc ops, conflicts, floor rejections); no metrics
 * library.
 */
public final class DocMetrics {

    /** The doc operations that are counted. */
    public enum Kind { GET, PUT, CAS, INCR, APPLY, DELETE, LIST }

    private final Map<Kind, LongAdder> ops = new EnumMap<>(Kind.class);
    private final Map<ErrorCode, LongAdder> rejections = new EnumMap<>(ErrorCode.class);
    private final LongAdder journalRecords = new LongAdder();
    private final LongAdder checkpoints = new LongAdder();
    private final LongAdder snapshots = new LongAdder();
    private final LongAdder backgroundErrors = new LongAdder();
    private final LongAdder viewErrors = new LongAdder();
    private volatile String startMode = "none";
    private volatile long startMillis;
    private volatile long replayedRecords;

    DocMetrics() {
        for (Kind k : Kind.values()) {
            ops.put(k, new LongAdder());
        }
        for (ErrorCode c : ErrorCode.values()) {
            rejections.put(c, new LongAdder());
        }
    }

    void op(Kind kind) {
        ops.get(kind).increment();
    }

    void rejected(ErrorCode code) {
        rejections.get(code).increment();
    }

    void journalRecord() {
        journalRecords.increment();
    }

    void checkpoint() {
        checkpoints.increment();
    }

    void snapshot() {
        snapshots.increment();
    }

    void backgroundError() {
        backgroundErrors.increment();
    }

    void viewError() {
        viewErrors.increment();
    }

    void started(String mode, long millis, long replayed) {
        this.startMode = mode;
        this.startMillis = millis;
        this.replayedRecords = replayed;
    }

    /** Requests of one kind, successful or not. */
    public long ops(Kind kind) {
        return ops.get(kind).sum();
    }

    /** Requests refused with {@code code} (conflicts, floor/ceiling, bad input, storage full…). */
    public long rejections(ErrorCode code) {
        return rejections.get(code).sum();
    }

    /** {@code version_conflict} plus {@code cas_conflict}. */
    public long conflicts() {
        return rejections(ErrorCode.VERSION_CONFLICT) + rejections(ErrorCode.CAS_CONFLICT);
    }

    public long floorRejections() {
        return rejections(ErrorCode.FLOOR_VIOLATION);
    }

    public long ceilingRejections() {
        return rejections(ErrorCode.CEILING_VIOLATION);
    }

    public long journalRecords() {
        return journalRecords.sum();
    }

    public long checkpoints() {
        return checkpoints.sum();
    }

    public long snapshots() {
        return snapshots.sum();
    }

    /** Checkpointer failures (caught, logged, retried next interval). */
    public long backgroundErrors() {
        return backgroundErrors.sum();
    }

    /** Durable changes the map view refused to store (the store then refuses writes until restarted). */
    public long viewErrors() {
        return viewErrors.sum();
    }

    /** How the last start-up opened the map: {@code clean}, {@code recovered} or {@code rebuilt}. */
    public String startMode() {
        return startMode;
    }

    public long startMillis() {
        return startMillis;
    }

    /** Journal records replayed into the map at start-up. */
    public long replayedRecords() {
        return replayedRecords;
    }

    /** Every counter by a flat snake_case name, for publishing (e.g. {@code ops_incr}, {@code rejected_floor_violation}). */
    public Map<String, Long> toMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Kind k : Kind.values()) {
            m.put("ops_" + k.name().toLowerCase(Locale.ROOT), ops(k));
        }
        for (ErrorCode c : ErrorCode.values()) {
            long n = rejections(c);
            if (n > 0) {
                m.put("rejected_" + c.wire(), n);
            }
        }
        m.put("conflicts", conflicts());
        m.put("floor_rejections", floorRejections());
        m.put("journal_records", journalRecords());
        m.put("checkpoints", checkpoints());
        m.put("snapshots", snapshots());
        m.put("background_errors", backgroundErrors());
        m.put("view_errors", viewErrors());
        m.put("start_millis", startMillis);
        m.put("replayed_records", replayedRecords);
        return m;
    }
}

package io.strand.docstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Runs on the writer thread of the doc's workspace ({@link Writers}, owner = workspace name), so each doc has
 * exactly one writer at a time; holds no state of its own beyond its collaborators. The writer side of a doc turn.
 *
 * <p>A turn reads the doc (the {@link DocOverlay} first, then the durable view), applies the change to a private
 * copy, checks size, depth, disk and capacity ({@link DocStore.Prepared}), then commits: appends the whole new
 * value to the calling thread's {@link JournalLanes.Lane lane}, adds it to the overlay and logs the same bytes to
 * the group's write-ahead records. Commit point: the group's write-ahead records are durable; only then does the
 * lane publish the change ({@link DocPublisher}) and the caller's future complete. The write-ahead payload of
 * record type {@link DocStore#WAL_CHANGE} is exactly the {@link DocJournal} record (its byte table is there).
 */
final class DocWriter {
    private final Writers writers;
    private final int maxDocBytes;
    private final DocCapacity capacity;
    private final DocOverlay overlay;
    private final DocPublisher publisher;
    private final JournalLanes lanes;
    private final DocCheckpointer checkpointer;
    private final DocMetrics metrics;

    DocWriter(Writers writers, DocStoreConfig config, DocCapacity capacity, DocOverlay overlay, DocPublisher publisher,
              JournalLanes lanes, DocCheckpointer checkpointer, DocMetrics metrics) {
        this.writers = writers;
        this.maxDocBytes = config.maxDocBytes();
        this.capacity = capacity;
        this.overlay = overlay;
        this.publisher = publisher;
        this.lanes = lanes;
        this.checkpointer = checkpointer;
        this.metrics = metrics;
    }

    // ---------------------------------------------------------------- the public ops' turns

    /** {@code put}: replaces the doc with a private copy of {@code value}, size and depth checked before the turn. */
    TurnSubmitter.TurnFactory<Long> put(ObjectNode value, Long expectVersion) {
        return id -> {
            ObjectNode copy = value.deepCopy();
            byte[] json = Json.bytes(copy);
            checkLimits(id, copy, json);
            return commit -> {
                Current cur = current(id);
                checkExpect(id, cur, expectVersion);
                DocStore.Prepared p = prepareState(id, cur, cur.version + 1, copy, json, List.of());
                commit(commit, p, true);
                return p.version;
            };
        };
    }

    /**
     * {@code cas} or {@code incr}: one op, no expected version. {@code op} is built (its path parsed, if given as
     * text) before the turn, after the doc id.
     */
    <T> TurnSubmitter.TurnFactory<T> one(Supplier<? extends Op> op, Function<DocStore.Prepared, T> reply) {
        return id -> {
            Op o = op.get();
            return commit -> {
                DocStore.Prepared p = prepareOps(id, List.of(o), null, false);
                commit(commit, p, true);
                return reply.apply(p);
            };
        };
    }

    /** {@code apply}: {@code ops} in order, all or nothing; the failing op's error carries {@code index}. */
    TurnSubmitter.TurnFactory<DocValue> apply(List<Op> ops, Long expectVersion) {
        return id -> {
            if (ops == null || ops.isEmpty()) {
                throw StrandException.badRequest("ops must not be empty");
            }
            List<Op> copy = List.copyOf(ops);
            return commit -> {
                DocStore.Prepared p = prepareOps(id, copy, expectVersion, true);
                commit(commit, p, true);
                return new DocValue(p.version, p.value);
            };
        };
    }

    /** {@code delete}: the turn returns the version deleted. */
    TurnSubmitter.TurnFactory<Long> delete(Long expectVersion) {
        return id -> commit -> {
            Current cur = current(id);
            if (cur.stored == null && (expectVersion == null || expectVersion == 0)) {
                throw StrandException.notFound("doc '" + id.doc() + "' not found in workspace '" + id.ws() + "'");
            }
            checkExpect(id, cur, expectVersion);
            DocStore.Prepared p = prepareState(id, cur, cur.version, null, null, List.of());
            commit(commit, p, true);
            return cur.version;
        };
    }

    /**
     * Re-applies a change an earlier run logged ahead, as a turn on its workspace's writer. Records come in
     * write order, so a doc at a lower version takes the value, a doc at the same or a higher version keeps
     * its own, and a tombstone removes whatever is there (a later record re-creates it).
     */
    CompletableFuture<Void> replay(byte[] encoded) {
        DocJournal.Record r = DocJournal.decode(encoded, -1);
        DocId id = DocId.fromKey(r.key());
        return writers.submit(id.ws(), commit -> {
            Current cur = current(id);
            DocStore.Prepared p;
            if (r.isDelete()) {
                if (cur.stored == null) {
                    return null;
                }
                p = prepareState(id, cur, cur.version, null, null, List.of());
            } else {
                if (r.version() <= cur.version) {
                    return null;
                }
                ObjectNode value = (ObjectNode) Json.parseStored(r.json());
                p = prepareState(id, cur, r.version(), value, r.json(), List.of());
            }
            commit(commit, p, false);
            return null;
        });
    }

    // ---------------------------------------------------------------- prepare, commit, abandon

    /** Validates {@code ops} against the doc as this turn sees it and reserves capacity, writing nothing. */
    DocStore.Prepared prepareOps(DocId id, List<Op> ops, Long expectVersion, boolean indexed) {
        Current cur = current(id);
        checkExpect(id, cur, expectVersion);
        ObjectNode value = cur.mutableValue();
        List<JsonNode> results = new ArrayList<>(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            try {
                results.add(ops.get(i).applyTo(value, cur.version));
            } catch (StrandException e) {
                throw indexed && !e.extras().containsKey("index") ? e.with("index", i) : e;
            }
        }
        byte[] json = Json.bytes(value);
        checkLimits(id, value, json);
        return prepareState(id, cur, cur.version + 1, value, json, results);
    }

    /** Reserves capacity for the new state ({@code value} null = delete) and packages the change. */
    private DocStore.Prepared prepareState(DocId id, Current cur, long version, ObjectNode value, byte[] json,
                                           List<JsonNode> results) {
        String failure = publisher.failure();
        if (failure != null) {
            throw new StrandException(ErrorCode.STORAGE_FULL, failure);
        }
        lanes.lane(); // a writer thread, before anything is claimed
        capacity.requireDisk(id.key(), json);
        long oldWeight = cur.stored == null ? 0 : StoredDoc.weight(id.key(), cur.stored.json());
        long newWeight = value == null ? 0 : StoredDoc.weight(id.key(), json);
        long docDelta = (value == null ? 0 : 1) - (cur.stored == null ? 0 : 1);
        capacity.reserve(docDelta, newWeight - oldWeight);
        StoredDoc state = value == null ? null : new StoredDoc(version, json);
        return new DocStore.Prepared(id, version, state, value, Collections.unmodifiableList(results), docDelta,
                newWeight - oldWeight);
    }

    /**
     * Appends a prepared change to the calling thread's journal lane, shows it to later turns through the overlay,
     * logs it ahead when {@code logAhead} (not when re-applying a write-ahead record) and publishes it once the
     * group is durable.
     */
    void commit(Writers.Commit commit, DocStore.Prepared p, boolean logAhead) {
        JournalLanes.requireWriterThread();
        if (p.finished) {
            throw new IllegalStateException("change to " + p.id.key() + " already committed or abandoned");
        }
        JournalLanes.Lane lane = lanes.lane();
        PendingChange pending = new PendingChange(p.id, p.state, p.value);
        byte[] encoded = record(p);
        try {
            lane.append(pending, encoded);
        } catch (RuntimeException e) {
            abandon(p);
            throw e;
        }
        p.finished = true;
        overlay.add(pending);
        metrics.journalRecord();
        checkpointer.recordAppended();
        if (logAhead) {
            commit.log(DocStore.WAL_CHANGE, encoded);
        }
        commit.afterDurable(() -> lane.publishThrough(pending));
    }

    /** {@code p} as a {@link DocJournal} record: a doc's whole new value, or a tombstone. */
    static byte[] record(DocStore.Prepared p) {
        DocJournal.Record record = p.state == null
                ? new DocJournal.Record(DocJournal.DELETE, p.version, p.id.key(), null)
                : new DocJournal.Record(DocJournal.PUT, p.version, p.id.key(), p.state.json());
        return DocJournal.encode(record);
    }

    /** Releases the capacity a prepared change claimed, unless it was committed or released already. */
    void abandon(DocStore.Prepared p) {
        if (!p.finished) {
            p.finished = true;
            capacity.release(p.docDelta, p.byteDelta);
        }
    }

    // ---------------------------------------------------------------- what a turn reads and checks

    /** A doc as a turn sees it: {@code stored} null when missing (version 0). */
    private record Current(long version, StoredDoc stored, ObjectNode tree) {
        static final Current MISSING = new Current(0, null, null);

        /** A private copy of the value to change: from the tree a pending change kept, else parsed. */
        ObjectNode mutableValue() {
            return stored == null ? Json.MAPPER.createObjectNode() : tree != null ? tree.deepCopy() : stored.parse();
        }

        JsonNode valueOrNull() {
            return stored == null ? NullNode.getInstance() : stored.parse();
        }
    }

    private Current current(DocId id) {
        PendingChange p = overlay.latest(id);
        StoredDoc s = p != null ? p.state : publisher.durable(id.key());
        return s == null ? Current.MISSING : new Current(s.version(), s, p != null ? p.tree : null);
    }

    private static void checkExpect(DocId id, Current cur, Long expectVersion) {
        if (expectVersion != null && expectVersion != cur.version) {
            String what = cur.stored == null ? "does not exist" : "is at version " + cur.version;
            Map<String, Object> extras = new LinkedHashMap<>();
            extras.put("version", cur.version);
            extras.put("value", cur.valueOrNull());
            throw new StrandException(ErrorCode.VERSION_CONFLICT, "doc '" + id.key() + "' " + what
                    + ", not at the expected " + (expectVersion == 0 ? "0 (must not exist)" : "version " + expectVersion),
                    extras);
        }
    }

    /**
     * Refuses a doc a write would produce if it is too large or nests deeper than {@link DocStore#MAX_DEPTH}. Runs
     * on the whole resulting doc, so a path and a value that pass on their own cannot add up to a doc that could
     * not be sent back. Any thread (a put checks before its turn).
     */
    private void checkLimits(DocId id, ObjectNode value, byte[] json) {
        if (json.length > maxDocBytes) {
            throw StrandException.tooLarge("doc '" + id.key() + "' would be " + json.length
                    + " bytes as JSON; the limit is " + maxDocBytes);
        }
        int depth = depth(value);
        if (depth > DocStore.MAX_DEPTH) {
            throw StrandException.badRequest("doc '" + id.key() + "' would nest " + depth + " levels deep; the limit is "
                    + DocStore.MAX_DEPTH + " (the root object is level 1, each object or array inside adds one)");
        }
    }

    /** {@code node}'s nesting depth: a scalar 0, {@code {}} 1. A doc is at most {@code maxDocBytes}, so the walk is short. */
    static int depth(JsonNode node) {
        if (!node.isContainerNode()) {
            return 0;
        }
        int deepest = 0;
        for (JsonNode child : node) {
            if (child.isContainerNode()) {
                deepest = Math.max(deepest, depth(child));
            }
        }
        return deepest + 1;
    }
}

package io.strand.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.core.ErrorCode;
import io.strand.core.FailPoints;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.core.TxnIntents;
import io.strand.core.Writers;
import io.strand.docstore.DocStore;
import io.strand.logtier.AppendResult;
import io.strand.logtier.LogStore;
import io.strand.logtier.StagedAppend;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Transactions across docs and logs of one workspace (SPEC §5 {@code txn}), shared by
 * {@code POST /v1/ws/{ws}/txn} and the socket op {@code txn}. Thread-safe: each txn is one turn on
 * the workspace's writer, so it sees and leaves every object it touches as no other write does in
 * between, and its records are one group's write, acknowledged together once durable.
 *
 * <p>The turn: (1) prepare every doc (ops against its pending value; capacity reserved) and stage
 * every append (sizes, producer window, {@code expectedLastSeq}; the batch encoded with its seqs),
 * writing nothing; a refusal answers naming the part ({@code doc} + {@code index}, or {@code log})
 * and releases what was prepared. (2) Write the commit record ({@link TxnIntents}). (3) Apply the
 * doc changes, then the appends, so their after-durable hooks publish the docs before any log head:
 * a subscriber that sees a txn's entry finds its doc change already readable. (4) Mark the record
 * done. A crash between (2) and (4) is finished at the next start.
 *
 * <p>A producer duplicate ({@code producerId}/{@code producerSeq} already applied to that log) means
 * the txn was applied before: it answers {@code 409 duplicate} naming the log, with the original
 * {@code firstSeq}/{@code lastSeq}, and changes nothing.
 */
public final class TxnApi {
    private final Writers writers;
    private final LogStore logs;
    private final DocStore docs;
    private final TxnIntents intents;
    private final StrandMetrics metrics;

    public TxnApi(Writers writers, LogStore logs, DocStore docs, TxnIntents intents, StrandMetrics metrics) {
        this.writers = writers;
        this.logs = logs;
        this.docs = docs;
        this.intents = intents;
        this.metrics = metrics;
    }

    /**
     * Runs the txn in {@code body} on {@code ws}; completes with the reply once durable. Its entries,
     * and the reply's {@code ts}, are stamped {@code stampedAt} when given (a cluster leader's clock,
     * carried in the Raft entry, so every replica stores the same), else this node's clock.
     */
    public CompletableFuture<ObjectNode> call(String ws, JsonNode body, Principal who, Long stampedAt) {
        Names.workspace(ws);
        who.require(ws, Scope.RW);
        TxnRequest req = TxnRequest.parse(body).stampedAt(stampedAt);
        String durable = writers.durability().wire();
        return writers.submit(ws, commit -> run(ws, req, commit, durable, stampedAt)).whenComplete((r, t) -> count(req, t));
    }

    /**
     * Counts a txn as its parts would count alone: each doc part a doc op, each append part's entries
     * and bytes; a refusal counts where the same refusal of a lone op would (a conflict, a bound
     * rejection, or an append error for a part naming a log).
     */
    private void count(TxnRequest req, Throwable t) {
        if (t == null) {
            req.docs().forEach(d -> metrics.docOp());
            req.appends().forEach(a -> metrics.appended(a.request()));
            return;
        }
        StrandException e = ApiErrors.classify(t);
        metrics.docRefused(e.code());
        if (e.extras().containsKey("log")) {
            metrics.appendRefused();
        }
    }

    private ObjectNode run(String ws, TxnRequest req, Writers.Commit commit, String durable, Long stampedAt) {
        List<DocStore.Prepared> prepared = new ArrayList<>(req.docs().size());
        List<StagedAppend> staged = new ArrayList<>(req.appends().size());
        List<TxnIntents.Part> parts = new ArrayList<>(req.docs().size() + req.appends().size());
        try {
            for (TxnRequest.DocPart d : req.docs()) {
                try {
                    DocStore.Prepared p = docs.prepare(ws, d.doc(), d.ops(), d.expectVersion());
                    prepared.add(p);
                    parts.add(new TxnIntents.Part(DocStore.recordType(), docs.record(p)));
                } catch (StrandException e) {
                    throw named(e, "doc", d.doc());
                }
            }
            for (TxnRequest.AppendPart a : req.appends()) {
                try {
                    StagedAppend s = logs.stage(ws, a.log(), a.request());
                    staged.add(s);
                    parts.add(new TxnIntents.Part(s.recordType(), s.record()));
                } catch (StrandException e) {
                    throw named(e, "log", a.log());
                }
            }
            FailPoints.hit("txn.beforeCommitRecord");
            if (parts.size() > 1) { // one part is one record in one file: whole or absent by itself
                intents.commit(parts);
            }
            FailPoints.hit("txn.afterCommitRecord");
        } catch (RuntimeException e) {
            prepared.forEach(docs::abandon);
            staged.forEach(StagedAppend::abandon);
            throw e;
        }
        ObjectNode reply = Json.MAPPER.createObjectNode();
        try {
            ObjectNode docReplies = reply.putObject("docs");
            for (DocStore.Prepared p : prepared) {
                docs.commit(commit, p);
            }
            FailPoints.hit("txn.afterDocs");
            for (int i = 0; i < prepared.size(); i++) {
                DocStore.Prepared p = prepared.get(i);
                docReplies.putObject(req.docs().get(i).doc()).put("version", p.version()).set("value", p.value());
            }
            long ts = 0;
            var appendReplies = reply.putArray("append");
            for (StagedAppend s : staged) {
                AppendResult r = s.apply(commit, durable);
                FailPoints.hit("txn.afterAppend");
                ts = Math.max(ts, r.ts());
                appendReplies.addObject().put("log", s.log()).put("firstSeq", r.firstSeq()).put("lastSeq", r.lastSeq());
            }
            reply.put("ts", !staged.isEmpty() ? ts : stampedAt != null ? stampedAt : System.currentTimeMillis());
            reply.put("durable", durable);
        } catch (RuntimeException e) {
            if (parts.size() > 1) {
                intents.failed(e);
            }
            prepared.forEach(docs::abandon);
            staged.forEach(StagedAppend::abandon);
            if (parts.size() <= 1) {
                throw e; // no commit record: one part fails whole, as a plain append or doc op does
            }
            throw new StrandException(ErrorCode.OUTCOME_UNKNOWN, "txn outcome unknown: applying it failed after its commit"
                    + " record was written (" + e.getMessage() + "); the next start finishes it, and this writer refuses"
                    + " txns until then", Map.of("retryable", true), e);
        }
        if (parts.size() > 1) {
            intents.done();
        }
        return reply;
    }

    /** The error of one part, naming it: {@code "doc":name} (with the op's {@code index}) or {@code "log":name}. */
    private static StrandException named(StrandException e, String kind, String name) {
        Map<String, Object> extras = new LinkedHashMap<>();
        extras.put(kind, name);
        extras.putAll(e.extras());
        return new StrandException(e.code(), "txn " + kind + " '" + name + "': " + e.getMessage(), extras, e.getCause());
    }
}

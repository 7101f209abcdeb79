package io.strand.app;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.docstore.DocOps;
import io.strand.docstore.Op;
import io.strand.logtier.AppendRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A parsed {@code txn} body (SPEC §5): {@code {"docs":{name:{"ops":[…],"expectVersion"?}},
 * "append":[{"log","entries"|"data","expectedLastSeq"?,"producerId"?,"producerSeq"?}]}}, with the
 * txn limits checked. Immutable.
 */
public record TxnRequest(List<DocPart> docs, List<AppendPart> appends) {
    /** Most docs one txn may change. */
    public static final int MAX_DOCS = 100;
    /** Most log entries one txn may append, over all its appends. */
    public static final int MAX_ENTRIES = 1000;

    private static final Set<String> FIELDS = Set.of("docs", "append");
    private static final Set<String> ENVELOPE = Set.of("id", "op");
    private static final Set<String> DOC_FIELDS = Set.of("ops", "expectVersion");
    private static final Set<String> APPEND_FIELDS = Set.of("log", "data", "key", "entries", "expectedLastSeq", "producerId", "producerSeq");

    /** One doc's ops, applied in order against its value as earlier parts of no other txn left it. */
    public record DocPart(String doc, List<Op> ops, Long expectVersion) {
    }

    /** One log's append. */
    public record AppendPart(String log, AppendRequest request) {
    }

    /** This txn with every append stamped {@code epochMillis} (see {@link AppendRequest#withStampedAt}); itself for null. */
    public TxnRequest stampedAt(Long epochMillis) {
        if (epochMillis == null) {
            return this;
        }
        return new TxnRequest(docs, appends.stream().map(a -> new AppendPart(a.log(), a.request().withStampedAt(epochMillis))).toList());
    }

    public static TxnRequest parse(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw StrandException.badRequest("a txn body must be a JSON object {\"docs\":{…},\"append\":[…]}");
        }
        LogRequests.onlyFields(body, FIELDS, ENVELOPE, "txn");
        List<DocPart> docs = new ArrayList<>();
        JsonNode d = body.get("docs");
        if (d != null && !d.isNull()) {
            if (!d.isObject()) {
                throw StrandException.badRequest("'docs' must be an object {name:{\"ops\":[…]}}");
            }
            if (d.size() > MAX_DOCS) {
                throw StrandException.badRequest("a txn changes at most " + MAX_DOCS + " docs, got " + d.size());
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = d.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String name = Names.object("doc", e.getKey());
                JsonNode part = e.getValue();
                try {
                    if (!part.isObject()) {
                        throw StrandException.badRequest("docs." + name + " must be an object {\"ops\":[…],\"expectVersion\"?}");
                    }
                    LogRequests.onlyFields(part, DOC_FIELDS, Set.of(), "docs." + name);
                    docs.add(new DocPart(name, DocOps.parse(part.get("ops")), DocOps.expectVersion(part)));
                } catch (StrandException ex) {
                    throw ex.with("doc", name);
                }
            }
        }
        List<AppendPart> appends = new ArrayList<>();
        JsonNode a = body.get("append");
        int entries = 0;
        if (a != null && !a.isNull()) {
            if (!a.isArray()) {
                throw StrandException.badRequest("'append' must be an array of {\"log\",\"entries\",…}");
            }
            Set<String> logs = new HashSet<>();
            for (int i = 0; i < a.size(); i++) {
                JsonNode part = a.get(i);
                if (!part.isObject() || !part.path("log").isTextual()) {
                    throw StrandException.badRequest("append[" + i + "] must be an object with 'log'");
                }
                String log = Names.object("log", part.get("log").asText());
                try {
                    LogRequests.onlyFields(part, APPEND_FIELDS, Set.of(), "append[" + i + "]");
                    if (!logs.add(log)) {
                        throw StrandException.badRequest("log '" + log + "' appears twice in one txn: give its entries in one append");
                    }
                    AppendPart p = new AppendPart(log, LogRequests.append(part, Set.of("log")));
                    entries += p.request().data().size();
                    appends.add(p);
                } catch (StrandException ex) {
                    throw ex.with("log", log);
                }
            }
        }
        if (docs.isEmpty() && appends.isEmpty()) {
            throw StrandException.badRequest("a txn needs at least one doc or one append");
        }
        if (entries > MAX_ENTRIES) {
            throw StrandException.tooLarge("a txn appends at most " + MAX_ENTRIES + " entries, got " + entries);
        }
        return new TxnRequest(List.copyOf(docs), List.copyOf(appends));
    }
}

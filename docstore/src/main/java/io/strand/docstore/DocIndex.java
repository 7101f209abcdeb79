package io.strand.docstore;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;

/**
 * Thread-safe (concurrent sorted sets): built at start-up from the map view, then changed only by each
 * workspace's writer thread after a change is durable; any thread lists (weakly consistent). Doc names per
 * workspace in sorted order, for listing.
 */
final class DocIndex {
    private final ConcurrentHashMap<String, NavigableSet<String>> byWorkspace = new ConcurrentHashMap<>();

    void add(String ws, String doc) {
        byWorkspace.computeIfAbsent(ws, w -> new ConcurrentSkipListSet<>()).add(doc);
    }

    void remove(String ws, String doc) {
        NavigableSet<String> docs = byWorkspace.get(ws);
        if (docs != null) {
            docs.remove(doc);
        }
    }

    int size(String ws) {
        NavigableSet<String> docs = byWorkspace.get(ws);
        return docs == null ? 0 : docs.size();
    }

    /** Workspaces holding at least one doc, in name order. */
    List<String> workspaces() {
        List<String> out = new ArrayList<>();
        byWorkspace.forEach((ws, docs) -> {
            if (!docs.isEmpty()) {
                out.add(ws);
            }
        });
        out.sort(null);
        return out;
    }

    /** Every doc name of {@code ws} (a weakly consistent view). */
    Iterable<String> docs(String ws) {
        NavigableSet<String> docs = byWorkspace.get(ws);
        return docs == null ? List.of() : docs;
    }

    DocPage page(String ws, String after, int limit) {
        NavigableSet<String> docs = byWorkspace.get(ws);
        if (docs == null) {
            return new DocPage(List.of(), null);
        }
        NavigableSet<String> tail = after == null || after.isEmpty() ? docs : docs.tailSet(after, false);
        List<String> page = new ArrayList<>(Math.min(limit, 64));
        String more = null;
        for (String d : tail) {
            if (page.size() == limit) {
                more = d;
                break;
            }
            page.add(d);
        }
        return new DocPage(List.copyOf(page), more == null ? null : page.getLast());
    }
}

package io.strand.logtier;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.DurableFiles;
import io.strand.core.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Changed only by the shard's apply thread (through {@link LogStore#delete} and
 * {@link LogStore#coldDeleted}), read by any thread: the logs a cluster replica deleted whose cold
 * part (shared by every node) its shard's leader has not emptied yet. While a name is here, no
 * roll of that name runs before the leader empties the manifest ({@link Roller}), and a step 6 that
 * still names the deleted log drops nothing ({@link LogStore#dropCovered}), so a log created again
 * under the name never sees the deleted one's segments.
 *
 * <p>Stored as {@code cold-deletes.json} in the store directory: a JSON array of {@code "ws/log"},
 * replaced whole by a rename (not fsynced: a cluster replica's files are rebuilt from its snapshot and
 * the Raft log after a crash, and this file travels in the snapshot like the logs).
 */
final class ColdDeletes {
    static final String FILE = "cold-deletes.json";
    private final Path file;
    private final TreeSet<String> names = new TreeSet<>();
    private final Map<String, CompletableFuture<Void>> cleared = new ConcurrentHashMap<>();
    private volatile List<String> view = List.of();

    ColdDeletes(Path dir) {
        this.file = dir.resolve(FILE);
        try {
            if (Files.exists(file)) {
                for (JsonNode n : Json.parse(Files.readAllBytes(file))) {
                    names.add(n.asText());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        view = List.copyOf(names);
    }

    static String key(String ws, String name) {
        return ws + '/' + name;
    }

    boolean contains(String ws, String name) {
        return view.contains(key(ws, name));
    }

    /** Every pending name, {@code "ws/log"}, oldest name order. */
    List<String> pending() {
        return view;
    }

    synchronized void add(String ws, String name) {
        if (names.add(key(ws, name))) {
            save();
        }
    }

    synchronized void remove(String ws, String name) {
        String key = key(ws, name);
        if (names.remove(key)) {
            save();
        }
        CompletableFuture<Void> waiting = cleared.remove(key);
        if (waiting != null) {
            waiting.complete(null);
        }
    }

    /** Completes when {@code ws/name} is not pending (at once when it is not now). */
    synchronized CompletableFuture<Void> whenCleared(String ws, String name) {
        String key = key(ws, name);
        return names.contains(key) ? cleared.computeIfAbsent(key, k -> new CompletableFuture<>()) : CompletableFuture.completedFuture(null);
    }

    private void save() {
        try {
            DurableFiles.writeAtomically(file, Json.bytes(new ArrayList<>(names)), false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
        view = List.copyOf(names);
    }
}

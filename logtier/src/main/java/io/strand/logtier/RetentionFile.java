package io.strand.logtier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.DurableFiles;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Stateless: reads and writes a log's trim point and retention policy, in {@code retention.json} beside its queue:
 * {@code {"format":1,"first":N,"policy":{"maxAgeSeconds":…,"maxEntries":…,"maxBytes":…}}}
 * ({@code policy} absent: the server's defaults apply). Written with {@link DurableFiles} (temp
 * file fsynced, renamed, directory fsynced): the rename is the commit point of a trim, so a crash
 * leaves the old state or the new one whole, never a {@code first} that moved back. Absent means
 * first 1 and the server's defaults. Callers write it only on the log's writer thread.
 */
final class RetentionFile {
    static final String NAME = "retention.json";

    /** What the file holds; {@code policy} null = the server's defaults. */
    record State(long first, RetentionPolicy policy) {
        static final State NONE = new State(1, null);

        State withFirst(long next) {
            return new State(next, policy);
        }

        State withPolicy(RetentionPolicy next) {
            return new State(first, next);
        }
    }

    private RetentionFile() {
    }

    static boolean exists(Path logDir) {
        return Files.isRegularFile(logDir.resolve(NAME));
    }

    /** The stored state, {@link State#NONE} when there is none; an unreadable file is {@code corrupt} (never guessed: first must not move back). */
    static State read(Path logDir) {
        Path file = logDir.resolve(NAME);
        if (!Files.isRegularFile(file)) {
            return State.NONE;
        }
        try {
            JsonNode n = Json.MAPPER.readTree(file.toFile());
            long first = n.path("first").asLong(1);
            JsonNode p = n.get("policy");
            RetentionPolicy policy = p == null || p.isNull() ? null
                    : new RetentionPolicy(longOrNull(p, "maxAgeSeconds"), longOrNull(p, "maxEntries"), longOrNull(p, "maxBytes"));
            return new State(Math.max(1, first), policy);
        } catch (IOException | RuntimeException e) {
            throw new StrandException(ErrorCode.CORRUPT, "retention state of a log is unreadable: " + e.getMessage(),
                    Map.of(), e);
        }
    }

    private static Long longOrNull(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asLong();
    }

    /** Replaces the stored state durably (returns once the rename and the directory are on disk). */
    static void write(Path logDir, State state) throws IOException {
        ObjectNode n = Json.MAPPER.createObjectNode().put("format", 1).put("first", state.first());
        if (state.policy() != null) {
            n.set("policy", Json.MAPPER.valueToTree(state.policy()));
        }
        DurableFiles.writeAtomically(logDir.resolve(NAME), Json.bytes(n), true);
    }
}

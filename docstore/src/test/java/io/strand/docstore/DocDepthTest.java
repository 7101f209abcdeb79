package io.strand.docstore;

import static io.strand.docstore.TestStores.await;
import static io.strand.docstore.TestStores.failure;
import static io.strand.docstore.TestStores.json;
import static io.strand.docstore.TestStores.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The nesting-depth limit holds on the doc a write would produce, and every stored doc reads back. */
@Timeout(60)
class DocDepthTest {
    /** A path of the most keys a path may have: its value sits {@link DocPath#MAX_DEPTH} objects down. */
    private static final String LONGEST_PATH = String.join(".", java.util.Collections.nCopies(DocPath.MAX_DEPTH, "k"));

    @TempDir
    Path dir;
    Writers writers;
    DocStore store;

    @BeforeEach
    void open() {
        writers = TestStores.writers(dir);
        store = TestStores.open(dir, writers);
    }

    @AfterEach
    void close() {
        TestStores.close(store, writers);
    }

    /** JSON objects nested {@code depth} deep: {@code {"a":{"a":…{}}}}. */
    static String nested(int depth) {
        return "{\"a\":".repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
    }

    @Test
    void casShouldRefuseAndChangeNothingWhenPathPlusValuePassDepthLimit() {
        await(store.put("w", "d", obj("{\"x\":1}"), null));
        // the case: each part is accepted on its own (path ≤ 32 keys, value parses under the input limit)
        StrandException e = failure(store.cas("w", "d", LONGEST_PATH, null, json(nested(254))), ErrorCode.BAD_REQUEST);
        assertTrue(e.getMessage().contains("deep"), e.getMessage());
        DocValue v = store.get("w", "d").orElseThrow();
        assertEquals(1, v.version());
        assertEquals(obj("{\"x\":1}"), v.value());
    }

    @Test
    void casShouldRefuseWhenItWouldCreateATooDeepDoc() {
        failure(store.cas("w", "d", LONGEST_PATH, null, json(nested(DocStore.MAX_DEPTH))), ErrorCode.BAD_REQUEST);
        assertTrue(store.get("w", "d").isEmpty());
    }

    @Test
    void applySetShouldRefuseAllOpsWhenResultPassesDepthLimit() {
        await(store.put("w", "d", obj("{\"n\":1}"), null));
        StrandException e = failure(store.apply("w", "d", List.of(
                new Op.Incr(DocPath.parse("n"), 1, null, null),
                new Op.Set(DocPath.parse("a.b"), json(nested(DocStore.MAX_DEPTH - 1)))), null), ErrorCode.BAD_REQUEST);
        assertTrue(e.getMessage().contains(String.valueOf(DocStore.MAX_DEPTH)), e.getMessage());
        assertEquals(obj("{\"n\":1}"), store.get("w", "d").orElseThrow().value());
    }

    @Test
    void putShouldRefuseWhenDocPassesDepthLimit() {
        failure(store.put("w", "d", obj(nested(DocStore.MAX_DEPTH + 1)), null), ErrorCode.BAD_REQUEST);
        assertTrue(store.get("w", "d").isEmpty());
    }

    @Test
    void writesShouldAcceptADocExactlyAtTheDepthLimitAndReadItBackAfterRestart() {
        // value at the end of the longest path: 32 objects down, then nested to exactly MAX_DEPTH
        await(store.cas("w", "d", LONGEST_PATH, null, json(nested(DocStore.MAX_DEPTH - DocPath.MAX_DEPTH))));
        // incr creating parents on a doc at the limit keeps it at the limit
        assertEquals(5, await(store.incr("w", "d", "c.d.e", 5, null, null)).value());
        JsonNode before = store.get("w", "d").orElseThrow().value();
        assertEquals(DocStore.MAX_DEPTH, depth(before));
        // a reply wraps the doc (`{"error":{"value":doc}}` is the deepest); it must parse under the input limit
        Json.parse("{\"error\":{\"value\":" + Json.string(before) + "}}");

        store.close();
        store = new DocStore(TestStores.config(dir), writers);
        DocValue after = store.get("w", "d").orElseThrow();
        assertEquals(2, after.version());
        assertEquals(before, after.value());
        assertEquals(6, await(store.incr("w", "d", "c.d.e", 1, null, null)).value());
    }

    @Test
    void storedDocShouldReadBackWhenDeeperThanTheClientInputLimit() {
        // a doc an earlier version stored before the write limit existed (the 286 levels)
        byte[] json = nested(286).getBytes(StandardCharsets.UTF_8);
        StoredDoc stored = StoredDoc.decode(new StoredDoc(3, json).encode());
        assertEquals(286, depth(stored.parse()));
    }

    /** Counted here independently of {@link DocWriter#depth}. */
    private static int depth(JsonNode node) {
        int max = 0;
        for (JsonNode child : node) {
            max = Math.max(max, depth(child));
        }
        return node.isContainerNode() ? max + 1 : 0;
    }
}

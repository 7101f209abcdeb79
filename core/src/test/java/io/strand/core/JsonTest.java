package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void treeWriterShouldWriteEachTreeAsJacksonDoesWhenItWritesManyInARow() throws Exception {
        List<JsonNode> trees = List.of(
                Json.parse("{\"a\": [1, 2.50, {\"b\": null}], \"é\": \"\\u2028 ✓\"}"),
                Json.parse("\"" + "x".repeat(254) + "\""),
                Json.parse("12345678901234567890"),
                Json.parse("true"),
                Json.parse("{}"));
        try (Json.TreeWriter writer = Json.treeWriter()) {
            for (int round = 0; round < 2; round++) {
                for (JsonNode tree : trees) {
                    assertArrayEquals(Json.MAPPER.writeValueAsBytes(tree), writer.bytes(tree), tree.toString());
                    assertArrayEquals(Json.MAPPER.writeValueAsBytes(tree), Json.bytes(tree), tree.toString());
                }
            }
        }
        try (Json.TreeWriter writer = Json.treeWriter()) {
            writer.bytes(trees.get(1));
            assertEquals("{}", new String(writer.bytes(trees.get(4)), StandardCharsets.UTF_8),
                    "no root value separator before the second tree");
        }
    }
}

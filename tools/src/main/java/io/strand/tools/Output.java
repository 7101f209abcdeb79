package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;

/**
 * How the CLI prints: an entry as one line ({@code seq  time  [key=K]  data}) or, with
 * {@code --json}, as the entry's JSON on one line; a reply as {@code field: value} lines or its raw
 * JSON. Stateless.
 */
final class Output {
    private Output() {
    }

    static String entryLine(JsonNode entry, boolean json) {
        if (json) {
            return Json.string(entry);
        }
        StringBuilder sb = new StringBuilder();
        sb.append(entry.path("seq").asLong()).append("  ").append(Instant.ofEpochMilli(entry.path("ts").asLong()));
        if (entry.hasNonNull("key")) {
            sb.append("  key=").append(entry.get("key").asText());
        }
        return sb.append("  ").append(Json.string(entry.path("data"))).toString();
    }

    /** A reply: raw JSON, or one {@code field: value} line per top-level field. */
    static void reply(PrintWriter out, JsonNode reply, boolean json) {
        if (json) {
            out.println(Json.string(reply));
        } else {
            for (Iterator<Map.Entry<String, JsonNode>> it = reply.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                out.println(f.getKey() + ": " + (f.getValue().isTextual() ? f.getValue().asText() : Json.string(f.getValue())));
            }
        }
        out.flush();
    }

    /** A value given on the command line: JSON when it parses, else the text as a JSON string. */
    static JsonNode value(String text, boolean asString) {
        if (!asString) {
            try {
                JsonNode parsed = Json.parse(text);
                if (parsed != null && !parsed.isMissingNode()) {
                    return parsed;
                }
            } catch (RuntimeException notJson) {
                // a plain word or sentence
            }
        }
        return Json.MAPPER.getNodeFactory().textNode(text);
    }
}

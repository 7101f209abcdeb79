package io.strand.docstore;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A doc as read or as left by a write: its {@code version} (1 for a new doc, +1 per change) and its JSON
 * value. The value is never mutated after it is handed out.
 */
public record DocValue(long version, JsonNode value) {
}

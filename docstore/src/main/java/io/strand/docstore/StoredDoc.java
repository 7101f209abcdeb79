package io.strand.docstore;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Immutable; {@link #parse()} returns a fresh, private {@link ObjectNode} each time. A doc as the map view and
 * the snapshot store it (the value under key {@code ws/doc}):
 * <pre>
 * offset  size  field
 * 0       8     version, big-endian
 * 8       n     the doc's JSON, UTF-8 (n = value length − 8)
 * </pre>
 * The map view holds only durable changes, and is rebuilt whenever it cannot be trusted, so this value needs no
 * checksum of its own; the snapshot's CRC covers it there.
 */
record StoredDoc(long version, byte[] json) {

    static StoredDoc decode(byte[] stored) {
        if (stored.length < 9) {
            throw new StrandException(ErrorCode.CORRUPT, "doc map value of " + stored.length + " bytes is too short");
        }
        return new StoredDoc(ByteBuffer.wrap(stored).getLong(), Arrays.copyOfRange(stored, 8, stored.length));
    }

    byte[] encode() {
        return ByteBuffer.allocate(8 + json.length).putLong(version).put(json).array();
    }

    /** Parses the stored JSON without the client input limits: a doc the store accepted always reads back. */
    ObjectNode parse() {
        if (Json.parseStored(json) instanceof ObjectNode node) {
            return node;
        }
        throw new StrandException(ErrorCode.CORRUPT, "stored doc is not a JSON object");
    }

    /** Bytes this doc counts against the store's byte budget. */
    static long weight(String key, byte[] json) {
        return key.getBytes(StandardCharsets.UTF_8).length + 8L + json.length;
    }
}

package io.strand.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.charset.StandardCharsets;

/**
 * The one Jackson configuration every module shares. Its buffers come from one shared pool: the
 * default pool is per thread, and replies run on short-lived virtual threads, so it allocated a
 * fresh set of parse and write buffers for nearly every request (seen in a server profile).
 */
public final class Json {
    public static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                    .recyclerPool(JsonRecyclerPools.sharedConcurrentDequePool())
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(64 * 1024 * 1024).maxNestingDepth(256).build())
                    .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    /** Tree writes skip the per-call root-type lookup of {@code writeValueAsBytes(Object)}. */
    private static final ObjectWriter TREE_WRITER = MAPPER.writerFor(JsonNode.class);

    private Json() {
    }

    public static JsonNode parse(byte[] bytes) {
        try {
            return MAPPER.readTree(bytes);
        } catch (java.io.IOException e) {
            throw new StrandException(ErrorCode.BAD_REQUEST, "malformed JSON: " + firstLine(e.getMessage()));
        }
    }

    public static JsonNode parse(String text) {
        return parse(text.getBytes(StandardCharsets.UTF_8));
    }

    public static byte[] bytes(Object value) {
        try {
            return value instanceof JsonNode node ? TREE_WRITER.writeValueAsBytes(node) : MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }

    public static String string(Object value) {
        return new String(bytes(value), StandardCharsets.UTF_8);
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable input";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}

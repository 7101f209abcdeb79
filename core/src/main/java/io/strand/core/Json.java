package io.strand.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The one Jackson configuration every module shares. Its buffers are pooled per thread (Jackson's
 * default): JSON is parsed and written on long-lived threads (socket connections, writers), while
 * short-lived reply threads only send finished frames. A shared pool cost 6 % of the writer's time
 * in contention (server profile of contended incr).
 */
public final class Json {
    /** Deepest nesting {@link #parse} accepts from a client (request bodies, frames): {@code 400} beyond it. */
    public static final int MAX_INPUT_DEPTH = 256;
    /**
     * Deepest nesting {@link #parseStored} accepts: Jackson's default write limit
     * ({@code StreamWriteConstraints.DEFAULT_MAX_DEPTH}), so whatever this server ever wrote reads back.
     */
    public static final int MAX_STORED_DEPTH = 1000;
    private static final int MAX_STRING_LENGTH = 64 * 1024 * 1024;

    public static final ObjectMapper MAPPER = mapper(MAX_INPUT_DEPTH);

    /**
     * Tree reads of client input ({@link #parse}) skip {@code ObjectMapper.readTree}'s per-call root-type
     * lookup, and refuse an object that names a key twice: Jackson would keep the last one, so
     * {@code {"docs":{"w":{…floor debit…},"w":{…}}}} silently dropped a part of a txn.
     */
    private static final ObjectReader TREE_READER = MAPPER.readerFor(JsonNode.class)
            .with(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    /** Reads what the server stored itself; the input limit must never make stored data unreadable. */
    private static final ObjectReader STORED_READER = mapper(MAX_STORED_DEPTH).readerFor(JsonNode.class);
    /**
     * One serializer context per thread for tree writes: {@code ObjectWriter} builds a new one per
     * call, which with the root-type lookup on reads was about 10 % of a doc writer's time.
     */
    private static final ThreadLocal<SerializerProvider> TREE_CONTEXT =
            ThreadLocal.withInitial(MAPPER::getSerializerProviderInstance);

    private Json() {
    }

    private static ObjectMapper mapper(int maxDepth) {
        return JsonMapper.builder(JsonFactory.builder()
                        .streamReadConstraints(StreamReadConstraints.builder()
                                .maxStringLength(MAX_STRING_LENGTH).maxNestingDepth(maxDepth).build())
                        .build())
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .build();
    }

    /**
     * Parses JSON the server wrote itself (a stored doc, a journal record), up to {@link #MAX_STORED_DEPTH}
     * deep. Unreadable bytes are {@code corrupt}, not a bad request: the client did not send them.
     */
    public static JsonNode parseStored(byte[] bytes) {
        try {
            return STORED_READER.readTree(bytes);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.CORRUPT, "stored JSON is unreadable: " + firstLine(e.getMessage()));
        }
    }

    /** Parses a client's JSON: malformed input, trailing content or a key named twice in one object is {@code bad_request}. */
    public static JsonNode parse(byte[] bytes) {
        try {
            return TREE_READER.readTree(bytes);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.BAD_REQUEST, "malformed JSON: " + firstLine(e.getMessage()));
        }
    }

    public static JsonNode parse(String text) {
        return parse(text.getBytes(StandardCharsets.UTF_8));
    }

    public static byte[] bytes(Object value) {
        try {
            if (value instanceof JsonNode node) {
                try (TreeWriter one = new TreeWriter()) { // one tree: a writer used once
                    return one.bytes(node);
                }
            }
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }

    /**
     * Writes many trees with one generator and one buffer: a batch's entries are serialized one by one
     * (their bytes are stored apart), and a new generator per entry, with its buffer, was 17 % of the
     * cluster leader's sampled allocation (JFR) and 3.6 % of its {@code perf} samples, against 10.4 %
     * for its whole socket thread, under {@code strand bench --cluster 3 append-batched} (2026-12-05).
     * Owned by the thread that made it; not thread-safe.
     */
    public static final class TreeWriter implements AutoCloseable {
        private final ByteArrayBuilder out = new ByteArrayBuilder();
        private final JsonGenerator g;
        private final SerializerProvider context = TREE_CONTEXT.get();

        private TreeWriter() {
            try {
                g = MAPPER.createGenerator(out);
            } catch (IOException e) {
                throw new IllegalStateException("cannot create a JSON generator", e);
            }
            g.setRootValueSeparator(null); // each tree is its own document: no space between them
        }

        /** {@code node}'s JSON bytes, as Jackson writes it alone (what {@link Json#bytes(Object)} gives). */
        public byte[] bytes(JsonNode node) {
            try {
                node.serialize(g, context);
                g.flush();
                byte[] b = out.toByteArray();
                out.reset();
                return b;
            } catch (IOException e) {
                throw new IllegalStateException("cannot serialize " + node.getNodeType(), e);
            }
        }

        @Override
        public void close() {
            try {
                g.close();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            out.release();
        }
    }

    /** A writer for a run of trees on this thread ({@link TreeWriter}). */
    public static TreeWriter treeWriter() {
        return new TreeWriter();
    }

    public static String string(Object value) {
        return new String(bytes(value), StandardCharsets.UTF_8);
    }

    static String firstLine(String message) {
        if (message == null) {
            return "unreadable input";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}

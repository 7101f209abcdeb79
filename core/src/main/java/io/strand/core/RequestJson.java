package io.strand.core;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializable;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.POJONode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Parses a client's request (a socket frame, a request body) into a tree in which every append
 * payload, the value of {@code data} at the root and in each object of the root's {@code entries}
 * array, stays the bytes the client sent ({@link Raw}, a {@link POJONode}), and so does a root
 * {@code id} that is a number with a fraction or exponent (a socket reply echoes it as sent). Stateless.
 *
 * <p>Why: an append stores each payload as JSON bytes. Parsing it into a tree and writing the tree
 * back out took 56 % of the single node's sampled CPU under {@code strand bench append-batched}
 * (JFR, 2026-12-06: 19 % the tree parse, 37 % the write back), and 20 % of a cluster leader's. Here
 * the payload is still tokenized (Jackson checks its syntax, nesting depth and UTF-8 as it skips it)
 * but never built into nodes nor written again. A payload is stored as sent: whitespace, number
 * spelling and string escapes included, all of it the same JSON value.
 *
 * <p>Everything else is the tree {@link Json#parse} gives, with the same limits and errors: malformed
 * input, a key named twice in one object (in a payload too), or anything after the root value, is
 * {@code bad_request}.
 */
public final class RequestJson {
    /** Reads one value at the parser's position, leaving the rest of the input for the caller. */
    private static final ObjectReader VALUE_READER = Json.MAPPER.readerFor(JsonNode.class)
            .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final JsonNodeFactory NODES = Json.MAPPER.getNodeFactory();

    private RequestJson() {
    }

    /**
     * A payload kept as the client's bytes: one complete JSON value in UTF-8. Written out as it is when
     * its tree is serialized.
     */
    public record Raw(byte[] bytes) implements JsonSerializable {
        @Override
        public void serialize(JsonGenerator gen, SerializerProvider serializers) throws IOException {
            gen.writeRawValue(new String(bytes, StandardCharsets.UTF_8));
        }

        @Override
        public void serializeWithType(JsonGenerator gen, SerializerProvider serializers, TypeSerializer typeSer) throws IOException {
            serialize(gen, serializers);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Raw r && Arrays.equals(bytes, r.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    /** The payload {@code node} holds when {@link #parse} kept it as bytes; null for any other node. */
    public static byte[] rawBytes(JsonNode node) {
        return node instanceof POJONode p && p.getPojo() instanceof Raw r ? r.bytes() : null;
    }

    /** {@code utf8} (valid UTF-8 or not) as a request tree, its append payloads kept as {@link Raw} bytes. */
    public static JsonNode parse(byte[] utf8) {
        try (JsonParser p = Json.MAPPER.createParser(utf8)) {
            p.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION); // as Json.parse: a key twice is refused, payloads included
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return Json.parse(utf8); // not a request object: the plain tree, or its error
            }
            ObjectNode root = object(p, utf8, true);
            if (p.nextToken() != null) {
                throw StrandException.badRequest("malformed JSON: trailing content after the request object");
            }
            return root;
        } catch (IOException e) {
            throw StrandException.badRequest("malformed JSON: " + Json.firstLine(e.getMessage()));
        }
    }

    /**
     * The object whose opening brace the parser is on, its {@code data} kept raw, and (at the
     * {@code root}) the same for each object of its {@code entries} array; ends on its closing brace.
     */
    private static ObjectNode object(JsonParser p, byte[] utf8, boolean root) throws IOException {
        ObjectNode node = NODES.objectNode();
        JsonToken t = p.nextToken();
        while (t == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            if (name.equals("data")) {
                int start = (int) p.currentTokenLocation().getByteOffset();
                if (value == JsonToken.VALUE_STRING) {
                    // Jackson skips the string (checking its escapes and UTF-8) on its way to the next
                    // token; the string ends where the space and comma before that token start.
                    t = p.nextToken();
                    node.set(name, raw(utf8, start, endBefore(p, t, utf8)));
                    continue;
                }
                node.set(name, raw(utf8, start, end(p, value, start)));
            } else if (root && name.equals("id") && value == JsonToken.VALUE_NUMBER_FLOAT) {
                // a request id with a fraction or exponent is echoed as sent: 1e2 stays 1e2, not 100 or 1E+2
                int start = (int) p.currentTokenLocation().getByteOffset();
                node.set(name, raw(utf8, start, start + p.getTextLength()));
            } else if (root && name.equals("entries") && value == JsonToken.START_ARRAY) {
                node.set(name, entries(p, utf8));
            } else {
                node.set(name, value(p));
            }
            t = p.nextToken();
        }
        return node; // on END_OBJECT: the parser refuses anything else after a field's value
    }

    /** The array whose opening bracket the parser is on, each object's {@code data} kept raw; ends on its closing bracket. */
    private static ArrayNode entries(JsonParser p, byte[] utf8) throws IOException {
        ArrayNode entries = NODES.arrayNode();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            entries.add(t == JsonToken.START_OBJECT ? object(p, utf8, false) : value(p));
        }
        return entries;
    }

    /** Just past the non-string value whose first token ({@code value}) the parser is on; it ends on the value's last token. */
    private static int end(JsonParser p, JsonToken value, int start) throws IOException {
        return switch (value) {
            case START_OBJECT, START_ARRAY -> {
                p.skipChildren(); // tokenizes (and so checks) the whole value
                yield (int) p.currentLocation().getByteOffset();
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> start + p.getTextLength();
            case VALUE_TRUE, VALUE_NULL -> start + 4;
            case VALUE_FALSE -> start + 5;
            default -> throw StrandException.badRequest("malformed JSON: unexpected " + value);
        };
    }

    /**
     * Where the value before token {@code next} ends: before the space and the comma that separate them
     * (the next field's name), or before the space ahead of the object's closing brace.
     */
    private static int endBefore(JsonParser p, JsonToken next, byte[] utf8) {
        int i = next == JsonToken.END_OBJECT
                ? (int) p.currentLocation().getByteOffset() - 1
                : (int) p.currentTokenLocation().getByteOffset();
        i = skipSpaceBack(utf8, i);
        if (next != JsonToken.END_OBJECT && utf8[i - 1] == ',') {
            i = skipSpaceBack(utf8, i - 1);
        }
        return i;
    }

    private static int skipSpaceBack(byte[] utf8, int i) {
        while (utf8[i - 1] == ' ' || utf8[i - 1] == '\n' || utf8[i - 1] == '\r' || utf8[i - 1] == '\t') {
            i--;
        }
        return i;
    }

    private static POJONode raw(byte[] utf8, int start, int end) {
        return new POJONode(new Raw(Arrays.copyOfRange(utf8, start, end)));
    }

    /** The value whose first token the parser is on, as a tree; the parser ends on its last token. */
    private static JsonNode value(JsonParser p) throws IOException {
        return VALUE_READER.readTree(p);
    }
}

package io.strand.docstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Parses doc requests from JSON, shared by HTTP and WebSocket so both give the same {@code 400} messages.
 * Stateless.
 *
 * <p>Request bodies ({@link #parsePut}, {@link #parseCas}, {@link #parseIncr}, {@link #parseApply}) may also
 * carry the WebSocket envelope fields {@code id}, {@code op} and {@code doc}, which are ignored here; any
 * other unknown field is refused, so a typo such as {@code "flor"} never silently drops a floor. Ops inside
 * {@code apply} take only their own fields.
 */
public final class DocOps {
    /** Most ops in one {@code apply}. */
    public static final int MAX_OPS = 1000;

    private static final Set<String> ENVELOPE = Set.of("id", "op", "doc");
    private static final Set<String> INCR_FIELDS = Set.of("path", "delta", "floor", "ceiling");
    private static final Set<String> CAS_FIELDS = Set.of("path", "expect", "value");
    private static final Set<String> SET_FIELDS = Set.of("path", "value");
    private static final Set<String> REMOVE_FIELDS = Set.of("path");
    private static final Set<String> PUT_FIELDS = Set.of("value", "expectVersion");
    private static final Set<String> APPLY_FIELDS = Set.of("ops", "expectVersion");

    /** A parsed {@code PUT} body. */
    public record Put(ObjectNode value, Long expectVersion) {
    }

    /** A parsed {@code apply} body. */
    public record Apply(List<Op> ops, Long expectVersion) {
    }

    private DocOps() {
    }

    /** Parses the {@code ops} array of an apply (or of a txn doc): each element {@code {"op":"incr"|"cas"|"set"|"remove",…}}. */
    public static List<Op> parse(JsonNode ops) {
        if (ops == null || ops.isMissingNode() || ops.isNull()) {
            throw StrandException.badRequest("ops is required: an array of {\"op\":\"incr\"|\"cas\"|\"set\"|\"remove\",…}");
        }
        if (!ops.isArray()) {
            throw StrandException.badRequest("ops must be an array, got " + kind(ops));
        }
        if (ops.isEmpty()) {
            throw StrandException.badRequest("ops must not be empty");
        }
        if (ops.size() > MAX_OPS) {
            throw StrandException.badRequest("ops has " + ops.size() + " elements; at most " + MAX_OPS);
        }
        List<Op> parsed = new ArrayList<>(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            parsed.add(parseOp(ops.get(i), i));
        }
        return List.copyOf(parsed);
    }

    /** Parses one element of an ops array; {@code index} names it in messages and in the {@code index} extra. */
    public static Op parseOp(JsonNode op, int index) {
        String where = "ops[" + index + "]";
        try {
            if (op == null || !op.isObject()) {
                throw StrandException.badRequest(where + " must be an object, got " + kind(op));
            }
            JsonNode name = op.get("op");
            if (name == null || !name.isTextual()) {
                throw StrandException.badRequest(where + ".op is required: one of incr, cas, set, remove");
            }
            String prefix = where + ".";
            return switch (name.textValue()) {
                case "incr" -> {
                    checkFields(op, INCR_FIELDS, Set.of("op"), where);
                    yield incr(op, prefix);
                }
                case "cas" -> {
                    checkFields(op, CAS_FIELDS, Set.of("op"), where);
                    yield cas(op, prefix);
                }
                case "set" -> {
                    checkFields(op, SET_FIELDS, Set.of("op"), where);
                    yield new Op.Set(path(op, prefix), required(op, "value", prefix));
                }
                case "remove" -> {
                    checkFields(op, REMOVE_FIELDS, Set.of("op"), where);
                    yield new Op.Remove(path(op, prefix));
                }
                default -> throw new StrandException(ErrorCode.UNKNOWN_OP, where + ".op '" + shown(name.textValue())
                        + "' is not one of incr, cas, set, remove");
            };
        } catch (StrandException e) {
            throw e.with("index", index);
        }
    }

    /** Parses an {@code incr} body {@code {"path","delta","floor"?,"ceiling"?}}. */
    public static Op.Incr parseIncr(JsonNode body) {
        checkFields(object(body), INCR_FIELDS, ENVELOPE, "request");
        return incr(body, "");
    }

    /** Parses a {@code cas} body {@code {"path","expect"?,"value"}}; a missing {@code expect} means null (absent). */
    public static Op.Cas parseCas(JsonNode body) {
        checkFields(object(body), CAS_FIELDS, ENVELOPE, "request");
        return cas(body, "");
    }

    /** Parses a {@code PUT} body {@code {"value":{…},"expectVersion"?}}. */
    public static Put parsePut(JsonNode body) {
        checkFields(object(body), PUT_FIELDS, ENVELOPE, "request");
        JsonNode value = body.get("value");
        if (value == null || value.isNull()) {
            throw StrandException.badRequest("value is required: the doc, a JSON object");
        }
        if (!value.isObject()) {
            throw StrandException.badRequest("value must be a JSON object (a doc is an object), got " + kind(value));
        }
        return new Put((ObjectNode) value, expectVersion(body));
    }

    /** Parses an {@code apply} body {@code {"ops":[…],"expectVersion"?}}. */
    public static Apply parseApply(JsonNode body) {
        checkFields(object(body), APPLY_FIELDS, ENVELOPE, "request");
        return new Apply(parse(body.get("ops")), expectVersion(body));
    }

    /** The optional {@code expectVersion} of a body: null when absent, else a non-negative integer (0 = must not exist). */
    public static Long expectVersion(JsonNode body) {
        JsonNode v = body == null ? null : body.get("expectVersion");
        if (v == null || v.isNull()) {
            return null;
        }
        long version = integer(v, "expectVersion");
        if (version < 0) {
            throw StrandException.badRequest("expectVersion must be ≥ 0 (0 = the doc must not exist), got " + version);
        }
        return version;
    }

    /**
     * Parses {@code expectVersion} given as text (a query parameter); null means absent. Empty is refused:
     * an unset shell variable must not turn a conditional delete into a plain one.
     */
    public static Long expectVersion(String text) {
        if (text == null) {
            return null;
        }
        if (text.isEmpty()) {
            throw StrandException.badRequest("expectVersion is empty; give the version, or leave the parameter out");
        }
        try {
            long version = Long.parseLong(text);
            if (version >= 0) {
                return version;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw StrandException.badRequest("expectVersion must be an integer ≥ 0, got '" + shown(text) + "'");
    }

    private static Op.Incr incr(JsonNode op, String prefix) {
        DocPath path = path(op, prefix);
        JsonNode delta = op.get("delta");
        if (delta == null || delta.isNull()) {
            throw StrandException.badRequest(prefix + "delta is required: a 64-bit integer");
        }
        return new Op.Incr(path, integer(delta, prefix + "delta"), optionalInteger(op, "floor", prefix),
                optionalInteger(op, "ceiling", prefix));
    }

    private static Op.Cas cas(JsonNode op, String prefix) {
        return new Op.Cas(path(op, prefix), op.get("expect"), required(op, "value", prefix));
    }

    private static DocPath path(JsonNode op, String prefix) {
        JsonNode p = op.get("path");
        if (p == null || p.isNull()) {
            throw StrandException.badRequest(prefix + "path is required: dot-separated keys, e.g. \"a.b\"");
        }
        if (!p.isTextual()) {
            throw StrandException.badRequest(prefix + "path must be a string, got " + kind(p));
        }
        return DocPath.parse(p.textValue());
    }

    private static JsonNode required(JsonNode op, String field, String prefix) {
        JsonNode v = op.get(field);
        if (v == null) {
            throw StrandException.badRequest(prefix + field + " is required (any JSON value, null included)");
        }
        return v;
    }

    private static Long optionalInteger(JsonNode op, String field, String prefix) {
        JsonNode v = op.get(field);
        return v == null || v.isNull() ? null : integer(v, prefix + field);
    }

    private static long integer(JsonNode v, String name) {
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            return v.longValue();
        }
        throw StrandException.badRequest(name + " must be a 64-bit integer, got " + kind(v) + " " + shown(Json.string(v)));
    }

    private static JsonNode object(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw StrandException.badRequest("request body must be a JSON object, got " + kind(body));
        }
        return body;
    }

    private static void checkFields(JsonNode node, Set<String> allowed, Set<String> ignored, String where) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f) && !ignored.contains(f)) {
                throw StrandException.badRequest(where + ": unknown field '" + shown(f) + "' (allowed: "
                        + String.join(", ", allowed.stream().sorted().toList()) + ")");
            }
        }
    }

    private static String kind(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "nothing";
        }
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            case NUMBER -> node.isIntegralNumber() ? "an integer" : "a number";
            case STRING -> "a string";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> node.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private static String shown(String text) {
        return text.length() > 60 ? text.substring(0, 60) + "…" : text;
    }
}

package io.strand.docstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.Map;
import java.util.Objects;

/**
 * One change to a doc, as used by {@code incr}, {@code cas} and {@code apply}. Immutable; parse them from
 * JSON with {@link DocOps}. {@link #applyTo} runs inside the doc's writer turn on a private copy of the doc.
 */
public sealed interface Op permits Op.Incr, Op.Cas, Op.Set, Op.Remove {

    DocPath path();

    /**
     * Applies this op to {@code doc} (the turn's private copy) or throws without changing it.
     *
     * @param version the doc's version before the turn (0 when missing), reported in conflicts
     * @return the op's own result (the new number for incr), or null
     */
    JsonNode applyTo(ObjectNode doc, long version);

    /**
     * 64-bit integer add. A missing path (or doc, or JSON null) counts as 0. Bounds are checked in the
     * direction of the change and are never clamped: a debit ({@code delta < 0}) whose result would be
     * below {@code floor} is refused with {@code floor_violation}, a credit ({@code delta > 0}) whose
     * result would be above {@code ceiling} with {@code ceiling_violation}; both carry {@code value}, the
     * current number. A change toward the allowed range is never refused.
     */
    record Incr(DocPath path, long delta, Long floor, Long ceiling) implements Op {
        public Incr {
            Objects.requireNonNull(path, "path");
            if (floor != null && ceiling != null && floor > ceiling) {
                throw StrandException.badRequest("floor " + floor + " is above ceiling " + ceiling);
            }
        }

        @Override
        public JsonNode applyTo(ObjectNode doc, long version) {
            JsonNode at = path.get(doc);
            long current;
            if (at == null || at.isNull()) {
                current = 0;
            } else if (at.isIntegralNumber() && at.canConvertToLong()) {
                current = at.longValue();
            } else if (at.isNumber() && integral(at) != null) {
                current = integral(at); // 1E+2 or 100.0: a whole number spelt with an exponent or a zero fraction
            } else {
                throw new StrandException(ErrorCode.NOT_A_NUMBER, "value at '" + path + "' is "
                        + describe(at) + ", not a 64-bit integer");
            }
            long next;
            try {
                next = Math.addExact(current, delta);
            } catch (ArithmeticException e) {
                throw new StrandException(ErrorCode.OVERFLOW, "adding " + delta + " to " + current + " at '" + path
                        + "' overflows a 64-bit integer", Map.of("value", current));
            }
            if (delta < 0 && floor != null && next < floor) {
                throw new StrandException(ErrorCode.FLOOR_VIOLATION, "adding " + delta + " to " + current + " at '"
                        + path + "' would go below the floor " + floor, Map.of("value", current));
            }
            if (delta > 0 && ceiling != null && next > ceiling) {
                throw new StrandException(ErrorCode.CEILING_VIOLATION, "adding " + delta + " to " + current
                        + " at '" + path + "' would go above the ceiling " + ceiling, Map.of("value", current));
            }
            // the node type a re-parse of the stored JSON gives, so values compare equal either way
            JsonNode result = next == (int) next ? IntNode.valueOf((int) next) : LongNode.valueOf(next);
            path.set(doc, result);
            return result;
        }
    }

    /**
     * Sets {@code path} to {@code value} if the value there equals {@code expect} (JSON equality, missing =
     * null); otherwise {@code cas_conflict} with {@code version} and {@code current}.
     */
    record Cas(DocPath path, JsonNode expect, JsonNode value) implements Op {
        public Cas {
            Objects.requireNonNull(path, "path");
            expect = expect == null ? NullNode.getInstance() : expect.deepCopy();
            value = Objects.requireNonNull(value, "value").deepCopy();
        }

        @Override
        public JsonNode applyTo(ObjectNode doc, long version) {
            JsonNode at = path.get(doc);
            if (!JsonEquality.equal(at, expect)) {
                JsonNode current = at == null ? NullNode.getInstance() : at.deepCopy();
                throw new StrandException(ErrorCode.CAS_CONFLICT, "value at '" + path + "' is not the expected one",
                        Map.of("version", version, "current", current));
            }
            path.set(doc, value.deepCopy());
            return null;
        }
    }

    /** Sets {@code path} to {@code value}, creating missing parent objects. */
    record Set(DocPath path, JsonNode value) implements Op {
        public Set {
            Objects.requireNonNull(path, "path");
            value = Objects.requireNonNull(value, "value").deepCopy();
        }

        @Override
        public JsonNode applyTo(ObjectNode doc, long version) {
            path.set(doc, value.deepCopy());
            return null;
        }
    }

    /** Removes {@code path}; removing a missing path is not an error. */
    record Remove(DocPath path) implements Op {
        public Remove {
            Objects.requireNonNull(path, "path");
        }

        @Override
        public JsonNode applyTo(ObjectNode doc, long version) {
            path.remove(doc);
            return null;
        }
    }

    /** The value of a decimal number node that is a whole number within 64 bits, else null. */
    private static Long integral(JsonNode number) {
        try {
            return number.decimalValue().longValueExact();
        } catch (ArithmeticException e) {
            return null;
        }
    }

    private static String describe(JsonNode node) {
        if (node.isNumber()) {
            return node.isIntegralNumber() ? "an integer outside 64 bits" : "a non-integer number";
        }
        return switch (node.getNodeType()) {
            case STRING -> "a string";
            case BOOLEAN -> "a boolean";
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            default -> "not a number";
        };
    }
}

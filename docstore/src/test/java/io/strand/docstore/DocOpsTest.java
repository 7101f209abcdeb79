package io.strand.docstore;

import static io.strand.docstore.TestStores.json;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.List;
import org.junit.jupiter.api.Test;

class DocOpsTest {

    private static StrandException refused(ErrorCode code, Runnable parse) {
        StrandException e = assertThrows(StrandException.class, parse::run);
        assertEquals(code, e.code(), e.getMessage());
        return e;
    }

    @Test
    void parseShouldReadEveryOpKind() {
        List<Op> ops = DocOps.parse(json("""
                [{"op":"incr","path":"a.b","delta":-5,"floor":0,"ceiling":100},
                 {"op":"cas","path":"s","expect":null,"value":{"x":1}},
                 {"op":"cas","path":"t","value":2},
                 {"op":"set","path":"u","value":null},
                 {"op":"remove","path":"v"}]"""));
        assertEquals(new Op.Incr(DocPath.parse("a.b"), -5, 0L, 100L), ops.get(0));
        Op.Cas cas = assertInstanceOf(Op.Cas.class, ops.get(1));
        assertEquals(NullNode.getInstance(), cas.expect());
        assertEquals(json("{\"x\":1}"), cas.value());
        assertEquals(NullNode.getInstance(), ((Op.Cas) ops.get(2)).expect());
        assertEquals(NullNode.getInstance(), ((Op.Set) ops.get(3)).value());
        assertEquals(new Op.Remove(DocPath.parse("v")), ops.get(4));
    }

    @Test
    void parseShouldRefuseWrongShapesWithBadRequestNamingTheOp() {
        assertTrue(refused(ErrorCode.BAD_REQUEST, () -> DocOps.parse(null)).getMessage().contains("ops is required"));
        assertTrue(refused(ErrorCode.BAD_REQUEST, () -> DocOps.parse(json("{}"))).getMessage().contains("array"));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parse(json("[]")));
        StrandException e = refused(ErrorCode.BAD_REQUEST, () -> DocOps.parse(json("[{\"op\":\"set\",\"path\":\"a\",\"value\":1},5]")));
        assertEquals(1, e.extras().get("index"));
        assertTrue(e.getMessage().startsWith("ops[1] must be an object"), e.getMessage());
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parse(json("[{\"path\":\"a\"}]")));
    }

    @Test
    void parseShouldRefuseUnknownOpWithUnknownOp() {
        StrandException e = refused(ErrorCode.UNKNOWN_OP, () -> DocOps.parse(json("[{\"op\":\"mul\",\"path\":\"a\"}]")));
        assertEquals(0, e.extras().get("index"));
    }

    @Test
    void parseIncrShouldRefuseNonIntegerDeltaAndBounds() {
        for (String delta : List.of("\"5\"", "1.5", "true", "null", "12345678901234567890123")) {
            StrandException e = refused(ErrorCode.BAD_REQUEST,
                    () -> DocOps.parseIncr(json("{\"path\":\"n\",\"delta\":" + delta + "}")));
            assertTrue(e.getMessage().contains("delta"), e.getMessage());
        }
        assertTrue(refused(ErrorCode.BAD_REQUEST, () -> DocOps.parseIncr(json("{\"path\":\"n\",\"delta\":1,\"floor\":\"0\"}")))
                .getMessage().contains("floor must be a 64-bit integer"));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parseIncr(json("{\"delta\":1}")));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parseIncr(json("{\"path\":7,\"delta\":1}")));
        refused(ErrorCode.BAD_PATH, () -> DocOps.parseIncr(json("{\"path\":\"a.\",\"delta\":1}")));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parseIncr(json("{\"path\":\"n\",\"delta\":1,\"floor\":5,\"ceiling\":1}")));
    }

    @Test
    void parseIncrShouldRefuseUnknownFieldsButIgnoreTheSocketEnvelope() {
        StrandException e = refused(ErrorCode.BAD_REQUEST,
                () -> DocOps.parseIncr(json("{\"path\":\"n\",\"delta\":-1,\"flor\":0}")));
        assertTrue(e.getMessage().contains("unknown field 'flor'"), e.getMessage());
        Op.Incr op = DocOps.parseIncr(json("{\"id\":7,\"op\":\"doc.incr\",\"doc\":\"w\",\"path\":\"n\",\"delta\":-1}"));
        assertEquals(-1, op.delta());
        assertNull(op.floor());
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parse(json("[{\"op\":\"incr\",\"path\":\"n\",\"delta\":1,\"id\":1}]")));
    }

    @Test
    void parseCasShouldRequireValueButNotExpect() {
        Op.Cas op = DocOps.parseCas(json("{\"path\":\"a\",\"value\":1}"));
        assertEquals(NullNode.getInstance(), op.expect());
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parseCas(json("{\"path\":\"a\",\"expect\":1}")));
    }

    @Test
    void parsePutShouldRequireAnObjectValueAndValidExpectVersion() {
        DocOps.Put put = DocOps.parsePut(json("{\"value\":{\"a\":1},\"expectVersion\":0}"));
        assertEquals(0L, put.expectVersion());
        assertInstanceOf(ObjectNode.class, put.value());
        assertNull(DocOps.parsePut(json("{\"value\":{}}")).expectVersion());
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parsePut(json("{\"value\":[1]}")));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parsePut(json("{}")));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parsePut(json("{\"value\":{},\"expectVersion\":-1}")));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parsePut(json("{\"value\":{},\"expectVersion\":\"3\"}")));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parsePut(json("[]")));
    }

    @Test
    void parseApplyShouldReadOpsAndExpectVersion() {
        DocOps.Apply apply = DocOps.parseApply(json("{\"ops\":[{\"op\":\"remove\",\"path\":\"a\"}],\"expectVersion\":4}"));
        assertEquals(4L, apply.expectVersion());
        assertEquals(1, apply.ops().size());
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.parseApply(json("{\"op\":[]}")));
    }

    @Test
    void expectVersionFromTextShouldAcceptOnlyNonNegativeIntegers() {
        assertNull(DocOps.expectVersion((String) null));
        assertEquals(3L, DocOps.expectVersion("3"));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.expectVersion("-1"));
        refused(ErrorCode.BAD_REQUEST, () -> DocOps.expectVersion("x"));
    }

    @Test
    void docPathShouldRefuseMalformedPaths() {
        for (String p : List.of("", ".a", "a.", "a..b", "x".repeat(DocPath.MAX_LENGTH + 1),
                "a.".repeat(DocPath.MAX_DEPTH) + "a")) {
            refused(ErrorCode.BAD_PATH, () -> DocPath.parse(p));
        }
        assertEquals("a.b c.$", DocPath.parse("a.b c.$").toString());
    }

    @Test
    void docPathShouldReadMissingAsNullAndRefuseNonObjectParents() {
        ObjectNode doc = (ObjectNode) json("{\"a\":{\"b\":1},\"s\":\"x\"}");
        assertEquals(json("1"), DocPath.parse("a.b").get(doc));
        assertNull(DocPath.parse("z.y").get(doc));
        refused(ErrorCode.BAD_PATH, () -> DocPath.parse("s.y").get(doc));
        DocPath.parse("z.y").remove(doc);
        DocPath.parse("n.m.o").set(doc, json("2"));
        assertEquals(json("{\"a\":{\"b\":1},\"s\":\"x\",\"n\":{\"m\":{\"o\":2}}}"), doc);
    }

    @Test
    void jsonEqualityShouldCompareNumbersByValue() {
        assertTrue(JsonEquality.equal(json("1"), json("1.0")));
        assertTrue(JsonEquality.equal(null, json("null")));
        assertTrue(JsonEquality.equal(json("{\"a\":[1,{\"b\":2}]}"), json("{\"a\":[1.00,{\"b\":2}]}")));
        assertEquals(false, JsonEquality.equal(json("[1,2]"), json("[2,1]")));
        assertEquals(false, JsonEquality.equal(json("\"1\""), json("1")));
        assertEquals(false, JsonEquality.equal(json("{\"a\":1}"), json("{\"a\":1,\"b\":null}")));
    }
}

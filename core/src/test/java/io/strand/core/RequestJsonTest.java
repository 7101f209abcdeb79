package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestJsonTest {
    private static JsonNode parse(String json) {
        return RequestJson.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    private static String raw(JsonNode node) {
        byte[] bytes = RequestJson.rawBytes(node);
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void everyKindOfPayloadShouldBeKeptAsTheBytesSent() {
        List<String> payloads = List.of("{\"a\": [1, 2.50, {\"b\": null}] }", "[ ]", "\"x\\\"y\\\\\"", "\"é \\u2028 ✓\"",
                "-12.5e+3", "12345678901234567890123", "0", "true", "false", "null", "{}", "\"\"");
        for (String payload : payloads) {
            JsonNode root = parse("{\"op\":\"append\", \"data\" : " + payload + " , \"id\":7}");
            assertEquals(payload, raw(root.get("data")), payload);
            assertEquals(7, root.get("id").asInt());
            JsonNode batch = parse("{\"entries\":[{\"key\":\"k\",\"data\":" + payload + "},{\"data\":" + payload + "}],\"op\":\"append\"}");
            assertEquals(payload, raw(batch.get("entries").get(0).get("data")), payload);
            assertEquals(payload, raw(batch.get("entries").get(1).get("data")), payload);
            assertEquals("k", batch.get("entries").get(0).get("key").asText());
            JsonNode spaced = parse("{ \"data\"\n:\t" + payload + " \r\n }");
            assertEquals(payload, raw(spaced.get("data")), payload);
            // written out, the tree is the JSON that came in
            assertEquals(Json.parse(payload), Json.parse(Json.bytes(root)).get("data"), payload);
        }
    }

    @Test
    void theRestShouldBeTheTreeJsonParseGives() {
        String json = "{\"op\":\"append\",\"expectedLastSeq\":3,\"producerId\":\"p\",\"x\":{\"data\":{\"deep\":1.10}},"
                + "\"entries\":[5,{\"data\":1,\"more\":[1.5]}]}";
        JsonNode root = parse(json);
        JsonNode plain = Json.parse(json);
        assertEquals(plain.get("expectedLastSeq"), root.get("expectedLastSeq"));
        assertEquals(plain.get("x"), root.get("x"), "a data field deeper down stays a tree");
        assertNull(RequestJson.rawBytes(root.get("x").get("data")));
        assertEquals(plain.get("entries").get(0), root.get("entries").get(0), "an entry that is no object stays itself");
        assertEquals(plain.get("entries").get(1).get("more"), root.get("entries").get(1).get("more"));
        assertEquals(Json.parse("[1,2]"), parse("[1,2]"), "a root that is no object is the plain tree");
        assertEquals(Json.parse(""), parse(""), "no input: what Json.parse gives (the caller refuses a non-object)");
        assertEquals(Json.parse("{\"entries\":7}"), parse("{\"entries\":7}"));
    }

    @Test
    void malformedInputAnywhereShouldBeABadRequest() {
        List<String> bad = List.of("{\"data\":{\"a\":}}", "{\"data\":\"open", "{\"data\":\"bad \\q escape\"}",
                "{\"data\":\"tab\tinside\"}", "{\"data\":[1,2}", "{\"data\":1} trailing", "{\"data\":1}{}",
                "{\"entries\":[{\"data\":{\"a\":1]}]}", "{\"entries\":[{\"data\":1}", "{\"data\":tru}", "{\"data\":01}",
                "{\"data\":" + "[".repeat(Json.MAX_INPUT_DEPTH + 1) + "]".repeat(Json.MAX_INPUT_DEPTH + 1) + "}", "{",
                // a key twice in one object: the envelope, a payload, a nested tree (Jackson would keep the last)
                "{\"a\":1,\"a\":2}", "{\"data\":1,\"data\":2}", "{\"data\":{\"k\":1,\"k\":2}}",
                "{\"entries\":[{\"data\":1,\"key\":\"a\",\"key\":\"b\"}]}", "{\"x\":{\"w\":{},\"w\":{}}}");
        for (String json : bad) {
            StrandException e = assertThrows(StrandException.class, () -> parse(json), json);
            assertEquals(ErrorCode.BAD_REQUEST, e.code(), json);
            assertTrue(e.getMessage().startsWith("malformed JSON"), e.getMessage());
            StrandException plain = assertThrows(StrandException.class, () -> Json.parse(json), json);
            assertEquals(ErrorCode.BAD_REQUEST, plain.code(), json);
        }
    }

    @Test
    void invalidUtf8InAPayloadShouldBeABadRequest() {
        byte[] head = "{\"data\":\"a".getBytes(StandardCharsets.UTF_8);
        byte[] tail = "\"}".getBytes(StandardCharsets.UTF_8);
        for (byte[] middle : List.of(new byte[] {(byte) 0xC3, 0x28}, new byte[] {(byte) 0xFF}, new byte[] {(byte) 0xE2, (byte) 0x82})) {
            byte[] json = new byte[head.length + middle.length + tail.length];
            System.arraycopy(head, 0, json, 0, head.length);
            System.arraycopy(middle, 0, json, head.length, middle.length);
            System.arraycopy(tail, 0, json, head.length + middle.length, tail.length);
            StrandException e = assertThrows(StrandException.class, () -> RequestJson.parse(json));
            assertEquals(ErrorCode.BAD_REQUEST, e.code());
        }
    }
}

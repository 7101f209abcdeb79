package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.FrameSocket;
import io.strand.app.testing.FrameSocket.Frame;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.core.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The WebSocket protocol at the frame level (RFC 6455): every refusal reaches the client as a close
 * frame with its code, control frames are answered, text is valid UTF-8 — over a raw TCP socket so
 * the test controls every byte.
 */
class SocketProtocolIT {
    private static final int MAX_CONNECTIONS = 4;
    @TempDir
    static Path dir;
    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(dir, Map.of("STRAND_MAX_CONNECTIONS_PER_WORKSPACE", String.valueOf(MAX_CONNECTIONS)));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void anOversizeFrameAlwaysClosesWith1009EvenWhileTheClientKeepsSending() throws IOException {
        for (int round = 0; round < 50; round++) {
            try (FrameSocket s = FrameSocket.connect(server.wsUrl("big"))) {
                try {
                    s.sendPartialFrame(FrameSocket.TEXT, 2 << 20, 2 << 20); // the whole 2 MiB, as a client library would
                } catch (IOException resetWhileSending) {
                    // before the fix the server dropped the connection here; the close frame must still arrive
                }
                assertEquals(1009, s.readClose().closeCode(), "round " + round);
                s.sendClose(1000);
                assertTrue(s.closedByServerWithin(5_000), "the server ends the TCP connection after the close handshake");
            }
        }
    }

    @Test
    void fragmentsPastTheMessageLimitCloseWith1009WhileTheClientKeepsSending() throws IOException {
        byte[] fragment = new byte[600 * 1024];
        java.util.Arrays.fill(fragment, (byte) 'x');
        for (int round = 0; round < 10; round++) {
            try (FrameSocket s = FrameSocket.connect(server.wsUrl("frag"))) {
                try {
                    s.send(false, FrameSocket.TEXT, fragment);
                    for (int i = 0; i < 3; i++) {
                        s.send(false, FrameSocket.CONTINUATION, fragment);
                    }
                } catch (IOException resetWhileSending) {
                    // the close frame must still arrive
                }
                assertEquals(1009, s.readClose().closeCode(), "round " + round);
                s.sendClose(1000);
                assertTrue(s.closedByServerWithin(5_000), "the server ends the TCP connection after the close handshake");
            }
        }
    }

    @Test
    void aClientThatNeverAnswersTheCloseIsDisconnectedAfterTheCloseTimeout() throws IOException {
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("silent"))) {
            s.sendPartialFrame(FrameSocket.TEXT, 2 << 20, 1024); // announces 2 MiB, sends 1 KiB, then goes quiet
            assertEquals(1009, s.readClose().closeCode());
            long started = System.nanoTime();
            assertTrue(s.closedByServerWithin(15_000), "the server must not wait forever for the client's close");
            long waitedMs = (System.nanoTime() - started) / 1_000_000;
            assertTrue(waitedMs < 12_000, "closed after " + waitedMs + " ms");
        }
    }

    @Test
    void theConnectionCapClosesWith4029AndTheClientSeesIt() throws Exception {
        List<WsClient> open = new ArrayList<>();
        try {
            for (int i = 0; i < MAX_CONNECTIONS; i++) {
                WsClient c = WsClient.connect(server.wsUrl("capped"));
                open.add(c);
                assertTrue(c.reply(c.request("ping", ""), 5_000).get("ok").asBoolean());
            }
            for (int round = 0; round < 10; round++) {
                try (FrameSocket s = FrameSocket.connect(server.wsUrl("capped"))) {
                    try {
                        s.sendPartialFrame(FrameSocket.TEXT, 512 * 1024, 512 * 1024); // still sending when refused
                    } catch (IOException resetWhileSending) {
                        // the close frame must still arrive
                    }
                    assertEquals(4029, s.readClose().closeCode(), "round " + round);
                }
            }
        } finally {
            open.forEach(WsClient::abort);
        }
    }

    @Test
    void aClientThatVanishesWithoutACloseFrameFreesItsConnectionSlot() throws Exception {
        for (int round = 0; round < 3 * MAX_CONNECTIONS; round++) {
            FrameSocket s = FrameSocket.connect(server.wsUrl("vanish"));
            s.sendText("{\"id\":1,\"op\":\"ping\"}");
            Frame reply = s.read();
            assertEquals(FrameSocket.TEXT, reply.opcode(), "round " + round + ": no slot, closed with " + reply.closeCode());
            assertTrue(Json.parse(reply.text()).get("ok").asBoolean());
            s.close(); // TCP gone, no close frame: the server must still end the socket and free its slot
        }
        long deadline = System.currentTimeMillis() + 5_000;
        while (true) { // the last socket's end may still be under way: poll for a slot, with a deadline
            try (FrameSocket s = FrameSocket.connect(server.wsUrl("vanish"))) {
                s.sendText("{\"id\":2,\"op\":\"ping\"}");
                Frame f = s.read();
                if (f.opcode() == FrameSocket.TEXT) {
                    break;
                }
                assertEquals(4029, f.closeCode());
                assertTrue(System.currentTimeMillis() < deadline, "slots leaked: still 4029");
            }
        }
    }

    @Test
    void aPingIsAnsweredWithAPongCarryingTheSamePayload() throws IOException {
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("ping"))) {
            s.send(true, FrameSocket.PING, "hello".getBytes(StandardCharsets.UTF_8));
            Frame pong = s.read();
            assertEquals(FrameSocket.PONG, pong.opcode());
            assertEquals("hello", pong.text());
            s.send(true, FrameSocket.PING, new byte[0]);
            Frame empty = s.read();
            assertEquals(FrameSocket.PONG, empty.opcode());
            assertEquals(0, empty.payload().length);
            byte[] max = new byte[125];
            for (int i = 0; i < max.length; i++) {
                max[i] = (byte) i;
            }
            s.send(true, FrameSocket.PING, max);
            Frame pong125 = s.read();
            assertEquals(FrameSocket.PONG, pong125.opcode());
            assertArrayEquals(max, pong125.payload());
            // a ping between the fragments of a message is answered, and the message still arrives whole
            s.send(false, FrameSocket.TEXT, "{\"id\":7,\"op\":\"pi".getBytes(StandardCharsets.UTF_8));
            s.send(true, FrameSocket.PING, "mid".getBytes(StandardCharsets.UTF_8));
            s.send(true, FrameSocket.CONTINUATION, "ng\"}".getBytes(StandardCharsets.UTF_8));
            Frame midPong = s.read();
            assertEquals(FrameSocket.PONG, midPong.opcode());
            assertEquals("mid", midPong.text());
            JsonNode reply = Json.parse(s.read().text());
            assertEquals(7, reply.get("id").asInt());
            assertTrue(reply.get("ok").asBoolean(), reply.toString());
            // an unsolicited pong is ignored
            s.send(true, FrameSocket.PONG, "x".getBytes(StandardCharsets.UTF_8));
            s.sendText("{\"id\":8,\"op\":\"ping\"}");
            assertEquals(8, Json.parse(s.read().text()).get("id").asInt());
        }
    }

    /** SPEC §6: the id comes back as the same JSON value, spelled as sent (1e2 is not 100.0, 1.0 not 1). */
    @Test
    void aRequestIdShouldBeEchoedAsSent() throws IOException {
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("ids"))) {
            for (String id : List.of("1e2", "1.0", "-0.5", "2.50E-3", "7", "123456789012345678901234567890", "\"x\"", "null")) {
                s.sendText("{\"id\":" + id + ",\"op\":\"ping\"}");
                String reply = s.read().text();
                assertTrue(reply.startsWith("{\"id\":" + id + ","), id + " → " + reply);
            }
            s.sendText("{\"id\":1e2,\"op\":\"nope\"}");
            String error = s.read().text();
            assertTrue(error.startsWith("{\"id\":1e2,\"ok\":false"), error);
        }
    }

    @Test
    void protocolViolationsCloseWith1002() throws IOException {
        assertEquals(1002, closeCodeAfter(s -> s.send(true, FrameSocket.PING, new byte[126])), "control frame over 125 bytes");
        assertEquals(1002, closeCodeAfter(s -> s.send(false, FrameSocket.PING, new byte[1])), "fragmented control frame");
        assertEquals(1002, closeCodeAfter(s -> s.sendRaw(0x80 | 0x40 | FrameSocket.TEXT, "{}".getBytes(StandardCharsets.UTF_8))),
                "reserved bit with no extension");
        assertEquals(1002, closeCodeAfter(s -> s.send(true, FrameSocket.CONTINUATION, "x".getBytes(StandardCharsets.UTF_8))),
                "continuation with no message");
        assertEquals(1002, closeCodeAfter(s -> {
            s.send(false, FrameSocket.TEXT, "{".getBytes(StandardCharsets.UTF_8));
            s.send(true, FrameSocket.TEXT, "}".getBytes(StandardCharsets.UTF_8));
        }), "a new message inside a fragmented one");
        assertEquals(1002, closeCodeAfter(s -> s.send(true, FrameSocket.CLOSE, new byte[]{3})), "close frame with a 1-byte body");
    }

    @Test
    void aBadCloseFrameIsAnsweredWith1002AndTheConnectionEndsWithoutWaiting() throws IOException {
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("proto"))) {
            s.send(true, FrameSocket.CLOSE, new byte[]{0x03, (byte) 0xed}); // 1005 may not be sent
            assertEquals(1002, s.readClose().closeCode());
            long started = System.nanoTime();
            assertTrue(s.closedByServerWithin(10_000));
            long waitedMs = (System.nanoTime() - started) / 1_000_000;
            assertTrue(waitedMs < 2_000, "the peer already closed: no close timeout to wait out, waited " + waitedMs + " ms");
        }
    }

    @Test
    void reservedOpcodesCloseWith1002() throws IOException {
        for (int opcode : new int[]{0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF}) {
            assertEquals(1002, closeCodeAfter(s -> s.sendRaw(0x80 | opcode, "x".getBytes(StandardCharsets.UTF_8))),
                    "opcode 0x" + Integer.toHexString(opcode));
        }
    }

    @Test
    void invalidUtf8InTextClosesWith1007AndStoresNothing() throws IOException {
        byte[] prefix = "{\"id\":1,\"op\":\"append\",\"log\":\"utf\",\"data\":\"a".getBytes(StandardCharsets.UTF_8);
        byte[] suffix = "b\"}".getBytes(StandardCharsets.UTF_8);
        assertEquals(1007, closeCodeAfter(s -> s.send(true, FrameSocket.TEXT, concat(prefix, new byte[]{(byte) 0xff}, suffix))),
                "one frame");
        assertEquals(1007, closeCodeAfter(s -> {
            s.send(false, FrameSocket.TEXT, prefix);
            s.send(true, FrameSocket.CONTINUATION, concat(new byte[]{(byte) 0xff}, suffix));
        }), "invalid byte in the last fragment");
        assertEquals(1007, closeCodeAfter(s -> {
            s.send(false, FrameSocket.TEXT, concat(prefix, new byte[]{(byte) 0xc3}));
            s.send(true, FrameSocket.CONTINUATION, concat(new byte[]{(byte) 0x28}, suffix));
        }), "a sequence broken across fragments");
        assertEquals(1007, closeCodeAfter(s -> s.send(true, FrameSocket.TEXT, concat(prefix, suffix, new byte[]{(byte) 0xe2, (byte) 0x82}))),
                "a message that ends inside a sequence");
        assertEquals(1007, closeCodeAfter(s -> s.send(true, FrameSocket.TEXT, concat(prefix, new byte[]{(byte) 0xed, (byte) 0xa0, (byte) 0x80}, suffix))),
                "an encoded surrogate");
        // a valid character split across fragments is fine
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("proto"))) {
            s.send(false, FrameSocket.TEXT, concat(prefix, new byte[]{(byte) 0xc3}));
            s.send(true, FrameSocket.CONTINUATION, concat(new byte[]{(byte) 0xa9}, suffix));
            JsonNode reply = Json.parse(s.read().text());
            assertTrue(reply.get("ok").asBoolean(), reply.toString());
            assertEquals(1, reply.get("firstSeq").asLong(), "nothing before it was stored: " + reply);
        }
        JsonNode page = server.http.get("/v1/ws/proto/logs/utf/entries?from=1").json();
        assertEquals(1, page.get("entries").size(), page.toString());
        assertEquals("aéb", page.get("entries").get(0).get("data").asText());
    }

    @Test
    void creditSaturatesInsteadOfWrapping() {
        try (WsClient c = WsClient.connect(server.wsUrl("credit"))) {
            List<JsonNode> pushed = new ArrayList<>(); // frames that arrived while waiting for a reply
            for (int i = 0; i < 3; i++) {
                assertTrue(reply(c, c.request("append", "\"log\":\"c\",\"data\":" + i), pushed).get("ok").asBoolean());
            }
            assertTrue(reply(c, c.request("subscribe", "\"log\":\"c\",\"sub\":\"w\",\"window\":1"), pushed).get("ok").asBoolean());
            assertEquals(List.of(1L), entries(c, "w", 1, pushed));
            for (String bad : new String[]{"0", "-1", "-9223372036854775808", "1.5", "\"x\"", "9223372036854775808"}) {
                JsonNode refused = reply(c, c.request("credit", "\"sub\":\"w\",\"n\":" + bad), pushed);
                assertEquals("bad_request", refused.path("error").path("code").asText(), "n=" + bad + ": " + refused);
            }
            for (int i = 0; i < 2; i++) {
                JsonNode ok = reply(c, c.request("credit", "\"sub\":\"w\",\"n\":9223372036854775807"), pushed);
                assertTrue(ok.get("ok").asBoolean(), ok.toString());
            }
            assertEquals(List.of(2L, 3L), entries(c, "w", 2, pushed), "Long.MAX twice: the window stays open");
            assertTrue(reply(c, c.request("append", "\"log\":\"c\",\"data\":4"), pushed).get("ok").asBoolean());
            assertEquals(List.of(4L), entries(c, "w", 1, pushed));

            assertTrue(reply(c, c.request("subscribe", "\"log\":\"c\",\"sub\":\"m\",\"window\":9223372036854775806,\"from\":5"),
                    pushed).get("ok").asBoolean());
            assertTrue(reply(c, c.request("credit", "\"sub\":\"m\",\"n\":2"), pushed).get("ok").asBoolean());
            assertTrue(reply(c, c.request("append", "\"log\":\"c\",\"data\":5"), pushed).get("ok").asBoolean());
            assertEquals(List.of(5L), entries(c, "m", 1, pushed), "MAX-1 + 2 still delivers");
        }
    }

    /** The reply to {@code id}; pushed frames that come first are kept in {@code pushed}. */
    private static JsonNode reply(WsClient c, long id, List<JsonNode> pushed) {
        while (true) {
            JsonNode f = c.next(5_000);
            if (f.has("id") && f.get("id").asLong() == id) {
                return f;
            }
            pushed.add(f);
        }
    }

    @Test
    void subscribingBeyondHeadPlusOneIsRefusedWithTheHead() {
        try (WsClient c = WsClient.connect(server.wsUrl("ahead"))) {
            JsonNode empty = c.reply(c.request("subscribe", "\"log\":\"a\",\"from\":2"), 5_000);
            assertEquals("bad_request", empty.path("error").path("code").asText(), empty.toString());
            assertEquals(0, empty.path("error").path("head").asLong(-1), empty.toString());
            for (int i = 0; i < 2; i++) {
                assertTrue(c.reply(c.request("append", "\"log\":\"a\",\"data\":" + i), 5_000).get("ok").asBoolean());
            }
            JsonNode refused = c.reply(c.request("subscribe", "\"log\":\"a\",\"from\":4,\"sub\":\"far\""), 5_000);
            assertEquals("bad_request", refused.path("error").path("code").asText(), refused.toString());
            assertEquals(2, refused.path("error").path("head").asLong(-1), refused.toString());
            for (String huge : List.of("18446744073709551616", "18446744073709551617", "100000000000000000000")) {
                JsonNode wrapped = c.reply(c.request("subscribe", "\"log\":\"a\",\"from\":" + huge + ",\"sub\":\"far\""), 5_000);
                assertEquals("bad_request", wrapped.path("error").path("code").asText(), "from " + huge + " must not wrap: " + wrapped);
            }
            JsonNode next = c.reply(c.request("subscribe", "\"log\":\"a\",\"from\":3,\"sub\":\"far\""), 5_000);
            assertTrue(next.get("ok").asBoolean(), "head+1 is the next entry: " + next);
            assertEquals(3, next.get("from").asLong());
            JsonNode latest = c.reply(c.request("subscribe", "\"log\":\"a\",\"from\":\"latest\",\"sub\":\"l\""), 5_000);
            assertTrue(latest.get("ok").asBoolean(), latest.toString());
            assertEquals(3, latest.get("from").asLong());
        }
    }

    /** Collects the seqs of {@code count} entries pushed to subscription {@code sub}, first from {@code pushed}. */
    private static List<Long> entries(WsClient c, String sub, int count, List<JsonNode> pushed) {
        List<Long> seqs = new ArrayList<>();
        while (seqs.size() < count) {
            JsonNode f = pushed.isEmpty() ? c.next(5_000) : pushed.removeFirst();
            if (sub.equals(f.path("sub").asText()) && "entries".equals(f.path("type").asText())) {
                f.get("entries").forEach(e -> seqs.add(e.get("seq").asLong()));
            }
        }
        return seqs;
    }

    private interface Sends {
        void send(FrameSocket s) throws IOException;
    }

    /** Sends on a fresh connection and returns the close code the server answers with; it must then end the connection. */
    private static int closeCodeAfter(Sends sends) throws IOException {
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("proto"))) {
            sends.send(s);
            Frame close = s.read();
            assertEquals(FrameSocket.CLOSE, close.opcode(), "expected a close frame, got opcode " + close.opcode());
            try {
                s.sendClose(close.closeCode());
            } catch (IOException alreadyGone) {
                // after a refused close frame the server ends at once: the peer has closed already
            }
            assertTrue(s.closedByServerWithin(5_000), "the server ends the TCP connection after the close handshake");
            return close.closeCode();
        }
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    @Test
    void aNormalCloseIsEchoed() throws IOException {
        try (FrameSocket s = FrameSocket.connect(server.wsUrl("bye"))) {
            s.sendClose(1000);
            Frame close = s.read();
            assertEquals(FrameSocket.CLOSE, close.opcode());
            assertEquals(1000, close.closeCode());
            assertTrue(s.closedByServerWithin(5_000));
        }
    }
}

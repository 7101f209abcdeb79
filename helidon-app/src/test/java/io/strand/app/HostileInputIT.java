package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JWSAlgorithm;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.FrameSocket;
import io.strand.app.testing.Http;
import io.strand.app.testing.RawSocket;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import io.strand.app.testing.WsClient;
import io.strand.core.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input against a server with auth on: malformed WebSocket frames, and bad tokens (none,
 * malformed, tampered, {@code alg:none}, wrong key, expired, revoked) over HTTP and on the socket
 * upgrade, plus a token revoked while its socket is open. Each gets its error (a reply with the
 * SPEC §2 code, 401, or close 4001/1009/1007/1002), the server keeps serving, and nothing is
 * written: the target logs are never created. Raw frames (invalid UTF-8, reserved opcodes, an
 * oversized control frame) each carry an append to the target log, so a server that let them
 * through would create it; a ping must get its pong.
 */
@Timeout(120)
@FaultTest
class HostileInputIT {
    @TempDir
    static Path dir;
    static TestServer server;
    static Http root;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.start(dir, Map.of(), JwtAuthenticator.open(dir));
        root = server.http.withToken(Tokens.root(dir));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    @Scenario("malformed WebSocket frames")
    void malformedFramesShouldGetErrorsAndWriteNothing(ReliabilityRow row) throws Exception {
        String rootToken = Tokens.root(dir);
        String nested = "[".repeat(5_000) + "]".repeat(5_000);
        Map<String, String> frames = new LinkedHashMap<>(); // frame -> error code
        frames.put("{not json", "bad_frame");
        frames.put("[1,2]", "bad_frame");
        frames.put("\"just a string\"", "bad_frame");
        frames.put(nested, "bad_frame");
        frames.put("{\"id\":1}", "bad_frame"); // no op
        frames.put("{\"id\":2,\"op\":\"nope\",\"log\":\"target\",\"data\":1}", "unknown_op");
        frames.put("{\"id\":3,\"op\":\"append\",\"log\":\"../target\",\"data\":1}", "invalid_name");
        frames.put("{\"id\":4,\"op\":\"append\",\"log\":\"target\"}", "bad_request");
        frames.put("{\"id\":5,\"op\":\"append\",\"log\":\"target\",\"entries\":[]}", "bad_request");
        frames.put("{\"id\":6,\"op\":\"append\",\"log\":\"target\",\"data\":\"" + "x".repeat(300 * 1024) + "\"}", "too_large");
        frames.put("{\"id\":7,\"op\":\"append\",\"log\":\"target\",\"data\":1,\"expectedLastSeq\":\"x\"}", "bad_request");
        frames.put("{\"id\":8,\"op\":\"subscribe\",\"log\":\"target\",\"from\":\"yesterday\"}", "bad_request");
        frames.put("{\"id\":9,\"op\":\"read\",\"log\":\"target\",\"limit\":5000}", "bad_request");
        frames.put("{\"id\":10,\"op\":\"doc.put\",\"doc\":\"target\",\"value\":[1]}", "bad_request");
        int sent = 0;
        int answered = 0;
        try (WsClient c = WsClient.connect(server.wsUrl("acme"), rootToken)) {
            for (Map.Entry<String, String> f : frames.entrySet()) {
                c.send(f.getKey());
                sent++;
                JsonNode reply = c.next(10_000);
                String shown = f.getKey().length() > 60 ? f.getKey().substring(0, 60) + "…" : f.getKey();
                assertFalse(reply.path("ok").asBoolean(true), shown + " → " + reply);
                assertEquals(f.getValue(), reply.path("error").path("code").asText(), shown + " → " + reply);
                answered++;
            }
            assertTrue(c.reply(c.request("ping", ""), 5_000).get("ok").asBoolean(), "the socket is still usable");
            assertFalse(c.closed.isDone());
        }
        int closes = 0;
        assertEquals(1009, RawSocket.closeCodeAfterOversizeFrame(server.wsUrl("acme") + "?token=" + rootToken, 1100 * 1024));
        closes++;
        assertEquals(1009, RawSocket.closeCodeAfterFragments(server.wsUrl("acme") + "?token=" + rootToken, 600 * 1024, 2));
        closes++;
        String url = server.wsUrl("acme") + "?token=" + rootToken;
        byte[] prefix = "{\"id\":11,\"op\":\"append\",\"log\":\"target\",\"data\":\"a".getBytes(StandardCharsets.UTF_8);
        byte[] suffix = "b\"}".getBytes(StandardCharsets.UTF_8);
        byte[] append = concat(prefix, suffix);
        Map<String, Integer> rawCloses = new LinkedHashMap<>(); // what was sent -> close code it got
        rawCloses.put("invalid UTF-8", closeCodeAfter(url, s -> s.send(true, FrameSocket.TEXT, concat(prefix, new byte[]{(byte) 0xff}, suffix))));
        rawCloses.put("invalid UTF-8 across fragments", closeCodeAfter(url, s -> {
            s.send(false, FrameSocket.TEXT, concat(prefix, new byte[]{(byte) 0xc3}));
            s.send(true, FrameSocket.CONTINUATION, concat(new byte[]{0x28}, suffix));
        }));
        assertEquals(1007, rawCloses.get("invalid UTF-8"));
        assertEquals(1007, rawCloses.get("invalid UTF-8 across fragments"));
        for (int opcode : new int[]{0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF}) {
            String what = "reserved opcode 0x" + Integer.toHexString(opcode);
            rawCloses.put(what, closeCodeAfter(url, s -> s.sendRaw(0x80 | opcode, append)));
            assertEquals(1002, rawCloses.get(what), what);
        }
        rawCloses.put("ping of 126 bytes", closeCodeAfter(url, s -> s.send(true, FrameSocket.PING, new byte[126])));
        assertEquals(1002, rawCloses.get("ping of 126 bytes"), "control frame over 125 bytes");
        rawCloses.put("close of 200 bytes", closeCodeAfter(url, s -> s.send(true, FrameSocket.CLOSE, concat(new byte[]{0x03, (byte) 0xe8}, new byte[198]))));
        assertEquals(1002, rawCloses.get("close of 200 bytes"), "control frame over 125 bytes");
        try (FrameSocket s = FrameSocket.connect(url)) {
            s.send(true, FrameSocket.PING, "keepalive".getBytes(StandardCharsets.UTF_8));
            FrameSocket.Frame pong = s.read();
            assertEquals(FrameSocket.PONG, pong.opcode(), "a ping is answered with a pong");
            assertEquals("keepalive", pong.text());
            s.sendText("{\"id\":12,\"op\":\"ping\"}");
            assertTrue(Json.parse(s.read().text()).path("ok").asBoolean(), "the socket is still usable after the pong");
        }
        nothingWritten("target");
        row.runs(1).operations(sent + closes + rawCloses.size() + 2).acknowledged(0)
                .note(answered + " frames answered with their error code, " + closes + " oversize closed 1009, "
                        + rawCloses.size() + " raw frames closed 1007/1002, ping answered with pong; nothing written");
    }

    @Test
    @Scenario("bad tokens (HTTP + WebSocket)")
    void badTokensShouldGet401AndWriteNothing(ReliabilityRow row) throws Exception {
        byte[] secret = Files.readAllBytes(dir.resolve("secret"));
        JsonNode rw = mint("acme", "rw", 3600);
        JsonNode revoked = mint("acme", "rw", 3600);
        assertEquals(200, root.delete("/v1/admin/tokens/" + revoked.get("jti").asText()).status());
        byte[] otherKey = new byte[32];
        otherKey[0] = 1;
        String rwToken = rw.get("token").asText();
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("malformed", "not.a-token");
        bad.put("tampered", Tokens.tampered(rwToken));
        bad.put("alg none", Tokens.algNone(rwToken));
        bad.put("wrong key", Tokens.sign(otherKey, JWSAlgorithm.HS256, "acme", "rw", "forged", rw.get("exp").asLong()));
        bad.put("expired", Tokens.sign(secret, JWSAlgorithm.HS256, "acme", "rw", rw.get("jti").asText(), System.currentTimeMillis() / 1000 - 60));
        bad.put("revoked", revoked.get("token").asText());
        int operations = 0;
        Http.Reply none = server.http.post("/v1/ws/acme/logs/target2/entries", "{\"data\":1}");
        operations++;
        assertEquals(401, none.status(), none.body());
        for (Map.Entry<String, String> t : bad.entrySet()) {
            Http.Reply r = server.http.withToken(t.getValue()).post("/v1/ws/acme/logs/target2/entries", "{\"data\":1}");
            operations++;
            assertEquals(401, r.status(), t.getKey() + ": " + r.body());
            assertEquals("unauthorized", r.errorCode(), t.getKey() + ": " + r.body());
            Http.Reply doc = server.http.withToken(t.getValue()).put("/v1/ws/acme/docs/target2", "{\"value\":{\"a\":1}}");
            operations++;
            assertEquals(401, doc.status(), t.getKey() + ": " + doc.body());
            Http.Reply upgrade = RawSocket.upgrade(server.wsUrl("acme"), "Bearer " + t.getValue());
            operations++;
            assertEquals(401, upgrade.status(), t.getKey() + " upgrade: " + upgrade.body());
        }
        // revoked while open: the socket closes 4001, and what it sends after is not written
        JsonNode live = mint("acme", "rw", 3600);
        try (WsClient c = WsClient.connect(server.wsUrl("acme"), live.get("token").asText())) {
            assertTrue(c.reply(c.request("ping", ""), 5_000).get("ok").asBoolean());
            assertEquals(200, root.delete("/v1/admin/tokens/" + live.get("jti").asText()).status());
            assertEquals(4001, c.closed.get(10, TimeUnit.SECONDS));
            operations++;
        }
        nothingWritten("target2");
        assertEquals(404, root.get("/v1/ws/acme/docs/target2").status(), "no doc written");
        row.runs(1).operations(operations).acknowledged(0)
                .note((bad.size() + 1) + " kinds refused 401 on HTTP and upgrade, revoked socket closed 4001; nothing written");
    }

    /** What a test sends on a fresh raw socket. */
    @FunctionalInterface
    private interface Sends {
        void send(FrameSocket s) throws IOException;
    }

    /** Sends on a fresh socket and returns the code of the close frame the server answers with. */
    private static int closeCodeAfter(String url, Sends sends) throws IOException {
        try (FrameSocket s = FrameSocket.connect(url)) {
            sends.send(s);
            FrameSocket.Frame close = s.read();
            assertEquals(FrameSocket.CLOSE, close.opcode(), "expected a close frame, got opcode " + close.opcode());
            return close.closeCode();
        }
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static void nothingWritten(String log) {
        Http.Reply info = root.get("/v1/ws/acme/logs/" + log);
        assertEquals(404, info.status(), "log " + log + " was never created: " + info.body());
    }

    private static JsonNode mint(String ws, String scope, long ttl) {
        Http.Reply r = root.post("/v1/admin/tokens", "{\"ws\":\"" + ws + "\",\"scope\":\"" + scope + "\",\"ttlSeconds\":" + ttl + "}");
        assertEquals(200, r.status(), r.body());
        return r.json();
    }
}

package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link StrandSocket} and its frame codec against a hand-written server peer on a local
 * {@link ServerSocket}: the peer unmasks what the client sends and writes unmasked frames of its
 * own choosing (lengths, fragments, control frames), written here from RFC 6455 rather than from
 * the code under test.
 */
@Timeout(30)
class StrandSocketTest {
    private ServerSocket listener;
    private Peer peer;
    private StrandSocket client;
    /** Set by tests that read the client through a {@link SocketLoop} instead of its own thread. */
    private SocketLoop loop;

    @AfterEach
    void tearDown() throws IOException {
        if (client != null) {
            client.abort();
        }
        if (loop != null) {
            loop.close();
        }
        if (peer != null) {
            peer.socket.close();
        }
        if (listener != null) {
            listener.close();
        }
    }

    /** As {@link #connect(String, boolean)}, the client read by a {@link SocketLoop} when {@code viaLoop}. */
    private void connect(boolean viaLoop) throws Exception {
        loop = viaLoop ? new SocketLoop() : null;
        connect(null, true);
    }

    /** Connects a client (with {@code token}) to a fresh peer that answers the upgrade with {@code accept} applied to the key. */
    private Map<String, String> connect(String token, boolean correctAccept) throws Exception {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture<Map<String, String>> request = CompletableFuture.supplyAsync(() -> {
            try {
                peer = new Peer(listener.accept());
                Map<String, String> headers = peer.readRequest();
                String accept = correctAccept ? accept(headers.get("sec-websocket-key")) : accept("not the key");
                peer.out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: " + accept + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                peer.out.flush();
                return headers;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        client = new StrandSocket("ws://127.0.0.1:" + listener.getLocalPort() + "/v1/ws/acme/socket?x=1", token, loop);
        return request.get(10, TimeUnit.SECONDS);
    }

    @Test
    void handshakeShouldSendAKeyAndTheBearerTokenAndAcceptTheMatchingAnswer() throws Exception {
        Map<String, String> h = connect("tok-123", true);
        assertEquals("GET /v1/ws/acme/socket?x=1 HTTP/1.1", h.get(""));
        assertEquals("websocket", h.get("upgrade"));
        assertEquals("13", h.get("sec-websocket-version"));
        assertEquals(16, Base64.getDecoder().decode(h.get("sec-websocket-key")).length);
        assertEquals("Bearer tok-123", h.get("authorization"));
        assertFalse(client.closed.isDone());
    }

    @Test
    void handshakeShouldFailWhenTheAcceptDoesNotMatchTheKey() {
        StrandSocket.ConnectFailure f = assertThrows(StrandSocket.ConnectFailure.class, () -> connect(null, false));
        assertEquals(101, f.status);
        assertTrue(f.getMessage().contains("Sec-WebSocket-Accept"), f.getMessage());
    }

    @Test
    void handshakeShouldReportTheStatusAndBodyOfARefusal() throws Exception {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture.runAsync(() -> {
            try {
                peer = new Peer(listener.accept());
                assertFalse(peer.readRequest().containsKey("authorization"));
                byte[] body = "{\"error\":{\"code\":\"unauthorized\"}}".getBytes(StandardCharsets.UTF_8);
                peer.out.write(("HTTP/1.1 401 Unauthorized\r\nContent-Length: " + body.length + "\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                peer.out.write(body);
                peer.out.flush();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        StrandSocket.ConnectFailure f = assertThrows(StrandSocket.ConnectFailure.class,
                () -> new StrandSocket("ws://127.0.0.1:" + listener.getLocalPort() + "/", null));
        assertEquals(401, f.status);
        assertTrue(f.getMessage().contains("unauthorized"), f.getMessage());
    }

    @Test
    void sendShouldMaskEveryFrameWithAFreshKey() throws Exception {
        connect(null, true);
        CompletableFuture<JsonNode> first = client.call("ping", "");
        CompletableFuture<JsonNode> second = client.call("ping", "");
        Frame a = peer.readFrame();
        Frame b = peer.readFrame();
        assertTrue(a.fin && a.masked && b.masked, "client frames are final and masked");
        assertEquals(FrameWriter.TEXT, a.opcode);
        assertEquals("{\"id\":1,\"op\":\"ping\"}", a.text());
        assertEquals("{\"id\":2,\"op\":\"ping\"}", b.text());
        assertFalse(Arrays.equals(a.key, b.key), "a fresh masking key per frame");
        assertFalse(Arrays.equals(a.payload, a.raw), "the bytes on the wire are masked");

        peer.writeFrame(true, 0x1, "{\"id\":2,\"ok\":true,\"pong\":true}".getBytes(StandardCharsets.UTF_8));
        peer.writeFrame(true, 0x1, "{\"id\":1,\"ok\":true,\"pong\":true}".getBytes(StandardCharsets.UTF_8));
        assertEquals(2, second.get(10, TimeUnit.SECONDS).get("id").asLong(), "replies are matched by id, in any order");
        assertEquals(1, first.get(10, TimeUnit.SECONDS).get("id").asLong());
    }

    @ParameterizedTest(name = "read by a socket loop: {0}")
    @ValueSource(booleans = {false, true})
    void framesShouldUseSevenSixteenAndSixtyFourBitLengthsBothWays(boolean viaLoop) throws Exception {
        connect(viaLoop);
        for (int size : new int[] {100, 125, 126, 300, 65_535, 65_536, 300_000}) {
            String pad = "y".repeat(size);
            CompletableFuture<JsonNode> reply = client.call("echo", "\"pad\":\"" + pad + "\"");
            Frame sent = peer.readFrame();
            String text = sent.text();
            assertEquals("{\"id\":" + Json.parse(text).get("id").asLong() + ",\"op\":\"echo\",\"pad\":\"" + pad + "\"}", text);
            assertEquals(text.length() <= 125 ? 1 : text.length() <= 65_535 ? 2 : 8, sent.lengthBytes,
                    "client length field for " + text.length() + " bytes");

            byte[] answer = ("{\"id\":" + Json.parse(text).get("id").asLong() + ",\"ok\":true,\"pad\":\"" + pad + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            int lengthBytes = peer.writeFrame(true, 0x1, answer);
            assertEquals(pad, reply.get(10, TimeUnit.SECONDS).get("pad").asText(), "server frame with " + lengthBytes + "-byte length");
        }
    }

    @ParameterizedTest(name = "read by a socket loop: {0}")
    @ValueSource(booleans = {false, true})
    void readerShouldJoinFragmentedTextAndAnswerAPingInTheMiddleWithAPong(boolean viaLoop) throws Exception {
        connect(viaLoop);
        CompletableFuture<JsonNode> pushed = new CompletableFuture<>();
        client.onPush(pushed::complete);
        byte[] whole = "{\"sub\":\"s\",\"type\":\"entries\",\"text\":\"h\u00e9llo \u20ac\"}".getBytes(StandardCharsets.UTF_8);
        int euro = indexOf(whole, (byte) 0xE2);
        peer.writeFrame(false, 0x1, Arrays.copyOfRange(whole, 0, 10));
        peer.writeFrame(true, 0x9, "are you there".getBytes(StandardCharsets.UTF_8)); // control frames may come between fragments
        peer.writeFrame(false, 0x0, Arrays.copyOfRange(whole, 10, euro + 1)); // splits the three bytes of €
        peer.writeFrame(true, 0x0, Arrays.copyOfRange(whole, euro + 1, whole.length));

        Frame pong = peer.readFrame();
        assertEquals(0xA, pong.opcode);
        assertTrue(pong.masked);
        assertEquals("are you there", pong.text());
        JsonNode frame = pushed.get(10, TimeUnit.SECONDS);
        assertEquals("h\u00e9llo \u20ac", frame.get("text").asText());
    }

    @ParameterizedTest(name = "read by a socket loop: {0}")
    @ValueSource(booleans = {false, true})
    void closedShouldCarryThePeersCodeAfterTheClientEchoesItAndPendingCallsShouldFail(boolean viaLoop) throws Exception {
        connect(viaLoop);
        CompletableFuture<JsonNode> call = client.call("read", "\"log\":\"a\"");
        CompletableFuture<JsonNode> sent = new CompletableFuture<>();
        client.send("read", "\"log\":\"b\"", sent::complete);
        peer.readFrame();
        peer.readFrame();
        peer.writeFrame(true, 0x8, new byte[] {(byte) (4001 >> 8), (byte) (4001 & 0xFF), 'b', 'y', 'e'});
        Frame echo = peer.readFrame();
        assertEquals(0x8, echo.opcode);
        assertEquals(4001, ((echo.payload[0] & 0xFF) << 8) | (echo.payload[1] & 0xFF));
        assertEquals(4001, client.closed.get(10, TimeUnit.SECONDS));
        ExecutionException failed = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
        assertTrue(failed.getCause().getMessage().contains("4001"), failed.getCause().getMessage());
        assertEquals("socket_closed", sent.get(10, TimeUnit.SECONDS).path("error").path("code").asText());
        CompletableFuture<JsonNode> late = new CompletableFuture<>();
        client.send("read", "\"log\":\"c\"", late::complete);
        assertEquals("socket_closed", late.get(10, TimeUnit.SECONDS).path("error").path("code").asText(), "a send after the close fails at once");
    }

    @ParameterizedTest(name = "read by a socket loop: {0}")
    @ValueSource(booleans = {false, true})
    void closeShouldSendCloseAndReportTheEchoedCode(boolean viaLoop) throws Exception {
        connect(viaLoop);
        CompletableFuture<Void> echoed = CompletableFuture.runAsync(() -> {
            try {
                Frame close = peer.readFrame();
                assertEquals(0x8, close.opcode);
                peer.writeFrame(true, 0x8, Arrays.copyOf(close.payload, 2));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        client.close();
        echoed.get(10, TimeUnit.SECONDS);
        assertEquals(1000, client.closed.get(10, TimeUnit.SECONDS));
    }

    @ParameterizedTest(name = "read by a socket loop: {0}")
    @ValueSource(booleans = {false, true})
    void closedShouldBeMinusOneWhenTheConnectionBreaks(boolean viaLoop) throws Exception {
        connect(viaLoop);
        CompletableFuture<JsonNode> call = client.call("read", "\"log\":\"a\"");
        peer.readFrame();
        peer.socket.close();
        assertEquals(-1, client.closed.get(10, TimeUnit.SECONDS));
        assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
    }

    @ParameterizedTest(name = "read by a socket loop: {0}")
    @ValueSource(booleans = {false, true})
    void aMaskedServerFrameShouldBeAProtocolErrorClosedWith1002(boolean viaLoop) throws Exception {
        connect(viaLoop);
        peer.out.write(new byte[] {(byte) 0x81, (byte) 0x82, 1, 2, 3, 4, 'x' ^ 1, 'y' ^ 2});
        peer.out.flush();
        Frame close = peer.readFrame();
        assertEquals(0x8, close.opcode);
        assertEquals(1002, ((close.payload[0] & 0xFF) << 8) | (close.payload[1] & 0xFF));
        assertEquals(-1, client.closed.get(10, TimeUnit.SECONDS));
    }

    // ---------------------------------------------------------------- the peer

    private static String accept(String key) throws Exception {
        byte[] sha1 = MessageDigest.getInstance("SHA-1")
                .digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.ISO_8859_1));
        return Base64.getEncoder().encodeToString(sha1);
    }

    private static int indexOf(byte[] a, byte b) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        throw new AssertionError("no byte " + b);
    }

    /** A frame as the peer read it: the payload unmasked, plus what was on the wire. */
    private record Frame(boolean fin, int opcode, boolean masked, int lengthBytes, byte[] key, byte[] raw, byte[] payload) {
        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    /** The server side of one connection, written from RFC 6455 §5.2. */
    private static final class Peer {
        final Socket socket;
        final DataInputStream in;
        final OutputStream out;

        Peer(Socket socket) throws IOException {
            this.socket = socket;
            socket.setSoTimeout(10_000);
            this.in = new DataInputStream(socket.getInputStream());
            this.out = socket.getOutputStream();
        }

        /** The request line under key "" and the headers, names in lower case. */
        Map<String, String> readRequest() throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                head.write(in.readUnsignedByte());
            }
            Map<String, String> headers = new HashMap<>();
            String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
            headers.put("", lines[0]);
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
            return headers;
        }

        Frame readFrame() throws IOException {
            int b0 = in.readUnsignedByte();
            int b1 = in.readUnsignedByte();
            long length = b1 & 0x7F;
            int lengthBytes = 1;
            if (length == 126) {
                length = in.readUnsignedShort();
                lengthBytes = 2;
            } else if (length == 127) {
                length = in.readLong();
                lengthBytes = 8;
            }
            boolean masked = (b1 & 0x80) != 0;
            byte[] key = new byte[4];
            if (masked) {
                in.readFully(key);
            }
            byte[] raw = new byte[(int) length];
            in.readFully(raw);
            byte[] payload = new byte[raw.length];
            for (int i = 0; i < raw.length; i++) {
                payload[i] = (byte) (raw[i] ^ key[i % 4]);
            }
            return new Frame((b0 & 0x80) != 0, b0 & 0x0F, masked, lengthBytes, key, raw, payload);
        }

        /** Writes an unmasked frame in the shortest length form; returns the size of its length field (1, 2 or 8). */
        int writeFrame(boolean fin, int opcode, byte[] payload) throws IOException {
            ByteArrayOutputStream f = new ByteArrayOutputStream();
            f.write((fin ? 0x80 : 0) | opcode);
            int lengthBytes;
            if (payload.length <= 125) {
                f.write(payload.length);
                lengthBytes = 1;
            } else if (payload.length <= 65_535) {
                f.write(126);
                f.write(payload.length >> 8);
                f.write(payload.length & 0xFF);
                lengthBytes = 2;
            } else {
                f.write(127);
                for (int i = 7; i >= 0; i--) {
                    f.write((int) ((long) payload.length >>> (8 * i)) & 0xFF);
                }
                lengthBytes = 8;
            }
            f.write(payload);
            out.write(f.toByteArray());
            out.flush();
            return lengthBytes;
        }
    }
}

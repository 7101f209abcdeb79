package io.strand.app.testing;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/** Speaks just enough WebSocket by hand to send what a well-behaved client library refuses to. */
public final class RawSocket {
    private static final int TEXT = 0x1;
    private static final int CONTINUATION = 0x0;

    private RawSocket() {
    }

    /**
     * Sends a WebSocket upgrade request (with {@code authorization} as the header value when not
     * null) and returns the server's answer: 101 with an empty body, or the refusal's status and body.
     */
    public static Http.Reply upgrade(String wsUrl, String authorization) throws IOException {
        URI uri = URI.create(wsUrl);
        try (Socket s = new Socket(uri.getHost(), uri.getPort())) {
            s.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            String headers = handshake(uri, s.getOutputStream(), in, authorization);
            int status = Integer.parseInt(headers.substring(9, 12));
            int length = 0;
            for (String line : headers.split("\r\n")) {
                if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
                    length = Integer.parseInt(line.substring(15).trim());
                }
            }
            byte[] body = status == 101 ? new byte[0] : in.readNBytes(length);
            return new Http.Reply(status, new String(body, StandardCharsets.UTF_8));
        }
    }

    /** Announces a text frame of {@code length} bytes and returns the close code the server answers with. */
    public static int closeCodeAfterOversizeFrame(String wsUrl, long length) throws IOException {
        return closeCodeAfter(wsUrl, out -> {
            out.write(frameHeader(true, TEXT, length)); // then a little payload; the server must refuse on the header
            out.write(new byte[1024]);
            out.flush();
        });
    }

    /** Sends {@code fragments} text fragments of {@code size} bytes each (each under the frame limit) and returns the close code. */
    public static int closeCodeAfterFragments(String wsUrl, int size, int fragments) throws IOException {
        byte[] payload = new byte[size];
        Arrays.fill(payload, (byte) 'x');
        return closeCodeAfter(wsUrl, out -> {
            for (int f = 0; f < fragments; f++) {
                out.write(frameHeader(f == fragments - 1, f == 0 ? TEXT : CONTINUATION, size));
                out.write(payload); // mask key 0: the payload goes as is
                out.flush();
            }
        });
    }

    private interface Sender {
        void send(OutputStream out) throws IOException;
    }

    private static int closeCodeAfter(String wsUrl, Sender sender) throws IOException {
        URI uri = URI.create(wsUrl);
        try (Socket s = new Socket(uri.getHost(), uri.getPort())) {
            s.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            String headers = handshake(uri, s.getOutputStream(), in, null);
            if (!headers.startsWith("HTTP/1.1 101")) {
                throw new IOException("upgrade refused: " + headers);
            }
            try {
                sender.send(s.getOutputStream());
            } catch (IOException closedWhileSending) {
                // the server may close before everything is sent; its close frame is still readable
            }
            int b0 = in.readUnsignedByte();
            int len = in.readUnsignedByte() & 0x7f;
            if ((b0 & 0x0f) != 0x8 || len < 2) {
                throw new IOException("expected a close frame, got opcode " + (b0 & 0x0f));
            }
            return in.readUnsignedShort();
        }
    }

    /** A masked client frame header with a 64-bit length and mask key 0. */
    private static byte[] frameHeader(boolean fin, int opcode, long length) {
        byte[] header = new byte[14];
        header[0] = (byte) ((fin ? 0x80 : 0) | opcode);
        header[1] = (byte) (0x80 | 127);
        for (int i = 0; i < 8; i++) {
            header[2 + i] = (byte) (length >>> (56 - 8 * i));
        }
        return header;
    }

    private static String handshake(URI uri, OutputStream out, DataInputStream in, String authorization) throws IOException {
        String key = Base64.getEncoder().encodeToString("0123456789abcdef".getBytes(StandardCharsets.US_ASCII));
        String target = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        out.write(("GET " + target + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key
                + "\r\nSec-WebSocket-Version: 13\r\n"
                + (authorization == null ? "" : "Authorization: " + authorization + "\r\n")
                + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        StringBuilder headers = new StringBuilder();
        while (!headers.toString().endsWith("\r\n\r\n")) {
            headers.append((char) in.readUnsignedByte());
        }
        return headers.toString();
    }
}

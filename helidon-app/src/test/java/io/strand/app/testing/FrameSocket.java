package io.strand.app.testing;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * A frame-level WebSocket client over a plain TCP socket, for tests that must control every byte
 * (reserved opcodes, oversized control frames, invalid UTF-8, a close while the client still
 * sends). Owned by one test thread.
 */
public final class FrameSocket implements AutoCloseable {
    public static final int CONTINUATION = 0x0;
    public static final int TEXT = 0x1;
    public static final int BINARY = 0x2;
    public static final int CLOSE = 0x8;
    public static final int PING = 0x9;
    public static final int PONG = 0xA;
    private static final byte[] MASK = {0x11, 0x22, 0x33, 0x44};

    /** One server frame; {@code payload} is unmasked. */
    public record Frame(boolean fin, int opcode, byte[] payload) {
        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        /** The status code of a close frame (1005 when it carries none). */
        public int closeCode() {
            return payload.length < 2 ? 1005 : ((payload[0] & 0xff) << 8) | (payload[1] & 0xff);
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    private FrameSocket(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects and upgrades (keeping the URL's query, e.g. {@code ?token=}); fails unless the server answers 101. */
    public static FrameSocket connect(String wsUrl) throws IOException {
        return connect(wsUrl, new byte[0]);
    }

    /**
     * As {@link #connect(String)}, with {@code rightBehind} (frames, see {@link #frame}) sent in the same
     * write as the upgrade request, before the server's answer: a client that does not wait for the 101.
     */
    public static FrameSocket connect(String wsUrl, byte[] rightBehind) throws IOException {
        URI uri = URI.create(wsUrl);
        Socket s = new Socket(uri.getHost(), uri.getPort());
        s.setSoTimeout(10_000);
        FrameSocket fs = new FrameSocket(s);
        String key = Base64.getEncoder().encodeToString("0123456789abcdef".getBytes(StandardCharsets.US_ASCII));
        String target = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()); // ?token= on the upgrade
        fs.out.write(("GET " + target + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key
                + "\r\nSec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        fs.out.write(rightBehind);
        fs.out.flush();
        StringBuilder headers = new StringBuilder();
        while (!headers.toString().endsWith("\r\n\r\n")) {
            headers.append((char) fs.in.readUnsignedByte());
        }
        if (!headers.toString().startsWith("HTTP/1.1 101")) {
            s.close();
            throw new IOException("upgrade refused: " + headers);
        }
        return fs;
    }

    /** Sends one masked frame with exactly this first byte's flags and opcode. */
    public void send(boolean fin, int opcode, byte[] payload) throws IOException {
        out.write(header(fin ? 0x80 | opcode : opcode, payload.length));
        out.write(masked(payload));
        out.flush();
    }

    /** The bytes of one final masked frame, as {@link #send} sends it. */
    public static byte[] frame(int opcode, byte[] payload) {
        byte[] h = header(0x80 | opcode, payload.length);
        byte[] m = masked(payload);
        byte[] all = java.util.Arrays.copyOf(h, h.length + m.length);
        System.arraycopy(m, 0, all, h.length, m.length);
        return all;
    }

    public void sendText(String text) throws IOException {
        send(true, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Sends a raw first header byte (so reserved bits and opcodes can be set) with a masked payload. */
    public void sendRaw(int firstByte, byte[] payload) throws IOException {
        out.write(header(firstByte, payload.length));
        out.write(masked(payload));
        out.flush();
    }

    /** Announces a frame of {@code length} bytes and sends {@code sent} bytes of its payload, in 64 KiB writes. */
    public void sendPartialFrame(int opcode, long length, long sent) throws IOException {
        out.write(header(0x80 | opcode, length));
        byte[] chunk = new byte[64 * 1024];
        java.util.Arrays.fill(chunk, (byte) 'x');
        for (long done = 0; done < sent; done += chunk.length) {
            out.write(chunk, 0, (int) Math.min(chunk.length, sent - done));
        }
        out.flush();
    }

    public void sendClose(int code) throws IOException {
        send(true, CLOSE, new byte[]{(byte) (code >> 8), (byte) code});
    }

    /** The next server frame. */
    public Frame read() throws IOException {
        int b0 = in.readUnsignedByte();
        int b1 = in.readUnsignedByte();
        long length = b1 & 0x7f;
        if (length == 126) {
            length = in.readUnsignedShort();
        } else if (length == 127) {
            length = in.readLong();
        }
        byte[] payload = in.readNBytes((int) length);
        if (payload.length != length) {
            throw new EOFException("frame cut short");
        }
        return new Frame((b0 & 0x80) != 0, b0 & 0x0f, payload);
    }

    /** Reads frames until a close frame and returns it (data frames in between are skipped). */
    public Frame readClose() throws IOException {
        while (true) {
            Frame f = read();
            if (f.opcode() == CLOSE) {
                return f;
            }
        }
    }

    /** True when the server closes the TCP connection within {@code timeoutMs} (nothing more arrives). */
    public boolean closedByServerWithin(int timeoutMs) throws IOException {
        socket.setSoTimeout(timeoutMs);
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private static byte[] header(int firstByte, long length) {
        byte[] h;
        if (length < 126) {
            h = new byte[]{(byte) firstByte, (byte) (0x80 | length), 0, 0, 0, 0};
        } else if (length < 65536) {
            h = new byte[]{(byte) firstByte, (byte) (0x80 | 126), (byte) (length >> 8), (byte) length, 0, 0, 0, 0};
        } else {
            h = new byte[14];
            h[0] = (byte) firstByte;
            h[1] = (byte) (0x80 | 127);
            for (int i = 0; i < 8; i++) {
                h[2 + i] = (byte) (length >>> (56 - 8 * i));
            }
        }
        System.arraycopy(MASK, 0, h, h.length - 4, 4);
        return h;
    }

    private static byte[] masked(byte[] payload) {
        byte[] m = new byte[payload.length];
        for (int i = 0; i < payload.length; i++) {
            m[i] = (byte) (payload[i] ^ MASK[i & 3]);
        }
        return m;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

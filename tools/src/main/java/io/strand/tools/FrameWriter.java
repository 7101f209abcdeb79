package io.strand.tools;

import io.strand.app.ws.WsMask;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Writes client frames (RFC 6455 §5.2) to one socket. Thread-safe: each frame is assembled in one
 * reusable buffer and written and flushed under a lock, so frames from several threads never
 * interleave and each costs one write call.
 *
 * <pre>
 * byte 0       FIN (0x80) | opcode (0x1 text, 0x8 close, 0x9 ping, 0xA pong); RSV bits 0
 * byte 1       MASK (0x80, always set by a client) | length: 0..125, 126 or 127
 * +2 or +8     extended length, network order: 16 bits when 126, 64 bits when 127
 * +4           masking key
 * payload      each byte XORed with key[i % 4]
 * </pre>
 *
 * The masking key is fresh per frame from a per-socket xorshift generator seeded by the caller:
 * cheap, and unpredictable enough for the RFC's purpose (keeping a client from choosing the bytes
 * an intermediary sees), which matters little on loopback.
 */
final class FrameWriter {
    static final int TEXT = 0x1;
    static final int CLOSE = 0x8;
    static final int PING = 0x9;
    static final int PONG = 0xA;
    /** 2 bytes + 8 of extended length + 4 of masking key. */
    static final int MAX_HEADER = 14;

    private final OutputStream out;
    private final ReentrantLock lock = new ReentrantLock();
    private byte[] buffer = new byte[8192];
    private int maskState;

    FrameWriter(OutputStream out, int seed) {
        this.out = out;
        this.maskState = seed == 0 ? 0x2545F491 : seed;
    }

    /** Sends one unfragmented text frame. */
    void text(byte[] payload) throws IOException {
        frame(TEXT, payload, 0, payload.length);
    }

    /** Sends a close frame with {@code code} (none when 1005, "no status") and a short reason. */
    void close(int code, String reason) throws IOException {
        if (code == 1005) {
            frame(CLOSE, new byte[0], 0, 0);
            return;
        }
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, 123);
        byte[] payload = new byte[2 + n];
        payload[0] = (byte) (code >> 8);
        payload[1] = (byte) code;
        System.arraycopy(text, 0, payload, 2, n);
        frame(CLOSE, payload, 0, payload.length);
    }

    /** Writes one final frame of {@code opcode} carrying {@code payload[offset, offset+length)}, masked. */
    void frame(int opcode, byte[] payload, int offset, int length) throws IOException {
        lock.lock();
        try {
            if (buffer.length < MAX_HEADER + length) {
                buffer = new byte[Math.max(MAX_HEADER + length, 2 * buffer.length)];
            }
            int key = nextKey();
            int h = header(buffer, opcode, length, key);
            WsMask.xor(payload, offset, buffer, h, length, key);
            out.write(buffer, 0, h + length);
            out.flush();
        } finally {
            lock.unlock();
        }
    }

    /** Writes the header (with {@code key} as the masking key) at the start of {@code b}; returns its length. */
    static int header(byte[] b, int opcode, long length, int key) {
        b[0] = (byte) (0x80 | opcode);
        int p;
        if (length <= 125) {
            b[1] = (byte) (0x80 | length);
            p = 2;
        } else if (length <= 0xFFFF) {
            b[1] = (byte) (0x80 | 126);
            b[2] = (byte) (length >> 8);
            b[3] = (byte) length;
            p = 4;
        } else {
            b[1] = (byte) (0x80 | 127);
            for (int i = 0; i < 8; i++) {
                b[2 + i] = (byte) (length >>> (56 - 8 * i));
            }
            p = 10;
        }
        for (int i = 0; i < 4; i++) { // key byte i masks payload bytes i, i+4, …
            b[p + i] = (byte) (key >>> (8 * i));
        }
        return p + 4;
    }

    private int nextKey() {
        int x = maskState; // xorshift32
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        maskState = x;
        return x;
    }
}

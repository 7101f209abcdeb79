package io.strand.app.ws;

import io.helidon.common.buffers.DataReader;
import io.helidon.websocket.WsCloseCodes;
import io.helidon.websocket.WsCloseException;

/**
 * Reads client frames (RFC 6455 §5.2) from one connection and refuses what the RFC forbids a client
 * with a {@link WsCloseException} carrying the close code: reserved bits with no extension,
 * reserved opcodes, unmasked frames, control frames that are fragmented or over 125 bytes (1002),
 * frames over the frame limit (1009). The header is always read whole before a refusal, so
 * {@link #skipRestOfFrame} can discard the payload of a refused frame while the close handshake
 * runs. Owned by the connection's reading thread.
 */
final class ClientFrameReader {
    static final int CONTINUATION = 0x0;
    static final int TEXT = 0x1;
    static final int BINARY = 0x2;
    static final int CLOSE = 0x8;
    static final int PING = 0x9;
    static final int PONG = 0xA;
    private static final int MAX_CONTROL_PAYLOAD = 125;
    private static final int SKIP_CHUNK = 1 << 20;

    /** One frame, payload unmasked. */
    record Frame(boolean fin, int opcode, byte[] payload) {
    }

    private final DataReader reader;
    private final int maxFrameLength;
    /** Payload bytes of the current frame not read yet. */
    private long remaining;

    ClientFrameReader(DataReader reader, int maxFrameLength) {
        this.reader = reader;
        this.maxFrameLength = maxFrameLength;
    }

    /** Blocks for the next frame; throws {@link DataReader.InsufficientDataAvailableException} once the peer is gone. */
    Frame next() {
        int b0 = reader.read() & 0xff;
        int b1 = reader.read() & 0xff;
        boolean fin = (b0 & 0x80) != 0;
        int opcode = b0 & 0x0f;
        boolean masked = (b1 & 0x80) != 0;
        long length = b1 & 0x7f;
        if (length == 126) {
            length = ((reader.read() & 0xffL) << 8) | (reader.read() & 0xffL);
        } else if (length == 127) {
            length = 0;
            for (int i = 0; i < 8; i++) {
                length = (length << 8) | (reader.read() & 0xffL);
            }
        }
        byte[] mask = masked ? reader.readBytes(4) : null;
        remaining = length < 0 ? Long.MAX_VALUE : length; // a negative 64-bit length: skip until the close timeout
        check(b0, masked, length, maxFrameLength);
        byte[] payload = length == 0 ? new byte[0] : reader.readBytes((int) length);
        remaining = 0;
        WsMask.xor(payload, 0, payload, 0, payload.length, WsMask.key(mask));
        return new Frame(fin, opcode, payload);
    }

    /**
     * Refuses a frame header the RFC forbids a client (or longer than {@code maxFrameLength}) with the
     * close code to send; returns when it may be read. {@code length} is negative when its top bit was set.
     */
    static void check(int b0, boolean masked, long length, int maxFrameLength) {
        int opcode = b0 & 0x0f;
        boolean fin = (b0 & 0x80) != 0;
        if ((b0 & 0x70) != 0) {
            throw new WsCloseException("reserved bits set with no extension agreed", WsCloseCodes.PROTOCOL_ERROR);
        }
        boolean control = (opcode & 0x8) != 0;
        if (opcode != CONTINUATION && opcode != TEXT && opcode != BINARY && opcode != CLOSE && opcode != PING && opcode != PONG) {
            throw new WsCloseException("reserved opcode 0x" + Integer.toHexString(opcode), WsCloseCodes.PROTOCOL_ERROR);
        }
        if (!masked) {
            throw new WsCloseException("unmasked client frame", WsCloseCodes.PROTOCOL_ERROR);
        }
        if (length < 0) {
            throw new WsCloseException("negative frame length", WsCloseCodes.PROTOCOL_ERROR);
        }
        if (control && (!fin || length > MAX_CONTROL_PAYLOAD)) {
            throw new WsCloseException("control frames must be final and at most 125 bytes", WsCloseCodes.PROTOCOL_ERROR);
        }
        if (length > maxFrameLength) {
            throw new WsCloseException("frame exceeds " + maxFrameLength + " bytes", WsCloseCodes.TOO_BIG);
        }
    }

    /** Discards the payload of a frame refused after its header (blocks until it is read or the peer is gone). */
    void skipRestOfFrame() {
        while (remaining > 0) {
            int n = (int) Math.min(SKIP_CHUNK, remaining);
            reader.skip(n);
            remaining -= n;
        }
    }
}

package io.strand.app.ws;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;

/**
 * Owned by the event loop thread that reads its connection ({@link WsEventLoop}). Cuts client frames
 * (RFC 6455 §5.2) out of whatever bytes a non-blocking read brought, with the same refusals as
 * {@link ClientFrameReader} ({@link ClientFrameReader#check}): a frame is handed out only once it is
 * whole; a refused header is consumed whole and its payload is then discarded as it arrives, so the
 * close handshake can run behind it.
 *
 * <p>The buffer starts at {@link #INITIAL_BYTES}, grows to hold the frame being read (at most the frame
 * limit plus a header) and shrinks back once it is empty, so a connection that sent one large frame
 * does not keep a large buffer.
 */
final class FrameDecoder {
    static final int INITIAL_BYTES = 16 << 10;
    /** Longest header: 2 bytes, 8 of extended length, 4 of mask. */
    private static final int MAX_HEADER = 14;

    private final int maxFrameLength;
    /** Bytes read and not consumed yet, between position and limit (kept in read mode between calls). */
    private ByteBuffer buf = emptyBuffer(INITIAL_BYTES);
    /** Payload bytes of a refused frame still to discard. */
    private long skip;

    FrameDecoder(int maxFrameLength) {
        this.maxFrameLength = maxFrameLength;
    }

    private static ByteBuffer emptyBuffer(int capacity) {
        return ByteBuffer.allocate(capacity).order(ByteOrder.BIG_ENDIAN).limit(0);
    }

    /** Adds {@code bytes} as if read from the socket (what Helidon had read past the upgrade request). */
    void add(byte[] bytes) {
        ensureRoom(bytes.length);
        buf.compact().put(bytes).flip();
    }

    /** One non-blocking read into the buffer: bytes read, 0 when none were waiting, -1 at end of stream. */
    int readFrom(ReadableByteChannel channel) throws IOException {
        ensureRoom(1);
        buf.compact();
        try {
            return channel.read(buf);
        } finally {
            buf.flip();
        }
    }

    /** Makes room for {@code bytes} more after the unconsumed ones: moves them to the front, or grows. */
    private void ensureRoom(int bytes) {
        int unread = buf.remaining();
        if (buf.capacity() - unread >= bytes) {
            return;
        }
        ByteBuffer bigger = emptyBuffer(Math.max(buf.capacity() * 2, unread + bytes));
        bigger.clear().put(buf).flip();
        buf = bigger;
    }

    /**
     * The next whole frame, payload unmasked, or null until more bytes come. Throws the
     * {@link io.helidon.websocket.WsCloseException} of a refused header after consuming it.
     */
    ClientFrameReader.Frame next() {
        discardRefusedPayload();
        if (skip > 0 || buf.remaining() < 2) {
            return null;
        }
        int at = buf.position();
        int b0 = buf.get(at) & 0xff;
        int b1 = buf.get(at + 1) & 0xff;
        boolean masked = (b1 & 0x80) != 0;
        long length = b1 & 0x7f;
        int header = 2;
        if (length == 126) {
            header += 2;
        } else if (length == 127) {
            header += 8;
        }
        header += masked ? 4 : 0;
        if (buf.remaining() < header) {
            return null;
        }
        if (length == 126) {
            length = buf.getShort(at + 2) & 0xffffL;
        } else if (length == 127) {
            length = buf.getLong(at + 2);
        }
        try {
            ClientFrameReader.check(b0, masked, length, maxFrameLength);
        } catch (RuntimeException refused) {
            buf.position(at + header);
            skip = length < 0 ? Long.MAX_VALUE : length; // a negative length: discard until the close timeout
            discardRefusedPayload();
            throw refused;
        }
        int total = header + (int) length;
        if (buf.remaining() < total) {
            // grow as the frame's bytes come (doubling), not on its header's word: a stalled header costs no megabyte
            ensureRoom((int) Math.min(total - buf.remaining(), (long) buf.capacity()));
            return null;
        }
        int key = masked ? buf.order(ByteOrder.LITTLE_ENDIAN).getInt(at + header - 4) : 0;
        buf.order(ByteOrder.BIG_ENDIAN);
        byte[] payload = new byte[(int) length];
        buf.get(at + header, payload);
        WsMask.xor(payload, 0, payload, 0, payload.length, key);
        buf.position(at + total);
        shrinkWhenEmpty();
        return new ClientFrameReader.Frame((b0 & 0x80) != 0, b0 & 0x0f, payload);
    }

    private void discardRefusedPayload() {
        if (skip > 0) {
            int n = (int) Math.min(skip, buf.remaining());
            buf.position(buf.position() + n);
            skip -= n;
            shrinkWhenEmpty();
        }
    }

    private void shrinkWhenEmpty() {
        if (!buf.hasRemaining() && buf.capacity() > INITIAL_BYTES) {
            buf = emptyBuffer(INITIAL_BYTES);
        }
    }
}

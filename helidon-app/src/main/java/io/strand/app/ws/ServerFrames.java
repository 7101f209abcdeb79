package io.strand.app.ws;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.socket.SocketWriterException;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ServerConnectionException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Thread-safe (frames go out whole, one at a time, under {@link #sendLock}): what the server sends on
 * one WebSocket connection, as unmasked frames (RFC 6455 §5.2). Through Helidon's blocking writer
 * while a thread of its own reads the connection; through a {@link ChannelOutput}, which never
 * waits, once an event loop does ({@link #switchTo}).
 */
final class ServerFrames {
    /** Most bytes a server frame's header takes: the room {@link #textInPlace} needs before its payload. */
    static final int MAX_HEADER_BYTES = 10;

    private final ConnectionContext ctx;
    private final ReentrantLock sendLock = new ReentrantLock();
    /** Whether the last data frame sent was not final, so the next goes as a continuation (under sendLock). */
    private boolean sendContinuation;
    /** Event loop mode: the socket's output; null while the connection is read by a thread of its own. */
    private volatile ChannelOutput output;
    private volatile long lastSentNanos = System.nanoTime();

    ServerFrames(ConnectionContext ctx) {
        this.ctx = ctx;
    }

    /**
     * Turns {@code channel} non-blocking with {@code out} as its output from now on; no frame is half
     * written meanwhile. False, with nothing changed, when the channel cannot be switched.
     */
    boolean switchTo(SocketChannel channel, ChannelOutput out) {
        sendLock.lock();
        try {
            channel.configureBlocking(false);
            output = out;
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        } finally {
            sendLock.unlock();
        }
    }

    /** The event loop's output for the socket, or null in thread mode. */
    ChannelOutput output() {
        return output;
    }

    /** When a frame last went out (or was queued). */
    long lastSentNanos() {
        return lastSentNanos;
    }

    /**
     * Sends the UTF-8 JSON in {@code buf[offset, offset + length)} as one final text frame, writing
     * the frame header into the {@link #MAX_HEADER_BYTES} before {@code offset} (which the caller
     * leaves free) and handing the array to the socket as it is. A {@code String} send copied a page
     * reply (~32 KB for 100 entries of 256 B) three times on its way out: into a String, back into
     * bytes, into the frame. The caller vouches that the bytes are UTF-8.
     */
    void textInPlace(byte[] buf, int offset, int length) {
        if (offset < MAX_HEADER_BYTES) {
            throw new IllegalArgumentException("needs " + MAX_HEADER_BYTES + " free bytes before the payload, has " + offset);
        }
        sendLock.lock();
        try {
            int opcode = sendContinuation ? ClientFrameReader.CONTINUATION : ClientFrameReader.TEXT;
            sendContinuation = false;
            int start = offset - headerBytes(length);
            writeHeader(buf, start, opcode, true, length);
            write(buf, start, offset + length - start);
            lastSentNanos = System.nanoTime();
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Sends each of {@code payloads} (UTF-8 text the caller vouches for) as one final text frame, all
     * of them in one socket write: the replies a group commit completes for one socket cost one
     * {@code write} call rather than one each, and the client one wake-up.
     */
    void texts(List<byte[]> payloads) {
        int total = 0;
        for (byte[] p : payloads) {
            total += headerBytes(p.length) + p.length;
        }
        byte[] frames = new byte[total];
        sendLock.lock();
        try {
            int at = 0;
            for (byte[] p : payloads) {
                int opcode = sendContinuation ? ClientFrameReader.CONTINUATION : ClientFrameReader.TEXT;
                sendContinuation = false;
                writeHeader(frames, at, opcode, true, p.length);
                at += headerBytes(p.length);
                System.arraycopy(p, 0, frames, at, p.length);
                at += p.length;
            }
            write(frames, 0, frames.length);
            lastSentNanos = System.nanoTime();
        } finally {
            sendLock.unlock();
        }
    }

    /** A data frame ({@code TEXT} or {@code BINARY}), or a continuation when the last one was not final. */
    void data(int opcode, byte[] payload, boolean last) {
        sendLock.lock();
        try {
            int used = sendContinuation ? ClientFrameReader.CONTINUATION : opcode;
            sendContinuation = !last;
            writeFrame(used, last, payload);
            lastSentNanos = System.nanoTime();
        } finally {
            sendLock.unlock();
        }
    }

    /** A ping or a pong. */
    void control(int opcode, byte[] payload) {
        sendLock.lock();
        try {
            writeFrame(opcode, true, payload);
        } finally {
            sendLock.unlock();
        }
    }

    /** A close frame with {@code code} and as much of {@code reason} as fits (whole characters). */
    void close(int code, String reason) {
        byte[] reasonBytes = reason == null ? new byte[0] : reason.getBytes(StandardCharsets.UTF_8);
        int reasonLength = Math.min(reasonBytes.length, 123); // a control frame carries at most 125 bytes
        while (reasonLength > 0 && reasonLength < reasonBytes.length && (reasonBytes[reasonLength] & 0xC0) == 0x80) {
            reasonLength--; // do not cut a character in half
        }
        byte[] payload = new byte[2 + reasonLength];
        payload[0] = (byte) (code >> 8);
        payload[1] = (byte) code;
        System.arraycopy(reasonBytes, 0, payload, 2, reasonLength);
        control(ClientFrameReader.CLOSE, payload);
    }

    /**
     * On an event loop's socket, waits until what was written has gone to the kernel, as a blocking
     * write would have; the caller holds no lock that orders frames. At once in thread mode and on the
     * loop thread. (Writer threads, which never wait on a client, do not call it.)
     */
    void awaitDrained() {
        ChannelOutput out = output;
        if (out != null) {
            try {
                out.awaitDrained();
            } catch (UncheckedIOException e) {
                throw new ServerConnectionException("failed to write a WebSocket frame", e);
            }
        }
    }

    /** One unmasked server frame; under sendLock. */
    private void writeFrame(int opcode, boolean fin, byte[] payload) {
        int length = payload.length;
        int header = headerBytes(length);
        byte[] frame = new byte[header + length];
        writeHeader(frame, 0, opcode, fin, length);
        System.arraycopy(payload, 0, frame, header, length);
        write(frame, 0, frame.length);
    }

    /** Bytes of the header of an unmasked frame with a payload of {@code length} bytes. */
    private static int headerBytes(int length) {
        return length < 126 ? 2 : length < 1 << 16 ? 4 : 10;
    }

    /** Writes the header of an unmasked frame at {@code into[at…]}, {@link #headerBytes} long. */
    private static void writeHeader(byte[] into, int at, int opcode, boolean fin, int length) {
        into[at++] = (byte) ((fin ? 0x80 : 0) | opcode);
        if (length < 126) {
            into[at] = (byte) length;
        } else if (length < 1 << 16) {
            into[at++] = 126;
            into[at++] = (byte) (length >>> 8);
            into[at] = (byte) length;
        } else {
            into[at++] = 127;
            for (int shift = 56; shift >= 0; shift -= 8) {
                into[at++] = (byte) ((long) length >>> shift);
            }
        }
    }

    /** Writes a whole frame; under sendLock. On an event loop's socket it never waits ({@link ChannelOutput}). */
    private void write(byte[] frame, int offset, int length) {
        try {
            ChannelOutput out = output;
            if (out != null) {
                out.write(frame, offset, length);
            } else {
                ctx.dataWriter().writeNow(BufferData.create(frame, offset, length));
            }
        } catch (SocketWriterException | UncheckedIOException e) {
            throw new ServerConnectionException("failed to write a WebSocket frame", e);
        }
    }
}

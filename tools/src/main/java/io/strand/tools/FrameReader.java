package io.strand.tools;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Reads server frames (RFC 6455 §5.2; layout in {@link FrameWriter}, but unmasked) from one
 * socket and joins fragmented messages. Owned by the socket's reader thread: {@link #next} returns
 * a whole data message or one control frame, whose bytes stay valid until the next call.
 *
 * <p>Control frames may arrive between the fragments of a message and are returned as they come;
 * the message keeps collecting. Anything the RFC forbids a server (masked frames, RSV bits without
 * an extension, control frames over 125 bytes or fragmented, a continuation with no message, a new
 * message inside a fragmented one, unknown opcodes) is a {@link ProtocolError} with close code
 * 1002; a message over {@link #MAX_MESSAGE} is one with close code 1009.
 */
final class FrameReader {
    static final int CONTINUATION = 0x0;
    static final int TEXT = 0x1;
    static final int BINARY = 0x2;
    /** The largest message held in memory (a read page of 1,000 large entries fits). */
    static final int MAX_MESSAGE = 512 * 1024 * 1024;

    /** A frame the client must refuse; {@link #closeCode} is what to send in the close frame. */
    static final class ProtocolError extends IOException {
        final int closeCode;

        ProtocolError(int closeCode, String message) {
            super(message);
            this.closeCode = closeCode;
        }
    }

    private final DataInputStream in;
    private byte[] message = new byte[64 * 1024];
    private int messageLength;
    /** The opcode of the message being collected, or -1 between messages. */
    private int messageOpcode = -1;
    private final byte[] control = new byte[125];
    private int controlLength;
    private boolean lastWasControl;

    FrameReader(InputStream in) {
        this.in = new DataInputStream(in);
    }

    /**
     * Reads until a whole data message or a control frame is in; returns its opcode ({@link #TEXT},
     * {@link #BINARY}, or a control opcode from {@link FrameWriter}).
     *
     * @throws EOFException when the peer closed the connection
     */
    int next() throws IOException {
        while (true) {
            int b0 = in.read();
            if (b0 < 0) {
                throw new EOFException("connection closed by the peer");
            }
            int b1 = in.readUnsignedByte();
            boolean fin = (b0 & 0x80) != 0;
            int opcode = b0 & 0x0F;
            if ((b0 & 0x70) != 0) {
                throw new ProtocolError(1002, "reserved bits set with no extension agreed");
            }
            if ((b1 & 0x80) != 0) {
                throw new ProtocolError(1002, "masked frame from the server");
            }
            long length = b1 & 0x7F;
            if (length == 126) {
                length = in.readUnsignedShort();
            } else if (length == 127) {
                length = in.readLong();
                if (length < 0) {
                    throw new ProtocolError(1002, "negative 64-bit frame length");
                }
            }
            if (opcode >= 0x8) {
                if (opcode > FrameWriter.PONG) {
                    throw new ProtocolError(1002, "unknown control opcode " + opcode);
                }
                if (!fin || length > 125) {
                    throw new ProtocolError(1002, "control frame fragmented or over 125 bytes");
                }
                in.readFully(control, 0, (int) length);
                controlLength = (int) length;
                lastWasControl = true;
                return opcode;
            }
            if (opcode == CONTINUATION) {
                if (messageOpcode < 0) {
                    throw new ProtocolError(1002, "continuation frame with no message to continue");
                }
            } else if (opcode == TEXT || opcode == BINARY) {
                if (messageOpcode >= 0) {
                    throw new ProtocolError(1002, "new message inside a fragmented one");
                }
                messageOpcode = opcode;
                messageLength = 0;
            } else {
                throw new ProtocolError(1002, "unknown opcode " + opcode);
            }
            if (length > MAX_MESSAGE - messageLength) {
                throw new ProtocolError(1009, "message over " + MAX_MESSAGE + " bytes");
            }
            int end = messageLength + (int) length;
            if (end > message.length) {
                message = Arrays.copyOf(message, (int) Math.min(MAX_MESSAGE, Math.max(end, 2L * message.length)));
            }
            in.readFully(message, messageLength, (int) length);
            messageLength = end;
            if (fin) {
                int done = messageOpcode;
                messageOpcode = -1;
                lastWasControl = false;
                return done;
            }
        }
    }

    /**
     * True when {@code in} (from its position) holds frames up to the end of a message or a control
     * frame, so {@link #next} on those bytes does not run out of input: how a non-blocking reader
     * ({@link SocketLoop}) knows when to call it. A header {@link #next} refuses counts too (it reports it).
     */
    static boolean wholeMessageIn(ByteBuffer in) {
        int at = in.position();
        while (true) {
            if (in.limit() - at < 2) {
                return false;
            }
            int b0 = in.get(at) & 0xFF;
            int b1 = in.get(at + 1) & 0xFF;
            long length = b1 & 0x7F;
            int header = 2;
            if (length == 126) {
                header = 4;
            } else if (length == 127) {
                header = 10;
            }
            if (in.limit() - at < header) {
                return false;
            }
            if (header == 4) {
                length = in.getShort(at + 2) & 0xFFFF;
            } else if (header == 10) {
                length = in.getLong(at + 2);
            }
            if ((b1 & 0x80) != 0 || length < 0 || length > MAX_MESSAGE) {
                return true;
            }
            if (in.limit() - at - header < length) {
                return false;
            }
            if ((b0 & 0x80) != 0 || (b0 & 0x0F) >= 0x8) {
                return true;
            }
            at += header + (int) length;
        }
    }

    /** The payload of what {@link #next} returned: the message's bytes, or the control frame's. */
    byte[] payload() {
        return lastWasControl ? control : message;
    }

    int length() {
        return lastWasControl ? controlLength : messageLength;
    }

    /** The status code of a close frame just read: 1005 ("no status") when it carried none. */
    int closeCode() {
        return controlLength >= 2 ? ((control[0] & 0xFF) << 8) | (control[1] & 0xFF) : 1005;
    }
}

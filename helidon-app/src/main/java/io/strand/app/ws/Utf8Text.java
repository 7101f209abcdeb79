package io.strand.app.ws;

import io.helidon.websocket.WsCloseCodes;
import io.helidon.websocket.WsCloseException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Decodes the UTF-8 of one text message as its fragments arrive (RFC 6455 §8.1): a character may
 * be split across fragments, anything malformed — or a message that ends inside a character — is
 * refused with close code 1007 instead of being replaced by U+FFFD. Owned by the connection's
 * reading thread.
 */
final class Utf8Text {
    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    /** The start of a character cut off at the end of the previous fragment (at most 3 bytes). */
    private byte[] carry = new byte[0];

    /** Decodes one fragment; {@code first} starts a message, {@code last} ends it. */
    String decode(byte[] fragment, boolean first, boolean last) {
        if (first && last && isAscii(fragment)) {
            return new String(fragment, StandardCharsets.ISO_8859_1); // the usual request: no decoder needed
        }
        if (first) {
            decoder.reset();
            carry = new byte[0];
        }
        ByteBuffer in;
        if (carry.length == 0) {
            in = ByteBuffer.wrap(fragment);
        } else {
            in = ByteBuffer.allocate(carry.length + fragment.length).put(carry).put(fragment).flip();
        }
        CharBuffer out = CharBuffer.allocate(in.remaining() + 1);
        CoderResult result = decoder.decode(in, out, last);
        if (result.isError()) {
            throw new WsCloseException("text is not valid UTF-8", WsCloseCodes.NOT_CONSISTENT);
        }
        if (last) {
            if (decoder.flush(out).isError() || in.hasRemaining()) {
                throw new WsCloseException("text message ends inside a UTF-8 sequence", WsCloseCodes.NOT_CONSISTENT);
            }
            carry = new byte[0];
        } else {
            carry = new byte[in.remaining()];
            in.get(carry);
        }
        return out.flip().toString();
    }

    private static boolean isAscii(byte[] bytes) {
        for (byte b : bytes) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }
}

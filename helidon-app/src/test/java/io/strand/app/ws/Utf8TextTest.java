package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.helidon.websocket.WsCloseException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Utf8TextTest {
    private static final String[] PIECES = {"a", "{", "é", "ß", "€", "中", "😀", "\u0000", "\uFFFD", "z"};

    @Test
    void textSplitAnywhereAcrossFragmentsDecodesToTheSameString() {
        long seed = System.nanoTime();
        System.out.println("Utf8TextTest seed " + seed);
        Random random = new Random(seed);
        Utf8Text text = new Utf8Text();
        for (int round = 0; round < 2_000; round++) {
            StringBuilder sb = new StringBuilder();
            for (int i = random.nextInt(20); i >= 0; i--) {
                sb.append(PIECES[random.nextInt(PIECES.length)]);
            }
            byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
            StringBuilder decoded = new StringBuilder();
            int at = 0;
            boolean first = true;
            while (true) {
                int end = Math.min(bytes.length, at + random.nextInt(6));
                boolean last = end == bytes.length && random.nextBoolean() || end == bytes.length && at == end;
                decoded.append(text.decode(Arrays.copyOfRange(bytes, at, end), first, last));
                first = false;
                at = end;
                if (last) {
                    break;
                }
            }
            assertEquals(sb.toString(), decoded.toString(), "seed " + seed + " round " + round);
        }
    }

    @Test
    void malformedTextIsRefusedWith1007() {
        Utf8Text text = new Utf8Text();
        byte[][] bad = {
                {'a', (byte) 0xff, 'b'},
                {(byte) 0xc3, 0x28},                       // a broken two-byte sequence
                {(byte) 0xed, (byte) 0xa0, (byte) 0x80},   // an encoded surrogate
                {(byte) 0xc0, (byte) 0xaf},                // an overlong '/'
                {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, // beyond U+10FFFF
                {'a', (byte) 0xe2, (byte) 0x82},           // ends inside a character
        };
        for (byte[] b : bad) {
            WsCloseException e = assertThrows(WsCloseException.class, () -> text.decode(b, true, true), Arrays.toString(b));
            assertEquals(1007, e.closeCode());
        }
        text.decode(new byte[]{'a', (byte) 0xe2}, true, false); // fine so far
        WsCloseException e = assertThrows(WsCloseException.class, () -> text.decode(new byte[]{(byte) 0x82}, false, true));
        assertEquals(1007, e.closeCode());
        assertEquals("é", text.decode(new byte[]{(byte) 0xc3, (byte) 0xa9}, true, true), "a new message starts clean");
    }
}

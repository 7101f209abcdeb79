package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

class WsMaskTest {
    @Test
    void masksEachByteWithTheKeyByteAtItsOffsetModFour() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int length = 0; length <= 70; length++) {
            byte[] wireKey = new byte[4];
            random.nextBytes(wireKey);
            byte[] payload = new byte[length + 5];
            random.nextBytes(payload);
            byte[] expected = payload.clone();
            for (int i = 0; i < length; i++) {
                expected[3 + i] ^= wireKey[i & 3]; // RFC 6455 §5.3, one byte at a time
            }
            byte[] inPlace = payload.clone();
            WsMask.xor(inPlace, 3, inPlace, 3, length, WsMask.key(wireKey));
            assertArrayEquals(expected, inPlace, "seed " + seed + ", length " + length);

            byte[] copied = payload.clone();
            WsMask.xor(payload, 3, copied, 3, length, WsMask.key(wireKey));
            assertArrayEquals(expected, copied, "seed " + seed + ", length " + length);
        }
    }
}

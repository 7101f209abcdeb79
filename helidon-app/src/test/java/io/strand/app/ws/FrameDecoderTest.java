package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.websocket.WsCloseException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link FrameDecoder}: frames cut out of reads of any size, with {@link ClientFrameReader}'s refusals. */
class FrameDecoderTest {
    private static final int LIMIT = 1 << 20;

    @Test
    void framesSplitAtEveryPossibleReadBoundaryShouldComeOutWholeAndInOrder() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<byte[]> payloads = List.of(new byte[0], "hello".getBytes(StandardCharsets.UTF_8), bytes(random, 125),
                bytes(random, 126), bytes(random, 65_535), bytes(random, 65_536), bytes(random, 300_000));
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        for (byte[] p : payloads) {
            wire.write(masked(0x81, p, random.nextInt()));
        }
        for (int chunk : new int[]{1, 2, 3, 7, 13, 4096, 70_000, Integer.MAX_VALUE}) {
            FrameDecoder decoder = new FrameDecoder(LIMIT);
            Chunks in = new Chunks(wire.toByteArray(), chunk);
            List<byte[]> got = new ArrayList<>();
            while (got.size() < payloads.size()) {
                assertTrue(decoder.readFrom(in) >= 0, "seed " + seed + ", chunk " + chunk + ": ran out after " + got.size());
                ClientFrameReader.Frame f;
                while ((f = decoder.next()) != null) {
                    assertEquals(ClientFrameReader.TEXT, f.opcode());
                    assertTrue(f.fin());
                    got.add(f.payload());
                }
            }
            for (int i = 0; i < payloads.size(); i++) {
                assertArrayEquals(payloads.get(i), got.get(i), "seed " + seed + ", chunk " + chunk + ", frame " + i);
            }
            assertEquals(-1, decoder.readFrom(in));
        }
    }

    @Test
    void anOversizeFrameShouldBeRefusedWith1009AndItsPayloadSkippedUpToTheNextFrame() throws Exception {
        FrameDecoder decoder = new FrameDecoder(1000);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.write(masked(0x81, new byte[5000], 7));
        wire.write(masked(0x88, new byte[]{0x03, (byte) 0xE8}, 9)); // the peer's close, after the refused frame
        Chunks in = new Chunks(wire.toByteArray(), 1500);
        decoder.readFrom(in);
        WsCloseException refused = assertThrows(WsCloseException.class, decoder::next);
        assertEquals(1009, refused.closeCode());
        ClientFrameReader.Frame close = null;
        while (close == null && decoder.readFrom(in) >= 0) {
            close = decoder.next();
        }
        assertEquals(ClientFrameReader.CLOSE, close.opcode(), "the refused payload was skipped, not read as frames");
    }

    @Test
    void headersTheRfcForbidsShouldBeRefusedWithTheirCloseCode() throws Exception {
        assertEquals(1002, refusal(masked(0xC1, new byte[1], 1)), "a reserved bit");
        assertEquals(1002, refusal(masked(0x83, new byte[1], 1)), "a reserved opcode");
        assertEquals(1002, refusal(new byte[]{(byte) 0x81, 0x01, 'x'}), "an unmasked frame");
        assertEquals(1002, refusal(masked(0x09, new byte[1], 1)), "a fragmented control frame");
        assertEquals(1002, refusal(masked(0x89, new byte[126], 1)), "a control frame over 125 bytes");
        byte[] negative = {(byte) 0x81, (byte) 0xFF, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
        assertEquals(1002, refusal(negative), "a 64-bit length with its top bit set");
    }

    @Test
    void bytesHelidonReadPastTheUpgradeShouldBeDecodedFirst() throws Exception {
        byte[] first = masked(0x81, "early".getBytes(StandardCharsets.UTF_8), 3);
        byte[] second = masked(0x81, "later".getBytes(StandardCharsets.UTF_8), 4);
        FrameDecoder decoder = new FrameDecoder(LIMIT);
        decoder.add(java.util.Arrays.copyOf(first, 4)); // part of a frame came with the upgrade
        assertNull(decoder.next());
        byte[] rest = new byte[first.length - 4 + second.length];
        System.arraycopy(first, 4, rest, 0, first.length - 4);
        System.arraycopy(second, 0, rest, first.length - 4, second.length);
        decoder.readFrom(new Chunks(rest, 3));
        decoder.readFrom(new Chunks(java.util.Arrays.copyOfRange(rest, 3, rest.length), Integer.MAX_VALUE));
        assertEquals("early", new String(decoder.next().payload(), StandardCharsets.UTF_8));
        assertEquals("later", new String(decoder.next().payload(), StandardCharsets.UTF_8));
        assertNull(decoder.next());
    }

    private static int refusal(byte[] wire) throws Exception {
        FrameDecoder decoder = new FrameDecoder(LIMIT);
        decoder.readFrom(new Chunks(wire, Integer.MAX_VALUE));
        return assertThrows(WsCloseException.class, decoder::next).closeCode();
    }

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** A client frame: first byte {@code b0}, masked with {@code key}. */
    private static byte[] masked(int b0, byte[] payload, int key) {
        ByteBuffer b = ByteBuffer.allocate(14 + payload.length);
        b.put((byte) b0);
        if (payload.length < 126) {
            b.put((byte) (0x80 | payload.length));
        } else if (payload.length < 65_536) {
            b.put((byte) (0x80 | 126)).putShort((short) payload.length);
        } else {
            b.put((byte) (0x80 | 127)).putLong(payload.length);
        }
        byte[] k = {(byte) (key >>> 24), (byte) (key >>> 16), (byte) (key >>> 8), (byte) key};
        b.put(k);
        for (int i = 0; i < payload.length; i++) {
            b.put((byte) (payload[i] ^ k[i & 3]));
        }
        return java.util.Arrays.copyOf(b.array(), b.position());
    }

    /** A channel that gives {@code wire} at most {@code chunk} bytes per read, then the end of stream. */
    private static final class Chunks implements ReadableByteChannel {
        private final byte[] wire;
        private final int chunk;
        private int at;

        Chunks(byte[] wire, int chunk) {
            this.wire = wire;
            this.chunk = chunk;
        }

        @Override
        public int read(ByteBuffer dst) {
            if (at == wire.length) {
                return -1;
            }
            int n = Math.min(Math.min(chunk, dst.remaining()), wire.length - at);
            dst.put(wire, at, n);
            at += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }
}

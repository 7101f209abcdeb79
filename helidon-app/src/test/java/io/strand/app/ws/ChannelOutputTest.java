package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ChannelOutput} on a real loopback socket read by a real {@link WsEventLoop}: writes never
 * wait, what the kernel does not take goes out in order as the peer reads, a pacing sender waits until
 * it has, and a close releases it with an error.
 */
@Timeout(60)
class ChannelOutputTest {
    private static final int BYTES = 8 << 20; // far past loopback's socket buffers
    private WsEventLoop loop;
    private ServerSocketChannel listener;
    private SocketChannel serverSide;
    private SocketChannel peer;
    private ChannelOutput out;

    @BeforeEach
    void connect() throws Exception {
        loop = new WsEventLoop("test-loop", false);
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        peer = SocketChannel.open(listener.getLocalAddress());
        peer.setOption(StandardSocketOptions.SO_RCVBUF, 16 << 10);
        serverSide = listener.accept();
        serverSide.setOption(StandardSocketOptions.SO_SNDBUF, 16 << 10);
        serverSide.configureBlocking(false);
        out = new ChannelOutput(serverSide, loop);
        CompletableFuture<SelectionKey> registered = new CompletableFuture<>();
        loop.register(serverSide, new WsEventLoop.Handler() {
            @Override
            public void readable() {
            }

            @Override
            public void writable() {
                out.flush();
            }

            @Override
            public void abandoned() {
                out.markClosed();
            }
        }, registered::complete);
        out.attach(registered.get(10, TimeUnit.SECONDS));
    }

    @AfterEach
    void close() throws Exception {
        peer.close();
        serverSide.close();
        listener.close();
        loop.stop();
    }

    @Test
    void writesShouldNotWaitAndEverythingShouldArriveInOrderOnceThePeerReads() throws Exception {
        long seed = System.nanoTime();
        byte[] first = random(seed, BYTES);
        byte[] second = random(seed + 1, 1000);
        out.write(first, 0, first.length); // returns with most of it queued: nobody reads yet
        out.write(second, 0, second.length);
        assertTrue(out.backedUp(), "seed " + seed + ": more than the pause threshold is queued");
        byte[] got = readFully(first.length + second.length);
        byte[] expected = new byte[first.length + second.length];
        System.arraycopy(first, 0, expected, 0, first.length);
        System.arraycopy(second, 0, expected, first.length, second.length);
        assertArrayEquals(expected, got, "seed " + seed);
        out.awaitDrained(); // all of it has gone: returns at once
    }

    @Test
    void aPacingSenderShouldWaitUntilThePeerHasReadAndACloseShouldReleaseItWithAnError() throws Exception {
        byte[] big = random(7, BYTES);
        CompletableFuture<Void> paced = CompletableFuture.runAsync(() -> {
            out.write(big, 0, big.length);
            out.awaitDrained();
        });
        byte[] got = readFully(big.length); // the sender can only finish once this has read enough
        paced.get(10, TimeUnit.SECONDS);
        assertArrayEquals(big, got);

        out.write(big, 0, big.length); // queued again, and nobody reads now
        CompletableFuture<Throwable> released = CompletableFuture.supplyAsync(() -> {
            try {
                out.awaitDrained();
                return null;
            } catch (UncheckedIOException e) {
                return e;
            }
        });
        out.markClosed();
        assertTrue(released.get(10, TimeUnit.SECONDS) instanceof UncheckedIOException, "a closed socket fails the wait");
        assertThrows(UncheckedIOException.class, () -> out.write(new byte[1], 0, 1), "and every later write");
    }

    private byte[] readFully(int n) throws Exception {
        ByteBuffer into = ByteBuffer.allocate(n);
        while (into.hasRemaining()) {
            assertTrue(peer.read(into) >= 0, "the peer's stream ended early");
        }
        assertEquals(n, into.position());
        return into.array();
    }

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }
}

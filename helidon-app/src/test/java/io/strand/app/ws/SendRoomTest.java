package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.common.socket.PeerInfo;
import io.helidon.common.socket.SocketContext;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SendRoomTest {

    @Test
    void aSocketWhoseClientStopsReadingShouldHaveNoRoomUntilTheClientReadsAgain() throws IOException {
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel client = SocketChannel.open(listener.getLocalAddress());
                 SocketChannel accepted = listener.accept()) {
                SendRoom room = SendRoom.of(new HelidonLikeContext(accepted));
                assertTrue(room.hasRoom(), "a fresh socket has room");

                accepted.configureBlocking(false);
                long written = 0;
                ByteBuffer chunk = ByteBuffer.allocate(64 << 10);
                int n;
                do {
                    chunk.clear();
                    n = accepted.write(chunk);
                    written += n;
                } while (n > 0);
                assertFalse(room.hasRoom(), "the client read none of " + written + " bytes: a write would wait");

                ByteBuffer sink = ByteBuffer.allocate(1 << 20);
                for (long read = 0; read < written; ) {
                    sink.clear();
                    read += client.read(sink);
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!room.hasRoom() && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // the kernel frees the queue as the acks come back
                }
                assertTrue(room.hasRoom(), "the client read everything: room again");
            }
        }
    }

    @Test
    void aContextWithoutAChannelShouldNeverClaimRoom() {
        assertSame(SendRoom.NONE, SendRoom.of(new NoChannelContext()));
        assertFalse(SendRoom.NONE.hasRoom());
    }

    /** Holds its channel in a private field, as Helidon's connection handler does. */
    private static final class HelidonLikeContext extends NoChannelContext {
        @SuppressWarnings({"unused", "FieldCanBeLocal"})
        private final SocketChannel socket;

        HelidonLikeContext(SocketChannel socket) {
            this.socket = socket;
        }
    }

    private static class NoChannelContext implements SocketContext {
        @Override
        public PeerInfo remotePeer() {
            throw new UnsupportedOperationException();
        }

        @Override
        public PeerInfo localPeer() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isSecure() {
            return false;
        }

        @Override
        public String socketId() {
            return "test";
        }

        @Override
        public String childSocketId() {
            return "test";
        }
    }
}

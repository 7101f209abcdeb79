package io.strand.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One thread that reads every socket of a many-connection load run from one selector, as
 * redis-benchmark's event loop does. With a reader thread per connection, each reply woke its
 * own thread; here a burst of replies (one group commit acknowledges many connections at once)
 * costs one wake-up, which leaves the server the CPU the client no longer spends switching
 * threads on a 2-core box. Reply callbacks run on this thread.
 */
final class SocketLoop implements AutoCloseable {
    private final Selector selector;
    private final ConcurrentLinkedQueue<StrandSocket> joining = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean open = true;

    SocketLoop() {
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        thread = Thread.ofPlatform().daemon().name("strand-socket-loop").start(this::run);
    }

    /** Starts reading {@code socket}'s non-blocking channel on the loop thread. */
    void add(StrandSocket socket) {
        joining.add(socket);
        selector.wakeup();
    }

    private void run() {
        try {
            while (open) {
                selector.select();
                StrandSocket s;
                while ((s = joining.poll()) != null) {
                    try {
                        s.channel().register(selector, SelectionKey.OP_READ, s);
                    } catch (java.nio.channels.ClosedChannelException e) {
                        // closed before it joined: readReady below reports it
                    }
                    s.readReady(); // bytes that came before the channel was registered
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    StrandSocket socket = (StrandSocket) key.attachment();
                    if (!socket.readReady()) {
                        key.cancel();
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | RuntimeException e) {
            if (open) {
                throw new IllegalStateException("socket loop failed", e);
            }
        }
    }

    /** Stops the loop; close the sockets first. */
    @Override
    public void close() {
        open = false;
        selector.wakeup();
        try {
            thread.join(5_000);
            selector.close();
        } catch (IOException ignored) {
            // closing anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

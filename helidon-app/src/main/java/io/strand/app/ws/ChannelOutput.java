package io.strand.app.ws;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Thread-safe (under {@link #lock}, never held while waiting): the bytes going out on one
 * non-blocking socket that an event loop reads ({@link WsEventLoop}). A write goes straight to the
 * socket while nothing is queued; what the kernel does not take is queued, the loop is asked for
 * {@code OP_WRITE} and writes it as the socket drains.
 *
 * <p>No write waits, so no lock that orders frames (the connection's send lock, a {@link SocketWriter}'s)
 * is ever held while the socket is full, which would stop the loop thread on it. A sender that paces
 * itself by the socket (a subscription, a reply thread) calls {@link #awaitDrained} after letting go
 * of those locks, as a blocking write would have waited; the event loop and writer threads never
 * wait. The loop stops reading a socket whose queue passes {@link #PAUSE_READING_BYTES}, so a client
 * that sends requests without reading the replies is held back, not buffered without end.
 */
final class ChannelOutput {
    /** Queued bytes past which the loop stops reading the socket until they drain. */
    static final int PAUSE_READING_BYTES = 1 << 20;
    private final SocketChannel channel;
    private final WsEventLoop loop;
    /** Null until the loop has registered the socket: bytes queued before then are asked for at {@link #attach}. */
    private SelectionKey key;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition drained = lock.newCondition();
    private final ArrayDeque<ByteBuffer> queued = new ArrayDeque<>();
    /** Written under the lock; read without it by the loop before each frame ({@link #backedUp}). */
    private volatile long queuedBytes;
    private boolean closed;

    ChannelOutput(SocketChannel channel, WsEventLoop loop) {
        this.channel = channel;
        this.loop = loop;
    }

    /** The loop registered the socket under {@code key}: from now on, queued bytes go out on {@code OP_WRITE}. */
    void attach(SelectionKey key) {
        lock.lock();
        try {
            this.key = key;
            if (!queued.isEmpty()) {
                loop.wantWrite(key);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes {@code bytes[offset, offset + length)} after what is queued, without waiting: what the
     * kernel does not take now is queued (copied). Throws {@link UncheckedIOException} once the socket
     * failed or closed.
     */
    void write(byte[] bytes, int offset, int length) {
        lock.lock();
        try {
            failIfClosed();
            ByteBuffer rest = ByteBuffer.wrap(bytes, offset, length);
            if (queued.isEmpty()) {
                writeSome(rest);
                if (!rest.hasRemaining()) {
                    return;
                }
            }
            ByteBuffer copy = ByteBuffer.allocate(rest.remaining()).put(rest).flip(); // the caller may reuse its array
            queued.add(copy);
            queuedBytes += copy.remaining();
            loop.wantWrite(key);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A sender that paces itself by the socket, holding no lock the loop needs: returns once what is
     * queued has gone to the kernel, at once on the loop thread. Throws {@link UncheckedIOException}
     * when the socket closes first.
     */
    void awaitDrained() {
        if (loop.inLoop()) {
            return;
        }
        lock.lock();
        try {
            while (!queued.isEmpty() && !closed) {
                drained.awaitUninterruptibly(); // a close of the socket ends it (markClosed)
            }
            failIfClosed();
        } finally {
            lock.unlock();
        }
    }

    /** The loop thread, on {@code OP_WRITE}: writes what is queued; true when all of it went out. */
    boolean flush() {
        lock.lock();
        try {
            while (!queued.isEmpty() && !closed) {
                ByteBuffer head = queued.peek();
                int before = head.remaining();
                writeSome(head);
                queuedBytes -= before - head.remaining();
                if (head.hasRemaining()) {
                    return false;
                }
                queued.poll();
            }
            drained.signalAll();
            if (key != null && key.isValid()) {
                try {
                    key.interestOpsAnd(~SelectionKey.OP_WRITE); // under the lock: a write queued after this asks again
                } catch (CancelledKeyException closedMeanwhile) {
                    // the connection ended: nothing more goes out
                }
            }
            return true;
        } catch (UncheckedIOException e) {
            return true; // closed: nothing more will go out, and the waiters were told
        } finally {
            lock.unlock();
        }
    }

    /** True when the loop should stop reading until the queue drains. */
    boolean backedUp() {
        return queuedBytes > PAUSE_READING_BYTES;
    }

    /** The socket is gone or closing: queued bytes are dropped and waiting senders fail. */
    void markClosed() {
        lock.lock();
        try {
            closed = true;
            queued.clear();
            queuedBytes = 0;
            drained.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Writes what the kernel takes now; under the lock. */
    private void writeSome(ByteBuffer b) {
        try {
            while (b.hasRemaining() && channel.write(b) > 0) {
                // the kernel took some: offer the rest
            }
        } catch (IOException e) {
            closed = true;
            queued.clear();
            queuedBytes = 0;
            drained.signalAll();
            throw new UncheckedIOException(e);
        }
    }

    private void failIfClosed() {
        if (closed) {
            throw new UncheckedIOException(new IOException("the WebSocket connection is closed"));
        }
    }
}

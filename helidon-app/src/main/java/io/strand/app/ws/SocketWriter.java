package io.strand.app.ws;

import io.helidon.websocket.WsSession;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The only way anything is sent on one socket: replies and pushed frames from many virtual
 * threads go out one whole frame at a time. A send blocks while the socket does not drain,
 * which is what paces replay. After the first failure the socket counts as closed.
 *
 * <p>Replies completed on a writer thread go through {@link #sendLater}: queued, then sent in
 * order by one virtual thread per burst, so a writer never waits on a client that stops reading
 * and a group's replies to one socket cost one hand-off, not one each.
 */
final class SocketWriter {
    private final WsSession session;
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentLinkedQueue<String> outbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    private volatile boolean open = true;

    SocketWriter(WsSession session) {
        this.session = session;
    }

    boolean send(String frame) {
        if (!open) {
            return false;
        }
        lock.lock();
        try {
            if (!open) {
                return false;
            }
            session.send(frame, true);
            return true;
        } catch (RuntimeException e) {
            open = false;
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Queues {@code frame} for sending in order; never blocks. */
    void sendLater(String frame) {
        outbox.add(frame);
        if (draining.compareAndSet(false, true)) {
            Thread.ofVirtual().name("socket-replies").start(this::drain);
        }
    }

    private void drain() {
        do {
            String frame;
            while ((frame = outbox.poll()) != null) {
                send(frame); // after a failure send() drops the rest
            }
            draining.set(false);
        } while (!outbox.isEmpty() && draining.compareAndSet(false, true));
    }

    void close(int code, String reason) {
        lock.lock();
        try {
            if (open) {
                open = false;
                session.close(code, reason);
            }
        } catch (RuntimeException ignored) {
            // already gone
        } finally {
            lock.unlock();
        }
    }

    void markClosed() {
        open = false;
    }

    boolean isOpen() {
        return open;
    }
}

package io.strand.app.ws;

import io.helidon.websocket.WsSession;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The only way anything is sent on one socket: replies and pushed frames from many virtual
 * threads go out one whole frame at a time. A send blocks while the socket does not drain,
 * which is what paces replay. After the first failure the socket counts as closed.
 */
final class SocketWriter {
    private final WsSession session;
    private final ReentrantLock lock = new ReentrantLock();
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

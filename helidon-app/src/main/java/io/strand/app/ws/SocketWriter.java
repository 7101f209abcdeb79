package io.strand.app.ws;

import io.helidon.websocket.WsSession;
import io.strand.app.EntryJson;
import io.strand.core.Writers;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The only way anything is sent on one socket: replies and pushed frames from many virtual
 * threads go out one whole frame at a time. A send blocks while the socket does not drain,
 * which is what paces replay. After the first failure the socket counts as closed.
 *
 * <p>Replies completed on a writer thread go through {@link #sendLater}: queued, then sent in
 * order by the socket's one reply thread, so a writer never waits on a client that stops reading
 * and a group's replies to one socket cost one wake-up and one socket write, not one each. The reply thread parks
 * between bursts rather than ending: starting a virtual thread per burst cost a writer more than
 * waking a parked one.
 *
 * <p>Except for a lone request: when the writer's group had a single turn and nothing waits for that
 * writer ({@link Writers#claimInlineFollowUp}), its small reply to a socket whose queue is empty and
 * whose kernel send buffer has room ({@link SendRoom}) is sent by the writer thread itself, which
 * skips the hand-off to the reply thread.
 */
final class SocketWriter {
    /** Most payload bytes one burst of queued replies puts in one socket write (a bigger reply goes alone). */
    static final int BURST_BYTES = 64 << 10;
    /**
     * Longest reply (in chars, so at most 1.5 KiB of UTF-8) a writer thread sends itself: a socket
     * {@link SendRoom} calls writable has at least a third of its send buffer free (4 KiB at the
     * kernel's smallest buffer), so the write is taken whole.
     */
    static final int INLINE_CHARS = 512;
    private final WsSession session;
    /** True when a small write to the socket cannot wait ({@link SendRoom#hasRoom}). */
    private final BooleanSupplier room;
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentLinkedQueue<String> outbox = new ConcurrentLinkedQueue<>();
    /** True while the reply thread is sending (or about to); false once it may park. */
    private final AtomicBoolean draining = new AtomicBoolean();
    private final Thread replies = Thread.ofVirtual().name("socket-replies").unstarted(this::sendReplies);
    private volatile boolean open = true;

    SocketWriter(WsSession session) {
        this(session, (session instanceof StrictWsConnection strict ? SendRoom.of(strict.socketContext()) : SendRoom.NONE)::hasRoom);
    }

    SocketWriter(WsSession session, BooleanSupplier room) {
        this.session = session;
        this.room = room;
    }

    boolean send(String frame) {
        return sendIf(() -> true, frame);
    }

    /**
     * Sends {@code frame} if {@code wanted} still holds once no other frame is being sent; false when
     * it does not or the socket is closed. With {@link #locked} a sender can be turned off so that
     * nothing of it follows a frame sent afterwards (a subscription after its unsubscribe reply).
     */
    boolean sendIf(BooleanSupplier wanted, String frame) {
        return sendLocked(true, wanted, () -> session.send(frame, true));
    }

    /**
     * As {@link #sendIf}, for the UTF-8 JSON in {@code buf[offset, offset + length)} with
     * {@link EntryJson#HEADER_ROOM} free bytes before it (an {@link EntryJson}):
     * the frame header is written there and the array goes to the socket without a copy
     * ({@link StrictWsConnection#sendText}).
     */
    boolean sendUtf8If(BooleanSupplier wanted, byte[] buf, int offset, int length) {
        return sendLocked(true, wanted, () -> {
            if (session instanceof StrictWsConnection strict) {
                strict.sendText(buf, offset, length);
            } else {
                session.send(new String(buf, offset, length, StandardCharsets.UTF_8), true);
            }
        });
    }

    /**
     * The one send path: under the lock, if open and {@code wanted}; a failed send closes this writer.
     * Without {@code waitForLock} it sends only if no other frame is being sent. True when sent.
     */
    private boolean sendLocked(boolean waitForLock, BooleanSupplier wanted, Runnable send) {
        if (!open) {
            return false;
        }
        if (waitForLock) {
            lock.lock();
        } else if (!lock.tryLock()) {
            return false;
        }
        try {
            if (!open || !wanted.getAsBoolean()) {
                return false;
            }
            send.run();
            return true;
        } catch (RuntimeException e) {
            open = false;
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Sends the JSON {@code json} holds (see {@link #sendUtf8If}). */
    boolean send(EntryJson json) {
        return sendUtf8If(() -> true, json.array(), json.offset(), json.length());
    }

    /** Runs {@code action} while no frame is being sent: a {@link #sendIf} after it sees what it changed. */
    void locked(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    /** Queues {@code frame} for sending in order, or sends it right away if that cannot block; never blocks. */
    void sendLater(String frame) {
        if (!open) {
            return; // the reply thread has ended or will: nobody would drain it
        }
        // inline: only a small reply, when nothing is queued or being sent and the socket has room
        if (frame.length() <= INLINE_CHARS && outbox.isEmpty() && !draining.get() && Writers.claimInlineFollowUp()
                && sendLocked(false, room, () -> session.send(frame, true))) {
            return;
        }
        if (!open) {
            return; // the inline send just failed, or the socket closed meanwhile
        }
        outbox.add(frame);
        if (draining.compareAndSet(false, true)) {
            if (replies.getState() == Thread.State.NEW) {
                startReplies();
            } else {
                LockSupport.unpark(replies);
            }
        }
    }

    private synchronized void startReplies() {
        if (replies.getState() == Thread.State.NEW) {
            replies.start();
        } else {
            LockSupport.unpark(replies);
        }
    }

    /**
     * The reply thread: sends what is queued, parks until more comes, ends once the socket is closed.
     * What is queued when it wakes goes out in bursts of up to {@link #BURST_BYTES}, each one socket
     * write ({@link StrictWsConnection#sendTexts}).
     */
    private void sendReplies() {
        List<byte[]> burst = new ArrayList<>();
        while (true) {
            String frame;
            int bytes = 0;
            while ((frame = outbox.poll()) != null) {
                byte[] utf8 = frame.getBytes(StandardCharsets.UTF_8);
                if (!burst.isEmpty() && bytes + utf8.length > BURST_BYTES) {
                    sendBurst(burst); // after a failure sends are dropped
                    bytes = 0;
                }
                burst.add(utf8);
                bytes += utf8.length;
            }
            if (!burst.isEmpty()) {
                sendBurst(burst);
            }
            draining.set(false);
            if (!outbox.isEmpty() && draining.compareAndSet(false, true)) {
                continue;
            }
            if (!open) {
                outbox.clear();
                return;
            }
            LockSupport.park(this); // a sendLater (or a close) that came after draining.set(false) unparks us
        }
    }

    private void sendBurst(List<byte[]> burst) {
        sendLocked(true, () -> true, () -> {
            if (session instanceof StrictWsConnection strict) {
                strict.sendTexts(burst);
            } else {
                for (byte[] utf8 : burst) {
                    session.send(new String(utf8, StandardCharsets.UTF_8), true);
                }
            }
        });
        burst.clear();
    }

    void close(int code, String reason) {
        lock.lock();
        try {
            if (open) {
                open = false;
                session.close(code, reason);
            }
            LockSupport.unpark(replies);
        } catch (RuntimeException ignored) {
            // already gone
        } finally {
            lock.unlock();
        }
    }

    void markClosed() {
        open = false;
        LockSupport.unpark(replies);
    }

    boolean isOpen() {
        return open;
    }
}

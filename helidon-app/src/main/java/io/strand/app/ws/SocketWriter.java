package io.strand.app.ws;

import io.helidon.websocket.WsSession;
import io.strand.app.EntryJson;
import io.strand.core.Writers;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The only way anything is sent on one socket: replies and pushed frames from many virtual
 * threads go out one whole frame at a time. A send blocks while the socket does not drain,
 * which is what paces replay (on an event loop's socket it waits after the frame is queued, holding
 * no lock, and on the loop thread itself not at all). After the first failure the socket counts as closed.
 *
 * <p>Replies completed on a writer thread go through {@link #sendLater}: queued, then sent in order
 * by whoever holds the socket's queue ({@link #holder}) in one socket write per burst, so a writer
 * never waits on a client that stops reading and a group's replies to one socket cost one socket
 * write, not one each.
 * <ul>
 *   <li>The writer thread that completes the group holds it when the queue was idle: at the group's
 *       end ({@link Writers#flushAtGroupEnd}) it sends the queue itself, if that is at most
 *       {@link #WRITER_BURST_BYTES} and the kernel send buffer has room ({@link SendRoom}; on an event
 *       loop's socket always, since its writes never wait), which
 *       skips waking another thread.</li>
 *   <li>Otherwise the socket's reply thread holds it: a parked virtual thread, woken per burst
 *       (starting a virtual thread per burst cost a writer more than waking a parked one).</li>
 * </ul>
 */
final class SocketWriter {
    /** Most payload bytes one burst of queued replies puts in one socket write (a bigger reply goes alone). */
    static final int BURST_BYTES = 64 << 10;
    /**
     * Most payload bytes of queued replies a writer thread sends itself in its one write. A socket
     * {@link SendRoom} calls writable has at least a third of its send buffer free; Linux starts a
     * TCP send buffer at {@code tcp_wmem}'s default (16 KiB) and grows it, so that is over 5 KiB and
     * the write is taken whole without waiting. (Only under the kernel's TCP memory pressure can a
     * buffer shrink toward {@code tcp_wmem}'s 4 KiB minimum; a writer could then wait on that socket.)
     */
    static final int WRITER_BURST_BYTES = 4 << 10;
    /** {@link #holder}: nobody sends the queue; whoever queues a reply takes it. */
    private static final int IDLE = 0;
    /** {@link #holder}: the reply thread sends the queue (it is woken, or sending). */
    private static final int REPLY_THREAD = 1;
    /** {@link #holder}: a writer thread sends the queue at its group's end. */
    private static final int WRITER = 2;
    private final WsSession session;
    /** True when a small write to the socket cannot wait ({@link SendRoom#hasRoom}). */
    private final BooleanSupplier room;
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentLinkedQueue<String> outbox = new ConcurrentLinkedQueue<>();
    /**
     * Who sends what {@link #outbox} holds: {@link #IDLE}, {@link #REPLY_THREAD} or {@link #WRITER}.
     * Only the holder polls the queue; it hands back to {@code IDLE} and then looks at the queue
     * again, so a reply queued meanwhile is never left behind.
     */
    private final AtomicInteger holder = new AtomicInteger(IDLE);
    /** Replies taken from {@link #outbox} and not sent yet, in order; only the queue's holder touches it. */
    private final List<byte[]> burst = new ArrayList<>();
    private final Thread replies = Thread.ofVirtual().name("socket-replies").unstarted(this::sendReplies);
    private volatile boolean open = true;

    SocketWriter(WsSession session) {
        this(session, roomOf(session));
    }

    /**
     * Whether a writer may send now: always on an event loop's socket, whose writes never wait
     * ({@link ChannelOutput}: no {@code poll(2)} per reply); else when {@link SendRoom} sees room.
     */
    private static BooleanSupplier roomOf(WsSession session) {
        if (!(session instanceof StrictWsConnection strict)) {
            return SendRoom.NONE::hasRoom;
        }
        SendRoom probe = SendRoom.of(strict.socketContext());
        return () -> strict.writesNeverWait() || probe.hasRoom();
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
     * Without {@code waitForLock} (a writer thread) it sends only if no other frame is being sent, and
     * never waits for the socket to drain. True when sent.
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
        } catch (RuntimeException e) {
            open = false;
            return false;
        } finally {
            lock.unlock();
        }
        if (waitForLock && session instanceof StrictWsConnection strict) {
            try {
                strict.awaitDrained(); // an event loop's socket: paced as a blocking write, with no lock held
            } catch (RuntimeException e) {
                open = false;
                return false;
            }
        }
        return true;
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

    /** Queues {@code frame} for sending in order; never blocks. */
    void sendLater(String frame) {
        if (!open) {
            return; // the reply thread has ended or will: nobody would drain it
        }
        outbox.add(frame);
        if (holder.compareAndSet(IDLE, WRITER)) { // else the holder looks at the queue again before it lets go
            if (!Writers.flushAtGroupEnd(this::flushOnWriter)) {
                handToReplyThread();
            }
        }
    }

    /**
     * A writer thread at its group's end, holding the queue: sends it in one write when it comes to at
     * most {@link #WRITER_BURST_BYTES} and the socket has room; else the reply thread sends it.
     */
    private void flushOnWriter() {
        boolean sent = false;
        try {
            int bytes = 0;
            String frame;
            while (bytes <= WRITER_BURST_BYTES && (frame = outbox.poll()) != null) {
                byte[] utf8 = frame.getBytes(StandardCharsets.UTF_8);
                burst.add(utf8);
                bytes += utf8.length;
            }
            sent = bytes <= WRITER_BURST_BYTES && sendLocked(false, room, this::writeBurst);
        } finally {
            if (!sent) {
                handToReplyThread(); // with what was taken (the reply thread sends that first), also after an Error here
            }
        }
        if (sent) {
            burst.clear();
            if (letGoOfQueue()) {
                wakeReplies(); // queued by another thread after the poll above
            }
        }
    }

    /**
     * The holder, done: lets go of the queue, then takes it back for the reply thread when a reply was
     * queued meanwhile (its sender saw the queue held and left it to us); true when it did.
     */
    private boolean letGoOfQueue() {
        holder.set(IDLE);
        return !outbox.isEmpty() && holder.compareAndSet(IDLE, REPLY_THREAD);
    }

    private void handToReplyThread() {
        holder.set(REPLY_THREAD);
        wakeReplies();
    }

    private void wakeReplies() {
        if (replies.getState() == Thread.State.NEW) {
            startReplies();
        } else {
            LockSupport.unpark(replies);
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
     * The reply thread: while it holds the queue, sends what is in it, then parks until handed the
     * queue again; ends once the socket is closed. What is queued when it wakes goes out in bursts of
     * up to {@link #BURST_BYTES}, each one socket write ({@link StrictWsConnection#sendTexts}).
     */
    private void sendReplies() {
        while (true) {
            if (holder.get() == REPLY_THREAD) {
                int bytes = 0;
                for (byte[] taken : burst) {
                    bytes += taken.length; // left by a writer that could not send them
                }
                String frame;
                while ((frame = outbox.poll()) != null) {
                    byte[] utf8 = frame.getBytes(StandardCharsets.UTF_8);
                    if (!burst.isEmpty() && bytes + utf8.length > BURST_BYTES) {
                        sendBurst(); // after a failure sends are dropped
                        bytes = 0;
                    }
                    burst.add(utf8);
                    bytes += utf8.length;
                }
                if (!burst.isEmpty()) {
                    sendBurst();
                }
                if (letGoOfQueue()) {
                    continue;
                }
            }
            if (!open) {
                outbox.clear();
                return;
            }
            LockSupport.park(this); // a hand-over (or a close) unparks us; a spurious wake finds the holder unchanged
        }
    }

    private void sendBurst() {
        sendLocked(true, () -> true, this::writeBurst);
        burst.clear();
    }

    /** Writes {@link #burst} in one socket write; under the send lock, by the queue's holder. */
    private void writeBurst() {
        if (session instanceof StrictWsConnection strict) {
            strict.sendTexts(burst);
        } else {
            for (byte[] utf8 : burst) {
                session.send(new String(utf8, StandardCharsets.UTF_8), true);
            }
        }
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

package io.strand.app.ws;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.common.concurrency.limits.LimitException;
import io.helidon.common.socket.SocketContext;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ServerConnectionException;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.websocket.WsCloseCodes;
import io.helidon.websocket.WsCloseException;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One WebSocket connection, server side, in place of Helidon's {@code WsConnection} (registered by
 * {@link StrictWsUpgradeProvider}). What it adds over Helidon 4.5's connection, which the listener
 * hooks cannot: every refusal is a close handshake — the close frame goes out, then the connection
 * keeps reading and discarding (the rest of an oversize frame too) until the peer's close frame,
 * its disconnect or {@link #CLOSE_TIMEOUT}, so the client reads the close code instead of a TCP
 * reset; pings get pongs; reserved bits and opcodes, unmasked or oversized/fragmented control
 * frames and broken fragmentation close with 1002 (Helidon answered a reserved opcode with an HTTP
 * 500 inside the WebSocket stream); text that is not UTF-8 closes with 1007 (Helidon replaced it
 * with U+FFFD); and the listener's {@code onClose} runs exactly once however the connection ends.
 *
 * <p>Threads: the connection's reader reads frames and calls the listener ({@link #handle}): for a plain
 * socket of a single node, an event loop thread ({@link WsEventLoop}: the socket turns non-blocking,
 * this class's loop methods run there, and its output goes through a {@link ChannelOutput}); else a
 * platform thread of its own from {@link ReaderThreads} while one is free, else the virtual thread
 * Helidon gave the connection. Helidon's thread waits for whichever reads. A step the listener must not
 * run on a loop (it may wait) runs on another thread through {@link #runHolding}, the socket's frames
 * held until it is done. Sends come from any thread and go out one whole frame at a time
 * ({@link ServerFrames}).
 */
final class StrictWsConnection implements ServerConnection, WsSession, WsEventLoop.Handler {
    /** How long a close handshake may take before the connection is dropped anyway. */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final ScheduledExecutorService CLOSE_TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "strand-ws-close-timer");
        t.setDaemon(true);
        return t;
    });
    private static final System.Logger LOG = System.getLogger("strand.ws");

    private final ConnectionContext ctx;
    private final HttpPrologue prologue;
    private final WsListener listener;
    private final ClientFrameReader incoming;
    private final ServerFrames outgoing;
    private final int maxFrameLength;
    private final Utf8Text text = new Utf8Text();
    private final AtomicBoolean closeSent = new AtomicBoolean();
    private final AtomicBoolean closeNotified = new AtomicBoolean();
    private volatile boolean finished;
    private volatile boolean canRun = true;
    /** Why {@link #close(boolean)} stopped the connection: the close frame's reason. */
    private volatile String stopReason = "server stopping";
    private volatile boolean readingNetwork;
    private volatile Thread thread;
    /** When a frame last came in (sends are {@link ServerFrames#lastSentNanos}). */
    private volatile long lastReceivedNanos = System.nanoTime();
    /** The code this side closed with, for the listener's onClose. */
    private volatile int sentCode = WsCloseCodes.NORMAL_CLOSE;
    private volatile String sentReason = "";
    /** Whether the peer's close frame came in (reader thread only). */
    private boolean peerCloseReceived;
    /** The opcode of the message being received in fragments, or -1 between messages (reader thread only). */
    private int messageOpcode = -1;
    /** Event loop mode (loop thread, after registration): the loop, the socket, its key, its frames, the limit. */
    private WsEventLoop loop;
    private SocketChannel channel;
    private SelectionKey key;
    private FrameDecoder decoder;
    private Limit loopLimit;
    /** Event loop mode (loop thread): the connection ends once its queued output has gone ({@link #endOnLoop}). */
    private boolean ending;
    /** Event loop mode (loop thread): this side closed, frames are discarded until the peer's close. */
    private boolean discarding;
    /** Event loop mode (loop thread): a step of this socket's requests runs off the loop ({@link #runHolding}); no frame is handled meanwhile. */
    private boolean held;
    /** Event loop mode: completes when the connection has ended; Helidon's thread waits for it. */
    private final CountDownLatch ended = new CountDownLatch(1);

    StrictWsConnection(ConnectionContext ctx, HttpPrologue prologue, WsListener listener, int maxFrameLength) {
        this.ctx = ctx;
        this.prologue = prologue;
        this.listener = listener;
        this.incoming = new ClientFrameReader(ctx.dataReader(), maxFrameLength);
        this.outgoing = new ServerFrames(ctx);
        this.maxFrameLength = maxFrameLength;
    }

    @Override
    public void handle(Limit limit) {
        WsEventLoop eventLoop = listener instanceof SocketEndpoint e ? e.eventLoops().next(e.workspace()) : null;
        SocketChannel plain = eventLoop == null || ctx.isSecure() ? null : SendRoom.channel(ctx);
        if (plain != null) {
            read(limit, eventLoop, plain);
            return;
        }
        ReaderThreads readers = listener instanceof SocketEndpoint e ? e.readerThreads() : ReaderThreads.NONE;
        if (!readers.runOnOwnThread(() -> read(limit, null, null))) {
            read(limit, null, null);
        }
    }

    /**
     * The connection's life: frames read and handled until it closes, on the thread that reads it; or,
     * given an event loop and the socket's channel, the loop's once the listener has opened
     * ({@link #runOnLoop}).
     */
    private void read(Limit limit, WsEventLoop eventLoop, SocketChannel plain) {
        thread = Thread.currentThread();
        boolean onLoop = false;
        try {
            try {
                limit.invoke(() -> listener.onOpen(this));
            } catch (LimitException e) {
                close(WsCloseCodes.TRY_AGAIN_LATER, "too many concurrent requests");
            }
            if (plain != null && canRun && !closeSent.get() && (onLoop = runOnLoop(eventLoop, plain, limit))) {
                return; // the loop told the listener how it ended
            }
            boolean peerClosed = false;
            while (canRun && !closeSent.get() && !peerClosed) {
                readingNetwork = true;
                ClientFrameReader.Frame frame = incoming.next();
                readingNetwork = false;
                lastReceivedNanos = System.nanoTime();
                peerClosed = process(frame, limit);
            }
            if (!peerClosed) {
                if (closeSent.get()) {
                    drain(); // this side closed (the listener, or another thread): wait for the peer's close
                } else {
                    close(WsCloseCodes.GOING_AWAY, stopReason); // shutting down or idle: no waiting for the peer
                }
            }
        } catch (Exception e) {
            if (afterFailure(e) == AfterFailure.AWAIT_PEER_CLOSE) {
                drain();
            }
        } finally {
            if (!onLoop) {
                finished = true;
                notifyClose(sentCode, sentReason);
            }
        }
    }

    /**
     * Hands the connection to {@code eventLoop}: the socket turns non-blocking, its output goes through a
     * {@link ChannelOutput}, and this (Helidon's) thread waits until the loop has ended the connection.
     * Bytes Helidon had read past the upgrade are decoded first. False, with nothing changed, when the
     * socket cannot be made non-blocking.
     */
    private boolean runOnLoop(WsEventLoop eventLoop, SocketChannel plain, Limit limit) {
        DataReader early = ctx.dataReader();
        FrameDecoder decoded = new FrameDecoder(maxFrameLength);
        int buffered = early.available();
        ChannelOutput out = new ChannelOutput(plain, eventLoop);
        loop = eventLoop; // before the output: whoever sees the output set sees the loop
        if (!outgoing.switchTo(plain, out)) {
            return false;
        }
        if (buffered > 0) {
            decoded.add(early.readBytes(buffered)); // frames the client sent right behind the upgrade
        }
        channel = plain;
        decoder = decoded;
        loopLimit = limit;
        eventLoop.register(plain, this, registered -> {
            if (registered == null) {
                notifyClose(WsCloseCodes.CLOSED_ABNORMALLY, "connection lost");
                finishOnLoop();
                return;
            }
            if (ending || finished) { // ended (a server stop) before the registration ran
                eventLoop.deregister(registered);
                return;
            }
            key = registered;
            out.attach(registered);
            readable(); // what came before the registration
        });
        ReaderThreads.waitPassingInterrupts(ended::await, () -> close(true)); // an interrupt: the server is stopping
        return true;
    }

    /** Loop thread: the socket has bytes (or an end); frames are handled as they complete. */
    @Override
    public void readable() {
        if (ending || finished) {
            return;
        }
        int n;
        try {
            n = decoder.readFrom(channel);
        } catch (IOException e) {
            n = -1;
        }
        loopFrames();
        if (ending || finished) {
            return;
        }
        if (outgoing.output().backedUp() || held) {
            WsEventLoop.reading(key, false); // until the client reads what it was sent (or the held step ends); the frames still decoded come first
        } else if (n < 0) {
            if (!discarding && !closeSent.get()) {
                notifyClose(WsCloseCodes.CLOSED_ABNORMALLY, "connection lost"); // the peer is gone: nothing to send
            }
            finishOnLoop(); // nobody to send the rest to
        }
    }

    /**
     * Loop thread: the socket drained some of what was queued. Once all of it has gone, frames left
     * in the decoder while the output was backed up are handled and reading resumes; a connection
     * that is ending finishes.
     */
    @Override
    public void writable() {
        boolean drained = outgoing.output().flush();
        if (finished || !drained) {
            return;
        }
        if (ending) {
            finishOnLoop();
            return;
        }
        framesThenReading();
    }

    /**
     * Loop thread: what stopped this socket's frames (a backed-up output, a held step) has gone. The
     * frames already decoded are handled, then reading resumes unless one of them stopped it again.
     */
    private void framesThenReading() {
        loopFrames();
        if (!ending && !finished && !held && !outgoing.output().backedUp()) {
            WsEventLoop.reading(key, true);
        }
    }

    /**
     * Runs {@code step}, part of handling the frame being handled, where it cannot stall other sockets.
     * Called on an event loop's thread for its socket: on {@code executor}, and this socket's later
     * frames are neither handled nor read until the step has run, so its requests still take effect in
     * the order they were sent while the loop serves every other socket. On a socket with a thread of
     * its own: here and now. The step answers its own errors.
     */
    void runHolding(Executor executor, Runnable step) {
        WsEventLoop l = loop;
        if (l == null || !l.inLoop()) {
            step.run();
            return;
        }
        held = true;
        try {
            executor.execute(() -> {
                try {
                    step.run();
                } finally {
                    l.execute(this::resume);
                }
            });
        } catch (RuntimeException e) {
            held = false;
            throw e;
        }
    }

    /** Loop thread: a held step has run; the frames that came meanwhile are handled and reading resumes. */
    private void resume() {
        if (!loop.inLoop()) {
            return; // the loop stopped and ran this here: it ends the connection itself
        }
        held = false;
        if (ending || finished) {
            return;
        }
        framesThenReading();
    }

    /** Loop thread: the loop stopped. */
    @Override
    public void abandoned() {
        notifyClose(WsCloseCodes.CLOSED_ABNORMALLY, "connection lost");
        finishOnLoop();
    }

    /**
     * Loop thread: the frames that have come whole, handled as {@link #read} handles them, with the
     * same close handshake: after this side's close, frames are discarded until the peer's close.
     */
    private void loopFrames() {
        try {
            ClientFrameReader.Frame frame;
            // one frame at a time while the output has room: a client that sends requests without
            // reading the replies leaves the rest of its frames unread ({@link #writable} resumes)
            while (!ending && !finished && !held && !outgoing.output().backedUp() && (frame = decoder.next()) != null) {
                lastReceivedNanos = System.nanoTime();
                if (!discarding && closeSent.get()) {
                    discarding = true; // this side closed meanwhile (the listener, or another thread)
                }
                if (discarding) {
                    if (frame.opcode() == ClientFrameReader.CLOSE) {
                        endOnLoop();
                    }
                    continue;
                }
                if (process(frame, loopLimit)) {
                    endOnLoop(); // the peer's close, answered
                } else if (!canRun) {
                    close(WsCloseCodes.GOING_AWAY, stopReason); // no waiting for the peer
                    outgoing.output().flush();
                    finishOnLoop();
                }
            }
        } catch (Exception e) {
            if (discarding) {
                endOnLoop(); // more garbage, or a failure, while closing: the handshake is over (as drain() ends)
                return;
            }
            switch (afterFailure(e)) {
                case AWAIT_PEER_CLOSE -> {
                    discarding = true;
                    loopFrames(); // what already came: discarded up to the peer's close
                }
                case END -> endOnLoop();
                case GONE -> finishOnLoop(); // nobody to send the rest to
            }
        }
    }

    /** What a connection does after {@link #afterFailure}. */
    private enum AfterFailure { AWAIT_PEER_CLOSE, END, GONE }

    /**
     * Both read paths' answer to a failure while reading or handling frames: sends the close it calls
     * for (or tells the listener the peer is gone) and says what comes next.
     */
    private AfterFailure afterFailure(Exception e) {
        switch (e) {
            case WsCloseException refused -> {
                close(refused.closeCode(), refused.getMessage());
                // a peer that already sent its (bad) close frame sends nothing more: do not wait for it
                return peerCloseReceived ? AfterFailure.END : AfterFailure.AWAIT_PEER_CLOSE;
            }
            case LimitException tooMany -> {
                close(WsCloseCodes.TRY_AGAIN_LATER, "too many concurrent requests");
                return AfterFailure.AWAIT_PEER_CLOSE;
            }
            case DataReader.InsufficientDataAvailableException _, UncheckedIOException _, ServerConnectionException _ -> {
                notifyClose(WsCloseCodes.CLOSED_ABNORMALLY, "connection lost"); // the peer is gone: nothing to send
                return AfterFailure.GONE;
            }
            default -> {
                if (finished || !canRun) {
                    notifyClose(WsCloseCodes.CLOSED_ABNORMALLY, "connection lost");
                    return AfterFailure.GONE;
                }
                LOG.log(System.Logger.Level.WARNING, "WebSocket connection failed", e);
                listener.onError(this, e);
                close(WsCloseCodes.UNEXPECTED_CONDITION, "internal error");
                return AfterFailure.AWAIT_PEER_CLOSE;
            }
        }
    }

    /**
     * Loop thread: the connection is over once what is queued (the close frame last) has gone out,
     * as a blocking write would have waited for it: at once when nothing is queued, else when the
     * socket drains ({@link #writable}) or after {@link #CLOSE_TIMEOUT}.
     */
    private void endOnLoop() {
        if (ending || finished) {
            return;
        }
        ending = true;
        if (key == null || outgoing.output().flush()) {
            finishOnLoop();
            return;
        }
        WsEventLoop.reading(key, false);
        CLOSE_TIMER.schedule(() -> loop.execute(this::finishOnLoop), CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Loop thread: the connection ends now; what is still queued is dropped, and Helidon's thread returns. */
    private void finishOnLoop() {
        if (finished) {
            return;
        }
        finished = true;
        if (key != null) {
            loop.deregister(key);
        }
        outgoing.output().markClosed();
        notifyClose(sentCode, sentReason);
        ended.countDown();
    }

    /** Handles one frame; true when it was the peer's close (answered, the connection ends). */
    private boolean process(ClientFrameReader.Frame frame, Limit limit) throws Exception {
        switch (frame.opcode()) {
            case ClientFrameReader.TEXT, ClientFrameReader.BINARY -> {
                if (messageOpcode != -1) {
                    throw new WsCloseException("a new message started inside a fragmented one", WsCloseCodes.PROTOCOL_ERROR);
                }
                if (!frame.fin()) {
                    messageOpcode = frame.opcode();
                }
                deliver(frame.opcode(), frame, limit, true);
            }
            case ClientFrameReader.CONTINUATION -> {
                if (messageOpcode == -1) {
                    throw new WsCloseException("a continuation frame with no message", WsCloseCodes.PROTOCOL_ERROR);
                }
                int opcode = messageOpcode;
                if (frame.fin()) {
                    messageOpcode = -1;
                }
                deliver(opcode, frame, limit, false);
            }
            case ClientFrameReader.PING -> pong(BufferData.create(frame.payload()));
            case ClientFrameReader.PONG -> listener.onPong(this, BufferData.create(frame.payload()));
            case ClientFrameReader.CLOSE -> {
                answerClose(frame.payload());
                return true;
            }
            default -> throw new WsCloseException("reserved opcode " + frame.opcode(), WsCloseCodes.PROTOCOL_ERROR);
        }
        return false;
    }

    private void deliver(int opcode, ClientFrameReader.Frame frame, Limit limit, boolean first) throws Exception {
        if (closeSent.get()) {
            return; // closing (e.g. another thread closed with 4001): what the peer sent meanwhile is not acted on
        }
        if (opcode == ClientFrameReader.TEXT) {
            String decoded = text.decode(frame.payload(), first, frame.fin()); // throws 1007 before anything is delivered
            limit.invoke(() -> listener.onMessage(this, decoded, frame.fin()));
        } else {
            limit.invoke(() -> listener.onMessage(this, BufferData.create(frame.payload()), frame.fin()));
        }
    }

    /** The peer closed first: check its close frame, tell the listener, answer with the same code. */
    private void answerClose(byte[] payload) {
        peerCloseReceived = true;
        int code = WsCloseCodes.NO_STATUS_CODE;
        String reason = "";
        if (payload.length == 1) {
            throw new WsCloseException("a close frame body of 1 byte", WsCloseCodes.PROTOCOL_ERROR);
        }
        if (payload.length >= 2) {
            code = ((payload[0] & 0xff) << 8) | (payload[1] & 0xff);
            if (!validCloseCode(code)) {
                throw new WsCloseException("close code " + code + " may not be sent", WsCloseCodes.PROTOCOL_ERROR);
            }
            reason = new Utf8Text().decode(Arrays.copyOfRange(payload, 2, payload.length), true, true);
        }
        notifyClose(code, reason);
        if (closeSent.compareAndSet(false, true)) {
            sendCloseFrame(code == WsCloseCodes.NO_STATUS_CODE ? WsCloseCodes.NORMAL_CLOSE : code, "");
        }
    }

    private static boolean validCloseCode(int code) {
        return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
    }

    /**
     * After this side sent its close: reads and discards everything (first the rest of a frame cut
     * short by a refusal) until the peer's close frame or disconnect; {@link #CLOSE_TIMEOUT} ends
     * it by closing the socket.
     */
    private void drain() {
        try {
            incoming.skipRestOfFrame();
            while (true) {
                ClientFrameReader.Frame frame = incoming.next();
                if (frame.opcode() == ClientFrameReader.CLOSE) {
                    return;
                }
            }
        } catch (RuntimeException peerGoneOrTimedOut) {
            // a disconnect, the timeout closing the socket, or more garbage: the handshake is over either way
        }
    }

    private void notifyClose(int code, String reason) {
        if (closeNotified.compareAndSet(false, true)) {
            try {
                listener.onClose(this, code, reason);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "WebSocket onClose failed", e);
            }
        }
    }

    @Override
    public WsSession send(String text, boolean last) {
        return sendData(ClientFrameReader.TEXT, text.getBytes(StandardCharsets.UTF_8), last);
    }

    @Override
    public WsSession send(BufferData data, boolean last) {
        byte[] bytes = new byte[data.available()];
        data.read(bytes);
        return sendData(ClientFrameReader.BINARY, bytes, last);
    }

    /** Most bytes a server frame's header takes: the room {@link #sendText} needs before its payload. */
    static final int MAX_HEADER_BYTES = ServerFrames.MAX_HEADER_BYTES;

    /** See {@link ServerFrames#textInPlace}. */
    WsSession sendText(byte[] buf, int offset, int length) {
        outgoing.textInPlace(buf, offset, length);
        return this;
    }

    /** See {@link ServerFrames#texts}. */
    WsSession sendTexts(List<byte[]> payloads) {
        outgoing.texts(payloads);
        return this;
    }

    private WsSession sendData(int opcode, byte[] payload, boolean last) {
        outgoing.data(opcode, payload, last);
        return this;
    }

    @Override
    public WsSession ping(BufferData data) {
        return sendControl(ClientFrameReader.PING, data);
    }

    @Override
    public WsSession pong(BufferData data) {
        return sendControl(ClientFrameReader.PONG, data);
    }

    private WsSession sendControl(int opcode, BufferData data) {
        byte[] bytes = new byte[data.available()];
        data.read(bytes);
        outgoing.control(opcode, bytes);
        return this;
    }

    /**
     * Starts the close handshake (once): sends the close frame and arms {@link #CLOSE_TIMEOUT}. The
     * reading thread then discards what the peer still sends until its close frame.
     */
    @Override
    public WsSession close(int code, String reason) {
        if (closeSent.compareAndSet(false, true)) {
            sentCode = code;
            sentReason = reason;
            try {
                sendCloseFrame(code, reason);
            } finally {
                CLOSE_TIMER.schedule(this::closeSocketIfStillOpen, CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        return this;
    }

    private void sendCloseFrame(int code, String reason) {
        try {
            outgoing.close(code, reason);
        } catch (ServerConnectionException peerGone) {
            // nobody left to tell
        }
    }

    private void closeSocketIfStillOpen() {
        if (!finished) {
            ctx.serverSocket().close(); // the reading thread's blocked read fails and the connection ends
            ChannelOutput out = outgoing.output();
            if (out != null) {
                out.markClosed(); // senders waiting for the socket to drain give up
                loop.execute(this::finishOnLoop);
            }
        }
    }

    /** True once an event loop reads this socket: a write then queues what the kernel does not take, and never waits. */
    boolean writesNeverWait() {
        return outgoing.output() != null;
    }

    /** See {@link ServerFrames#awaitDrained}. */
    void awaitDrained() {
        outgoing.awaitDrained();
    }

    @Override
    public WsSession terminate() {
        close(WsCloseCodes.NORMAL_CLOSE, "terminate");
        return this;
    }

    @Override
    public SocketContext socketContext() {
        return ctx;
    }

    @Override
    public HttpPrologue prologue() {
        return prologue;
    }

    /**
     * Time since the last frame either way: a subscription that only receives (entries, heartbeats)
     * is not idle. (Helidon's connection counted only received frames.)
     */
    @Override
    public Duration idleTime() {
        return Duration.ofNanos(System.nanoTime() - Math.max(lastReceivedNanos, outgoing.lastSentNanos()));
    }

    /**
     * The server is stopping or the connection is idle: stop reading (interrupting only a read, as Helidon
     * does). Both close with 1001 (going away); the reason says which, so a client does not take an idle
     * close for a restart.
     */
    @Override
    public void close(boolean interrupt) {
        String reason = idleTime().compareTo(ctx.listenerContext().config().idleConnectionTimeout()) >= 0
                ? "idle timeout" : "server stopping";
        stopReason = reason; // before canRun: the reader closes with it once it sees canRun false
        canRun = false;
        if (outgoing.output() != null) {
            loop.execute(() -> {
                if (!finished) {
                    close(WsCloseCodes.GOING_AWAY, reason);
                    outgoing.output().flush();
                    finishOnLoop(); // no waiting for a client that does not read, as an interrupted write would not
                }
            });
            return;
        }
        Thread t = thread;
        if (t != null && (interrupt || readingNetwork)) {
            t.interrupt();
        }
    }
}

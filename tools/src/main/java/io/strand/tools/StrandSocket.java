package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A Strand WebSocket client on one {@link Socket} (TCP_NODELAY), speaking RFC 6455 itself
 * ({@link WebSocketHandshake}, {@link FrameWriter}, {@link FrameReader}) for the CLI and the
 * benchmarks. Thread-safe: any thread may send (frames are serialized by the writer's lock); one
 * reader thread per socket, or a {@link SocketLoop} shared by many, parses frames, answers pings,
 * matches replies to requests by {@code id} and hands pushed frames (no id) to the sink.
 *
 * <p>Reply callbacks and the sink run on the reader thread, so they must be quick (record, hand
 * over, or send the next request). A callback may send: a send only blocks while the kernel's
 * socket buffer is full, which a closed loop with a bounded number in flight does not reach.
 *
 * <p>{@link #closed} completes with the peer's close code (1005 when its close frame had none),
 * or -1 when the connection broke or was {@link #abort aborted} without a close frame. Requests
 * still waiting then fail: a {@link #call} future exceptionally, a {@link #send} callback with a
 * {@code socket_closed} error reply.
 */
final class StrandSocket implements AutoCloseable {
    /** The upgrade failed: {@link #status} is the server's HTTP status, or 0 when none came (unreachable, not HTTP). */
    static final class ConnectFailure extends RuntimeException {
        final int status;

        ConnectFailure(int status, String message, Throwable cause) {
            super(message, cause);
            this.status = status;
        }
    }

    private static final int CONNECT_TIMEOUT_MILLIS = 10_000;
    private static final AtomicLong SOCKETS = new AtomicLong();
    private final Socket socket;
    /** Set when a {@link SocketLoop} reads this socket: the non-blocking channel and its unread bytes. */
    private final SocketChannel channel;
    private ByteBuffer inbox;
    private final FrameWriter writer;
    private final FrameReader reader;
    /** The peer's close code once its close frame came (reader only). */
    private int closeCode = -1;
    private String closeReason = "connection lost";
    private final ConcurrentHashMap<Long, Consumer<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicBoolean closeSent = new AtomicBoolean();
    private volatile Consumer<JsonNode> pushed = f -> { };
    final CompletableFuture<Integer> closed = new CompletableFuture<>();

    /** Connects to {@code ws://} or {@code wss://} {@code wsUrl}, with {@code Authorization: Bearer token} when not null. */
    StrandSocket(String wsUrl, String token) {
        this(wsUrl, token, null);
    }

    /**
     * As {@link #StrandSocket(String, String)}, read by {@code loop} (plain {@code ws://} only)
     * instead of a thread of its own; reply callbacks then run on the loop's thread.
     */
    StrandSocket(String wsUrl, String token, SocketLoop loop) {
        URI uri = URI.create(wsUrl);
        boolean tls = "wss".equalsIgnoreCase(uri.getScheme());
        if (!tls && !"ws".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("not a ws:// or wss:// URL: " + wsUrl);
        }
        if (tls && loop != null) {
            throw new IllegalArgumentException("a socket loop reads plain ws:// sockets only");
        }
        int port = uri.getPort() > 0 ? uri.getPort() : tls ? 443 : 80;
        Socket s = null;
        try {
            SocketChannel ch = loop == null ? null : SocketChannel.open();
            s = tls ? SSLSocketFactory.getDefault().createSocket() : ch != null ? ch.socket() : new Socket();
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(uri.getHost(), port), CONNECT_TIMEOUT_MILLIS);
            if (s instanceof SSLSocket ssl) {
                SSLParameters p = ssl.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                ssl.setSSLParameters(p);
            }
            s.setSoTimeout(CONNECT_TIMEOUT_MILLIS);
            SecureRandom random = new SecureRandom();
            BufferedInputStream in = new BufferedInputStream(s.getInputStream(), 64 * 1024);
            WebSocketHandshake.upgrade(uri, token, s.getOutputStream(), in, random);
            s.setSoTimeout(0); // from here the reader blocks until a frame comes; callers keep their own timeouts
            socket = s;
            channel = ch;
            if (ch == null) {
                writer = new FrameWriter(s.getOutputStream(), random.nextInt());
                reader = new FrameReader(in);
            } else {
                inbox = ByteBuffer.allocate(64 * 1024);
                inbox.put(in.readNBytes(in.available())); // anything read past the handshake response
                ch.configureBlocking(false);
                writer = new FrameWriter(new ChannelOutput(ch), random.nextInt());
                reader = new FrameReader(new InboxInput());
            }
        } catch (IOException e) {
            closeQuietly(s);
            int status = e instanceof WebSocketHandshake.Refused r ? r.status : 0;
            throw new ConnectFailure(status, "WebSocket " + wsUrl + ": " + StrandClient.describe(e), e);
        }
        if (loop == null) {
            Thread.ofPlatform().daemon().name("strand-socket-" + SOCKETS.incrementAndGet()).start(this::readLoop);
        } else {
            loop.add(this);
        }
    }

    SocketChannel channel() {
        return channel;
    }

    /** Drops the connection without a close handshake; {@link #closed} completes with -1. */
    void abort() {
        closeQuietly(socket);
    }

    void onPush(Consumer<JsonNode> sink) {
        this.pushed = sink;
    }

    /** Sends {@code {"id":n,"op":op, fields}} and completes with the reply (ok or error). */
    CompletableFuture<JsonNode> call(String op, String fieldsJson) {
        FutureReply reply = new FutureReply();
        send(op, fieldsJson, reply);
        return reply.future;
    }

    /**
     * Sends {@code {"id":n,"op":op, fields}}; {@code onReply} gets the reply (ok or error) on the
     * reader thread, or a {@code socket_closed} error reply when the socket closes first (then
     * possibly on the calling thread). No future per request: the benchmarks' closed loops use this.
     */
    void send(String op, String fieldsJson, Consumer<JsonNode> onReply) {
        long id = ids.incrementAndGet();
        pending.put(id, onReply);
        if (closed.isDone() || closeSent.get()) {
            failPending(id, closed.isDone() ? "socket closed " + closed.getNow(-1) : "socket closing");
            return;
        }
        String frame = "{\"id\":" + id + ",\"op\":\"" + op + "\"" + (fieldsJson.isEmpty() ? "" : "," + fieldsJson) + "}";
        try {
            writer.text(frame.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            abort(); // the reader fails every other pending request
            failPending(id, "send failed: " + StrandClient.describe(e));
        }
    }

    /** Sends a close frame (1000) and waits up to 5 s for the server's; aborts when none comes. */
    @Override
    public void close() {
        if (closeSent.compareAndSet(false, true) && !closed.isDone()) {
            try {
                writer.close(1000, "done");
                closed.get(5, TimeUnit.SECONDS);
            } catch (IOException | ExecutionException | TimeoutException e) {
                // no clean close: dropped below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        abort();
    }

    /** The reader thread: frames until a close frame, a broken connection or a protocol error. */
    private void readLoop() {
        try {
            while (handle(reader.next())) {
                // next frame
            }
        } catch (IOException | RuntimeException | Error e) {
            failed(e);
        } finally {
            finish();
        }
    }

    /**
     * Called by the {@link SocketLoop} when the channel has bytes: handles every whole message
     * they complete. Returns false once the connection is done.
     */
    boolean readReady() {
        try {
            if (!inbox.hasRemaining()) {
                inbox = ByteBuffer.allocate(inbox.capacity() * 2).put(inbox.flip());
            }
            int read = channel.read(inbox);
            inbox.flip();
            try {
                while (FrameReader.wholeMessageIn(inbox)) {
                    if (!handle(reader.next())) {
                        finish();
                        return false;
                    }
                }
            } finally {
                inbox.compact();
            }
            if (read < 0) {
                throw new EOFException("connection closed by the peer");
            }
            return true;
        } catch (IOException | RuntimeException | Error e) {
            failed(e);
            finish();
            return false;
        }
    }

    /** Handles one message or control frame; false once the peer's close frame came. */
    private boolean handle(int opcode) throws IOException {
        if (opcode == FrameReader.TEXT) {
            dispatch(Json.MAPPER.readTree(reader.payload(), 0, reader.length()));
        } else if (opcode == FrameWriter.PING) {
            writer.frame(FrameWriter.PONG, reader.payload(), 0, reader.length());
        } else if (opcode == FrameWriter.CLOSE) {
            closeCode = reader.closeCode();
            closeReason = "socket closed " + closeCode;
            if (closeSent.compareAndSet(false, true)) {
                writer.close(closeCode, ""); // echo, as RFC 6455 §5.5.1 asks
            }
            return false;
        }
        // pongs and binary messages (Strand sends none) are ignored
        return true;
    }

    private void failed(Throwable e) {
        if (e instanceof FrameReader.ProtocolError p) {
            closeReason = "protocol error: " + p.getMessage();
            try {
                if (closeSent.compareAndSet(false, true)) {
                    writer.close(p.closeCode, p.getMessage());
                }
            } catch (IOException ignored) {
                // dropping the connection anyway
            }
        } else if (closeCode < 0) {
            closeReason = StrandClient.describe(e);
        }
    }

    private void finish() {
        closeQuietly(socket);
        closed.complete(closeCode);
        for (Long id : pending.keySet()) {
            failPending(id, closeReason);
        }
    }

    private void dispatch(JsonNode frame) {
        JsonNode id = frame.get("id");
        if (id != null && !id.isNull()) {
            Consumer<JsonNode> reply = pending.remove(id.asLong());
            if (reply != null) {
                reply.accept(frame);
            }
        } else {
            pushed.accept(frame);
        }
    }

    /** Fails request {@code id} if it is still waiting (only one caller wins the removal). */
    private void failPending(long id, String why) {
        Consumer<JsonNode> reply = pending.remove(id);
        if (reply instanceof FutureReply f) {
            f.future.completeExceptionally(new IllegalStateException(why));
        } else if (reply != null) {
            ObjectNode error = Json.MAPPER.createObjectNode();
            error.put("id", id);
            error.put("ok", false);
            error.putObject("error").put("code", "socket_closed").put("message", why);
            reply.accept(error);
        }
    }

    private static void closeQuietly(Socket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** The loop's buffered bytes, as the frame reader's input (it is only asked for whole messages). */
    private final class InboxInput extends InputStream {
        @Override
        public int read() {
            return inbox.hasRemaining() ? inbox.get() & 0xFF : -1;
        }

        @Override
        public int read(byte[] into, int offset, int length) {
            if (!inbox.hasRemaining()) {
                return -1;
            }
            int n = Math.min(length, inbox.remaining());
            inbox.get(into, offset, n);
            return n;
        }
    }

    /**
     * Writes whole frames to a non-blocking channel. A closed loop keeps few requests outstanding,
     * so the socket buffer has room and the wait below does not happen in practice.
     */
    private static final class ChannelOutput extends OutputStream {
        private final SocketChannel channel;

        ChannelOutput(SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            ByteBuffer out = ByteBuffer.wrap(bytes, offset, length);
            while (out.hasRemaining()) {
                if (channel.write(out) == 0) {
                    LockSupport.parkNanos(50_000);
                }
            }
        }
    }

    /** A {@link #call}'s reply: completes its future (exceptionally when the socket closes first). */
    private static final class FutureReply implements Consumer<JsonNode> {
        final CompletableFuture<JsonNode> future = new CompletableFuture<>();

        @Override
        public void accept(JsonNode reply) {
            future.complete(reply);
        }
    }
}

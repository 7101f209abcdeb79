package io.strand.app.http;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.common.task.InterruptableTask;
import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Status;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import io.strand.app.ApiErrors;
import io.strand.core.Agent;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Guards the listener against connections that hold resources without sending a request
 * (slowloris) and against more connections than the node can hold. Thread-safe: counts and
 * deadlines live in concurrent maps updated by the connections' own threads; one {@link Agent},
 * {@code strand-header-timeout}, closes the connections whose deadline passed.
 *
 * <ul>
 *   <li><b>Header timeout</b>: a request's head (request line and headers) must be complete within
 *       {@code headerTimeout} of the connection being accepted, or, on a kept-alive connection, of
 *       its request line arriving. Otherwise the connection gets {@code 408 request_timeout} and is
 *       closed. Helidon 4.5 has no such timeout (its idle timeout cannot interrupt a connection that
 *       is reading headers, and its socket read timeout is client-only). Once the head is complete
 *       the deadline is dropped: a WebSocket that upgraded, a long poll or a slow response is never
 *       cut by it; a kept-alive connection waiting for its next request is left to Helidon's idle
 *       timeout.</li>
 *   <li><b>Body timeout</b>: a request with a body must deliver it within {@code bodyTimeout} of its
 *       head (until its answer starts); otherwise the connection is closed, without an answer since
 *       the handler reading the body owns the response. Nothing was applied: handlers read the
 *       whole body before they act.</li>
 *   <li><b>Connection caps</b>: past {@code maxConnections} open connections a new one is answered
 *       {@code 503 unavailable} (with {@code Retry-After}), past {@code maxConnectionsPerIp} from one
 *       address {@code 429 too_many_connections}, then closed. Helidon's own
 *       {@code maxTcpConnections} only stops accepting, so clients hang in the kernel backlog; it is
 *       set a little above the cap ({@link #REFUSAL_HEADROOM}) so that refusals stay bounded too.</li>
 * </ul>
 * All hook into Helidon through the HTTP/1 connection selector ({@link #wrap}: the only selector,
 * so Helidon hands it each connection as soon as it is accepted) and an HTTP/1 receive and send
 * listener (request line and headers read; answer status sent). Idle connections are Helidon's idle
 * timeout's business: a kept-alive HTTP connection without a request, a WebSocket without frames
 * either way (StrictWsConnection counts sent frames, so heartbeats keep a subscriber alive).
 */
public final class ConnectionGuard implements Http1ConnectionListener, AutoCloseable {
    /** Connections Helidon accepts past {@code maxConnections}, only to be refused with an answer. */
    public static final int REFUSAL_HEADROOM = 256;

    private final long headerTimeoutNanos;
    private final long bodyTimeoutNanos;
    private final int maxConnections;
    private final int maxConnectionsPerIp;
    private final AtomicInteger open = new AtomicInteger();
    private final Map<InetAddress, Integer> openPerIp = new ConcurrentHashMap<>();
    /** Connection → by when its current request head, or body, must be complete. */
    private final Map<ConnectionContext, Deadline> deadlines = new ConcurrentHashMap<>();
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder refusals = new LongAdder();
    private final LongAdder accepted = new LongAdder();
    private final Agent sweeper;
    /** The connection the current thread serves (Helidon runs each connection on its own thread). */
    private final ThreadLocal<ConnectionContext> current = new ThreadLocal<>();

    /** {@code atNanos} in System.nanoTime(); {@code head}: the head is due, else the body. */
    private record Deadline(long atNanos, boolean head) {
    }

    public ConnectionGuard(Duration headerTimeout, Duration bodyTimeout, int maxConnections, int maxConnectionsPerIp) {
        this.headerTimeoutNanos = headerTimeout.toNanos();
        this.bodyTimeoutNanos = bodyTimeout.toNanos();
        this.maxConnections = maxConnections;
        this.maxConnectionsPerIp = maxConnectionsPerIp;
        long period = Math.clamp(headerTimeout.toMillis() / 10, 50, 1000);
        this.sweeper = Agent.start("strand-header-timeout", Duration.ofMillis(period), this::closeExpired);
    }

    /** The HTTP/1 selector, with every connection it makes counted, capped and given a header deadline. */
    public ServerConnectionSelector wrap(ServerConnectionSelector http1) {
        return new ServerConnectionSelector() {
            @Override
            public int bytesToIdentifyConnection() {
                return http1.bytesToIdentifyConnection();
            }

            @Override
            public Support supports(BufferData data) {
                return http1.supports(data);
            }

            @Override
            public Set<String> supportedApplicationProtocols() {
                return http1.supportedApplicationProtocols();
            }

            @Override
            public ServerConnection connection(ConnectionContext ctx) {
                return admit(ctx, http1);
            }
        };
    }

    /** How often Helidon looks for idle connections: a quarter of the timeout, within 100 ms..2 min. */
    public static Duration idleCheckPeriod(Duration idleTimeout) {
        return Duration.ofMillis(Math.clamp(idleTimeout.toMillis() / 4, 100, 120_000));
    }

    public int openConnections() {
        return open.get();
    }

    /** Connections closed because their request head or body did not arrive in time, since start. */
    public long timedOut() {
        return timedOut.sum();
    }

    /** Connections accepted since start, refused ones included. */
    public long accepted() {
        return accepted.sum();
    }

    /** Connections refused by a cap, since start. */
    public long refusals() {
        return refusals.sum();
    }

    private ServerConnection admit(ConnectionContext ctx, ServerConnectionSelector http1) {
        InetAddress ip = ctx.remotePeer().address() instanceof InetSocketAddress a ? a.getAddress() : null;
        accepted.increment();
        int total = open.incrementAndGet();
        int fromIp = ip == null ? 0 : openPerIp.merge(ip, 1, Integer::sum);
        deadlines.put(ctx, headDeadline());
        StrandException refusal = null;
        if (total > maxConnections) {
            refusal = new StrandException(ErrorCode.UNAVAILABLE, "the server holds its limit of " + maxConnections
                    + " open connections: retry later");
        } else if (maxConnectionsPerIp > 0 && fromIp > maxConnectionsPerIp) {
            refusal = new StrandException(ErrorCode.TOO_MANY_CONNECTIONS, "the server holds its limit of "
                    + maxConnectionsPerIp + " open connections from one address: close some, then retry");
        }
        if (refusal != null) {
            refusals.increment();
            return new Counted(new Refusal(ctx, refusal), ctx, ip);
        }
        try {
            return new Counted(http1.connection(ctx), ctx, ip);
        } catch (RuntimeException e) {
            release(ctx, ip); // Helidon then closes the socket; the slot must not leak
            throw e;
        }
    }

    private void release(ConnectionContext ctx, InetAddress ip) {
        deadlines.remove(ctx);
        if (ip != null) {
            openPerIp.computeIfPresent(ip, (k, n) -> n <= 1 ? null : n - 1);
        }
        open.decrementAndGet();
    }

    /**
     * Whether the current thread's connection is still reading a request head (from being accepted
     * or from its request line until its headers are complete). Helidon reports a head cut short by
     * the client (EOF) or an unparsable request line as an internal error; {@link DirectRefusals}
     * asks this to answer those as the client's {@code bad_request}, without a logged stack trace.
     */
    public boolean readingHead() {
        ConnectionContext ctx = current.get();
        Deadline d = ctx == null ? null : deadlines.get(ctx);
        return d != null && d.head();
    }

    private Deadline headDeadline() {
        return new Deadline(System.nanoTime() + headerTimeoutNanos, true);
    }

    /** A request line arrived: on a kept-alive connection, its head is due within the timeout from now. */
    @Override
    public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
        deadlines.putIfAbsent(ctx, headDeadline());
    }

    /**
     * The head is complete: a request with a body must deliver it within the body timeout (until
     * its answer starts, {@link #status}); one without has no deadline until the next request line.
     */
    @Override
    public void headers(ConnectionContext ctx, Headers headers) {
        boolean body = headers.contains(HeaderNames.TRANSFER_ENCODING)
                || headers.contentLength().orElse(0) > 0;
        if (body) {
            deadlines.put(ctx, new Deadline(System.nanoTime() + bodyTimeoutNanos, false));
        } else {
            deadlines.remove(ctx);
        }
    }

    /** As a send listener: the answer is on its way, so the handler has read the body it needed. */
    @Override
    public void status(ConnectionContext ctx, Status status) {
        Deadline d = deadlines.get(ctx);
        if (d != null && !d.head()) {
            deadlines.remove(ctx, d);
        }
    }

    /** One pass of the sweeper: closes the connections whose deadline passed (a failed pass is counted by the agent, retried next period). */
    private void closeExpired() {
        long now = System.nanoTime();
        for (Map.Entry<ConnectionContext, Deadline> e : deadlines.entrySet()) {
            Deadline d = e.getValue();
            if (now - d.atNanos() >= 0 && deadlines.remove(e.getKey(), d)) {
                timedOut.increment();
                ConnectionContext ctx = e.getKey();
                // off this thread: a peer that does not read must not stall the sweep
                Thread.ofVirtual().name("strand-header-timeout-close").start(d.head()
                        ? () -> answerAndClose(ctx, new StrandException(ErrorCode.REQUEST_TIMEOUT, "the request head "
                                + "(request line and headers) did not arrive within " + headerTimeoutNanos / 1_000_000 + " ms"))
                        : () -> close(ctx)); // a handler is reading the body and owns the answer: only close
            }
        }
    }

    private static void answerAndClose(ConnectionContext ctx, StrandException error) {
        try {
            ctx.dataWriter().writeNow(BufferData.create(response(error)));
        } catch (RuntimeException ignored) {
            // the peer is gone or not reading: closing is all that is left
        }
        close(ctx);
    }

    private static void close(ConnectionContext ctx) {
        try {
            ctx.serverSocket().close(); // the connection's thread, blocked reading, sees the socket closed and ends
        } catch (RuntimeException ignored) {
            // already closed
        }
    }

    /** A whole HTTP/1.1 answer with the SPEC §2 body, closing the connection. */
    static byte[] response(StrandException error) {
        byte[] body = ApiErrors.httpBody(error);
        Status status = Status.create(error.code().httpStatus());
        String head = "HTTP/1.1 " + status.code() + " " + status.reasonPhrase() + "\r\n"
                + "Content-Type: application/json\r\n"
                + "Cache-Control: no-store\r\n"
                + (error.code() == ErrorCode.UNAVAILABLE ? "Retry-After: 1\r\n" : "")
                + "Connection: close\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n";
        byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, all, 0, headBytes.length);
        System.arraycopy(body, 0, all, headBytes.length, body.length);
        return all;
    }

    @Override
    public void close() {
        sweeper.close();
    }

    /** Releases the connection's slot however it ends. */
    private final class Counted implements ServerConnection, InterruptableTask<Void> {
        private final ServerConnection delegate;
        private final ConnectionContext ctx;
        private final InetAddress ip;

        Counted(ServerConnection delegate, ConnectionContext ctx, InetAddress ip) {
            this.delegate = delegate;
            this.ctx = ctx;
            this.ip = ip;
        }

        @Override
        public void handle(Limit limit) throws InterruptedException {
            current.set(ctx);
            try {
                delegate.handle(limit);
            } finally {
                current.remove();
                release(ctx, ip);
            }
        }

        @Override
        public Duration idleTime() {
            return delegate.idleTime();
        }

        @Override
        public void close(boolean interrupt) {
            delegate.close(interrupt);
        }

        /** As the wrapped connection: Helidon interrupts it on shutdown only while it waits for a request. */
        @Override
        public boolean canInterrupt() {
            return delegate instanceof InterruptableTask<?> task && task.canInterrupt();
        }

        @Override
        public Void call() {
            throw new UnsupportedOperationException("a connection is run through handle(Limit)");
        }
    }

    /**
     * A connection past a cap: reads the request head (so the client is not reset while sending
     * it; the header deadline still applies), answers the refusal and ends.
     */
    private static final class Refusal implements ServerConnection {
        private static final int MAX_HEAD_LINES = 200;
        private final ConnectionContext ctx;
        private final StrandException error;
        private final long started = System.nanoTime();

        Refusal(ConnectionContext ctx, StrandException error) {
            this.ctx = ctx;
            this.error = error;
        }

        @Override
        public void handle(Limit limit) {
            DataReader reader = ctx.dataReader();
            try {
                for (int i = 0; i < MAX_HEAD_LINES && !reader.readLine().isEmpty(); i++) {
                    // skip the head
                }
            } catch (RuntimeException ignored) {
                // a malformed or cut head: answer anyway
            }
            try {
                ctx.dataWriter().writeNow(BufferData.create(response(error)));
            } catch (RuntimeException ignored) {
                // the peer left
            }
        }

        @Override
        public Duration idleTime() {
            return Duration.ofNanos(System.nanoTime() - started);
        }

        @Override
        public void close(boolean interrupt) {
            try {
                ctx.serverSocket().close();
            } catch (RuntimeException ignored) {
                // already closed
            }
        }
    }
}

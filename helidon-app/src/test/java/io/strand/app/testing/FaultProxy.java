package io.strand.app.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (here s3proxy) that injects faults at the
 * network edge, so the code under test meets them through its real HTTP client (thread-safe: the mode
 * is a volatile field read per connection and per chunk; each connection's two pumps run on their own
 * virtual threads). Modes:
 * <ul>
 *   <li>{@link Mode#PASS}: bytes relayed as they are;</li>
 *   <li>{@link Mode#DOWN}: every open connection is reset and every new one reset on accept;</li>
 *   <li>{@link Mode#SLOW}: each relayed chunk, both ways, waits {@link #slowDelayMillis} first;</li>
 *   <li>{@link Mode#ERROR_500}: open connections are reset, and each new request is answered
 *       {@code 500 InternalError} (an S3 XML error body) without reaching the server.</li>
 * </ul>
 */
public final class FaultProxy implements AutoCloseable {
    public enum Mode { PASS, DOWN, SLOW, ERROR_500 }

    private static final byte[] ERROR_BODY = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>"
            + "<Message>injected by FaultProxy</Message></Error>").getBytes(StandardCharsets.UTF_8);

    private final int upstreamPort;
    private final ServerSocket listener;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    /** Connections accepted, and of them answered 500, reset, or delayed by a fault. */
    public final AtomicLong connections = new AtomicLong();
    public final AtomicLong faulted = new AtomicLong();
    private volatile Mode mode = Mode.PASS;
    private volatile long slowDelayMillis = 500;

    public FaultProxy(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("fault-proxy-accept").start(this::acceptLoop);
    }

    public int port() {
        return listener.getLocalPort();
    }

    public String endpoint() {
        return "http://127.0.0.1:" + port();
    }

    /** Switches mode; DOWN and ERROR_500 also reset every connection open now (pooled keep-alives included). */
    public void mode(Mode m) {
        mode = m;
        if (m == Mode.DOWN || m == Mode.ERROR_500) {
            for (Socket s : open) {
                reset(s);
            }
        }
    }

    public void slowDelayMillis(long ms) {
        slowDelayMillis = ms;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            connections.incrementAndGet();
            Thread.ofVirtual().start(() -> serve(client));
        }
    }

    private void serve(Socket client) {
        Mode m = mode;
        if (m == Mode.DOWN) {
            faulted.incrementAndGet();
            reset(client);
            return;
        }
        if (m == Mode.ERROR_500) {
            faulted.incrementAndGet();
            answer500(client);
            return;
        }
        try {
            Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
            open.add(client);
            open.add(upstream);
            Thread.ofVirtual().start(() -> pump(upstream, client));
            pump(client, upstream);
        } catch (IOException e) {
            reset(client);
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buf = new byte[16 * 1024];
        boolean delayed = false;
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (mode == Mode.SLOW) {
                    if (!delayed) {
                        delayed = true;
                        faulted.incrementAndGet();
                    }
                    LockSupport.parkNanos(slowDelayMillis * 1_000_000L); // the injected latency itself
                }
                if (mode == Mode.DOWN || mode == Mode.ERROR_500) {
                    break;
                }
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException ignored) {
            // one side went away: close both
        } finally {
            reset(from);
            reset(to);
        }
    }

    /** Reads the request head, then answers 500 and closes (the SDK sends {@code Expect: 100-continue} before a body). */
    private void answer500(Socket client) {
        try (client) {
            client.setSoTimeout(5_000);
            InputStream in = client.getInputStream();
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                byte[] h = head.toByteArray();
                int l = h.length;
                if (l >= 4 && h[l - 4] == '\r' && h[l - 3] == '\n' && h[l - 2] == '\r' && h[l - 1] == '\n') {
                    break;
                }
            }
            OutputStream out = client.getOutputStream();
            out.write(("HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/xml\r\nContent-Length: "
                    + ERROR_BODY.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(ERROR_BODY);
            out.flush();
        } catch (IOException ignored) {
            // the client gave up first
        }
    }

    private void reset(Socket s) {
        open.remove(s);
        try {
            s.setSoLinger(true, 0); // RST, not FIN: the peer sees a reset connection
        } catch (SocketException ignored) {
            // already closed
        }
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket s : open) {
            reset(s);
        }
    }
}

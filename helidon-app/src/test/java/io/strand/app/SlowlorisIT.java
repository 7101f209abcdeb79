package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.ColdLogs;
import io.strand.app.testing.RawHttp;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slowloris and connection floods: request heads that never complete are answered 408 and closed
 * after the header timeout, connections past the global or per-address cap are refused with an
 * answer, and meanwhile normal requests and idle WebSockets carry on.
 */
@Timeout(180)
@FaultTest
class SlowlorisIT {
    private static final String GET = "GET /v1/ws/acme/logs HTTP/1.1\r\nHost: localhost\r\n\r\n";

    @TempDir
    Path dir;

    @Test
    @Scenario("slowloris (partial headers held open)")
    void headsThatNeverCompleteShouldBeAnswered408AndClosedAfterTheHeaderTimeout(ReliabilityRow row) throws Exception {
        long timeoutMillis = 1000;
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_HEADER_TIMEOUT", timeoutMillis + "ms"))) {
            List<Held> held = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                String partial = switch (i % 3) {
                    case 0 -> ""; // connects and sends nothing
                    case 1 -> "GET /v1/ws/acme/logs HT"; // part of a request line
                    default -> "GET /v1/ws/acme/logs HTTP/1.1\r\nHost: localhost\r\nX-Slow: a"; // part of the headers
                };
                held.add(Held.open(server.url(), null, partial));
            }
            List<Thread> dribblers = new ArrayList<>();
            for (int i = 0; i < 30; i++) { // the classic slowloris: a header line now and then, never the blank line
                Held h = Held.open(server.url(), null, "GET /v1/ws/acme/logs HTTP/1.1\r\nHost: localhost\r\n");
                held.add(h);
                dribblers.add(Thread.ofVirtual().start(() -> {
                    try {
                        while (true) {
                            h.out().write("X-Slow: b\r\n".getBytes(StandardCharsets.US_ASCII));
                            h.out().flush();
                            Thread.sleep(200); // pacing the attack, not synchronisation
                        }
                    } catch (IOException | InterruptedException closed) {
                        // the server closed it
                    }
                }));
            }
            int normal = 20;
            for (int i = 0; i < normal; i++) {
                assertEquals(200, server.http.get("/v1/ws/acme/logs").status(), "normal requests work meanwhile");
            }
            long slowest = 0;
            for (Held h : held) {
                RawHttp.Answer a = RawHttp.read(h.in());
                assertEquals(408, a.status(), a.head() + a.body());
                assertEquals("request_timeout", a.errorCode());
                assertEquals(-1, h.in().read(), "closed after the answer");
                long after = (System.nanoTime() - h.openedNanos()) / 1_000_000;
                assertTrue(after >= timeoutMillis - 50, "closed after " + after + " ms, before the timeout");
                slowest = Math.max(slowest, after);
                h.socket().close();
            }
            System.out.println("330 incomplete heads closed, the last " + slowest + " ms after it connected (timeout "
                    + timeoutMillis + " ms)");
            assertTrue(slowest < timeoutMillis + 5_000, "closed soon after the timeout: " + slowest + " ms");
            for (Thread t : dribblers) {
                t.join(5_000);
            }
            assertEquals(200, RawHttp.exchange(server.url(), GET).status(), "the server still answers");
            row.runs(1).operations(held.size() + normal + 1)
                    .note(held.size() + " incomplete heads answered 408 and closed, the last " + slowest + " ms after connecting (timeout "
                            + timeoutMillis + " ms); " + normal + " normal requests served meanwhile");
        }
    }

    @Test
    @Scenario("slowloris: bodies that stop arriving")
    void aBodyThatStopsArrivingShouldBeCutAfterTheBodyTimeoutAndAppendNothing(ReliabilityRow row) throws Exception {
        long timeoutMillis = 1000;
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_BODY_TIMEOUT", timeoutMillis + "ms"))) {
            List<Held> held = new ArrayList<>();
            for (int i = 0; i < 50; i++) { // R.U.D.Y.: a complete head, then a body that never ends
                held.add(Held.open(server.url(), null, "POST /v1/ws/acme/logs/slow/entries HTTP/1.1\r\nHost: localhost\r\n"
                        + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"data\":"));
            }
            assertEquals(200, server.http.post("/v1/ws/acme/logs/fast/entries", "{\"data\":1}").status(), "normal posts work meanwhile");
            long slowest = 0;
            for (Held h : held) {
                try {
                    int b = h.in().read();
                    assertEquals(-1, b, "closed without an answer: the handler owns the response");
                } catch (java.net.SocketException reset) {
                    // closed with unread bytes: a reset is a close too
                }
                long after = (System.nanoTime() - h.openedNanos()) / 1_000_000;
                assertTrue(after >= timeoutMillis - 50, "closed after " + after + " ms, before the timeout");
                slowest = Math.max(slowest, after);
                h.socket().close();
            }
            System.out.println("50 stalled bodies cut, the last " + slowest + " ms after it connected (timeout " + timeoutMillis + " ms)");
            assertTrue(slowest < timeoutMillis + 5_000, "cut soon after the timeout: " + slowest + " ms");
            assertEquals("not_found", server.http.get("/v1/ws/acme/logs/slow").errorCode(), "a cut request appended nothing");
            row.runs(1).operations(held.size() + 1).acknowledged(1)
                    .note(held.size() + " stalled bodies cut, the last " + slowest + " ms after connecting (timeout " + timeoutMillis
                            + " ms); nothing appended");
        }
    }

    @Test
    @Scenario("slowloris: idle socket and keep-alive outlive the header timeout")
    void anIdleWebSocketAndAKeptAliveConnectionShouldOutliveTheHeaderTimeout() throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_HEADER_TIMEOUT", "500ms"));
             WsClient socket = WsClient.connect(server.wsUrl("acme"));
             Socket keptAlive = RawHttp.connect(server.url(), null)) {
            keptAlive.setSoTimeout(10_000);
            keptAlive.getOutputStream().write(GET.getBytes(StandardCharsets.US_ASCII));
            assertEquals(200, RawHttp.read(keptAlive.getInputStream()).status());
            assertThrows(TimeoutException.class, () -> socket.closed.get(2_500, TimeUnit.MILLISECONDS),
                    "a socket whose client sends nothing stays open past five header timeouts");
            assertTrue(socket.reply(socket.request("ping", ""), 10_000).path("ok").asBoolean());
            keptAlive.getOutputStream().write(GET.getBytes(StandardCharsets.US_ASCII));
            assertEquals(200, RawHttp.read(keptAlive.getInputStream()).status(), "a kept-alive connection takes its next request");
        }
    }

    @Test
    @Scenario("slowloris: idle keep-alive closed")
    void aKeptAliveConnectionWithoutRequestsShouldBeClosedAfterTheIdleTimeout(ReliabilityRow row) throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_IDLE_TIMEOUT", "2s"));
             Socket keptAlive = RawHttp.connect(server.url(), null)) {
            keptAlive.setSoTimeout(15_000);
            keptAlive.getOutputStream().write(GET.getBytes(StandardCharsets.US_ASCII));
            assertEquals(200, RawHttp.read(keptAlive.getInputStream()).status());
            long quiet = System.nanoTime();
            assertEquals(-1, keptAlive.getInputStream().read(), "closed by the idle timeout");
            long closedMillis = (System.nanoTime() - quiet) / 1_000_000;
            System.out.println("idle HTTP connection closed after " + closedMillis + " ms (idle timeout 2s, measured in whole seconds)");
            assertTrue(closedMillis < 6_000, closedMillis + " ms");
            row.runs(1).operations(1).note("closed " + closedMillis + " ms after its last answer (idle timeout 2 s)");
        }
    }

    @Test
    @Scenario("connection cap: global")
    void connectionsPastTheGlobalCapShouldBeRefusedWith503UntilSlotsFree(ReliabilityRow row) throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_MAX_CONNECTIONS", "20", "STRAND_HEADER_TIMEOUT", "60s"))) {
            List<Held> held = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                held.add(Held.served(server.url(), null));
            }
            for (int i = 0; i < 5; i++) {
                RawHttp.Answer refused = RawHttp.exchange(server.url(), GET);
                assertEquals(503, refused.status(), refused.head() + refused.body());
                assertEquals("unavailable", refused.errorCode());
                assertTrue(refused.hasHeader("retry-after: 1"), refused.head());
            }
            for (Held h : held.subList(0, 5)) {
                h.socket().close();
            }
            ColdLogs.await("a freed slot to take a request", Duration.ofSeconds(10), () -> {
                try {
                    return RawHttp.exchange(server.url(), GET).status() == 200;
                } catch (IOException e) {
                    return false;
                }
            });
            for (Held h : held) {
                h.socket().close();
            }
            row.runs(1).operations(held.size() + 6).note("past 20 connections: 503 unavailable + Retry-After; served again once slots freed");
        }
    }

    @Test
    @Scenario("connection cap: per address")
    void connectionsPastThePerAddressCapShouldBeRefusedWith429WhileOtherAddressesAreServed(ReliabilityRow row) throws Exception {
        try (TestServer server = TestServer.start(dir, Map.of("STRAND_MAX_CONNECTIONS_PER_IP", "10", "STRAND_HEADER_TIMEOUT", "60s"))) {
            List<Held> held = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                held.add(Held.served(server.url(), "127.0.0.2"));
            }
            try (Socket eleventh = RawHttp.connect(server.url(), "127.0.0.2")) {
                eleventh.setSoTimeout(10_000);
                eleventh.getOutputStream().write(GET.getBytes(StandardCharsets.US_ASCII));
                RawHttp.Answer refused = RawHttp.read(eleventh.getInputStream());
                assertEquals(429, refused.status(), refused.head() + refused.body());
                assertEquals("too_many_connections", refused.errorCode());
            }
            for (int i = 0; i < 20; i++) {
                assertEquals(200, server.http.get("/v1/ws/acme/logs").status(), "another address is served");
            }
            try (Socket other = RawHttp.connect(server.url(), "127.0.0.3")) {
                other.setSoTimeout(10_000);
                other.getOutputStream().write(GET.getBytes(StandardCharsets.US_ASCII));
                assertEquals(200, RawHttp.read(other.getInputStream()).status());
            }
            for (Held h : held) {
                h.socket().close();
            }
            row.runs(1).operations(held.size() + 22).note("11th connection from one address: 429 too_many_connections; other addresses served");
        }
    }

    /** A connection that sent {@code partial} and then stops. */
    private record Held(Socket socket, InputStream in, OutputStream out, long openedNanos) {
        static Held open(String url, String localAddress, String partial) throws IOException {
            long opened = System.nanoTime();
            Socket s = RawHttp.connect(url, localAddress);
            s.setSoTimeout(15_000);
            s.getOutputStream().write(partial.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new Held(s, s.getInputStream(), s.getOutputStream(), opened);
        }

        /**
         * A kept-alive connection that was answered once, so the server has surely admitted and
         * counted it. A connection that only sent part of a head is counted when the server's thread
         * for it runs, which may come after a later connection's: a cap test holding those raced.
         */
        static Held served(String url, String localAddress) throws IOException {
            Held h = open(url, localAddress, GET);
            assertEquals(200, RawHttp.read(h.in()).status(), "a held connection is served before the cap is reached");
            return h;
        }
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.strand.app.testing.RawHttp;
import io.strand.app.testing.TestServer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §2 at the edge: every non-2xx answer carries the JSON error body, also the ones Helidon
 * gives outside routing (bad request lines, oversized URIs and heads, refused encodings, refused
 * upgrades), sent over raw TCP; unknown paths are {@code 404 not_found} and log nothing.
 */
@Timeout(120)
class EdgeErrorsIT {
    @TempDir
    static Path dir;
    static TestServer server;
    static final List<LogRecord> WARNINGS = new CopyOnWriteArrayList<>();
    static final Handler CAPTURE = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue() || r.getThrown() != null) {
                WARNINGS.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeAll
    static void start() {
        server = TestServer.start(dir, Map.of("STRAND_MAX_BODY_BYTES", "65536"));
        Logger.getLogger("").addHandler(CAPTURE);
    }

    @AfterAll
    static void stop() {
        Logger.getLogger("").removeHandler(CAPTURE);
        server.close();
    }

    private record Case(String name, String request, int status, String code) {
    }

    private static String get(String target) {
        return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
    }

    private static List<Case> cases() {
        String upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: MDEyMzQ1Njc4OWFiY2RlZg==\r\n"
                + "Sec-WebSocket-Version: 13\r\n";
        return List.of(
                new Case("root", get("/"), 404, "not_found"),
                new Case("favicon", get("/favicon.ico"), 404, "not_found"),
                new Case("swagger", get("/swagger.json"), 404, "not_found"), // /openapi is served
                new Case("version", get("/version"), 404, "not_found"),
                new Case("post outside /v1", "POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}", 404, "not_found"),
                new Case("unknown /v1 path", get("/v1/nope"), 404, "not_found"),
                new Case("unknown observe path", get("/observe/nope"), 404, "not_found"),
                new Case("uri too long", get("/v1/" + "a".repeat(4096)), 414, "uri_too_long"),
                new Case("oversized headers", "GET /v1/ws/acme/logs HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "b".repeat(20_000) + "\r\n\r\n",
                        431, "headers_too_large"),
                new Case("gzip body", "POST /v1/ws/acme/logs/l/entries HTTP/1.1\r\nHost: localhost\r\nContent-Encoding: gzip\r\n"
                        + "Content-Length: 10\r\n\r\n{\"data\":1}", 415, "unsupported_encoding"),
                new Case("body past the payload limit", "POST /v1/ws/acme/logs/l/entries HTTP/1.1\r\nHost: localhost\r\n"
                        + "Content-Length: 100000000\r\n\r\n", 413, "too_large"),
                new Case("garbage request line", "GARBAGE\r\n\r\n", 400, "bad_request"),
                // Helidon 4.5 (up to 4.5.3) reports this as an internal error (Method.create throws in Http1Prologue)
                new Case("bad method token", "G(T / HTTP/1.1\r\nHost: localhost\r\n\r\n", 400, "bad_request"),
                new Case("no Host header", "GET /v1/ws/acme/logs HTTP/1.1\r\n\r\n", 400, "bad_request"),
                new Case("bad header line", "GET /v1/ws/acme/logs HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n", 400, "bad_request"),
                new Case("HTTP/1.0", "GET /v1/ws/acme/logs HTTP/1.0\r\nHost: localhost\r\n\r\n", 505, "http_version_not_supported"),
                new Case("upgrade with a bad workspace", "GET /v1/ws/Bad_Name/socket HTTP/1.1\r\nHost: localhost\r\n" + upgrade + "\r\n",
                        400, "invalid_name"));
    }

    @TestFactory
    Stream<DynamicTest> everyRefusalShouldCarryTheSpecErrorBody() {
        return cases().stream().map(c -> dynamicTest(c.name(), () -> {
            RawHttp.Answer a = RawHttp.exchange(server.url(), c.request());
            assertEquals(c.status(), a.status(), c.name() + ": " + a.head() + a.body());
            assertTrue(a.hasHeader("content-type: application/json"), c.name() + ": " + a.head());
            assertEquals(c.code(), a.errorCode(), c.name() + ": " + a.body());
            assertTrue(!a.json().path("error").path("message").asText().isBlank(), c.name() + ": a message");
        }));
    }

    @Test
    void unknownPathsShouldLogNothing() throws Exception {
        WARNINGS.clear();
        for (String path : List.of("/", "/favicon.ico", "/swagger.json", "/version", "/v1/nope")) {
            for (int i = 0; i < 5; i++) {
                assertEquals(404, RawHttp.exchange(server.url(), get(path)).status(), path);
            }
        }
        assertNothingLogged("404s");
    }

    /** Anyone can send these: each one must not cost a stack trace in the log. */
    @Test
    void headsCutShortOrUnparsableShouldBeBadRequestsAndLogNothing() throws Exception {
        WARNINGS.clear();
        // head → whether an answer comes (Helidon closes a connection whose request line was cut without one)
        Map<String, Boolean> heads = Map.of(
                "GET /v1/ws/acme/logs HTTP/1.1\r\nHost: localhost\r\n", true,
                "GET /v1/ws/acme/logs HTT", false,
                "G(T / HTTP/1.1\r\nHost: localhost\r\n\r\n", true);
        for (var head : heads.entrySet()) {
            for (int i = 0; i < 5; i++) {
                try (Socket s = RawHttp.connect(server.url(), null)) {
                    s.setSoTimeout(10_000);
                    s.getOutputStream().write(head.getKey().getBytes(StandardCharsets.US_ASCII));
                    s.shutdownOutput(); // the client hangs up mid-head
                    if (head.getValue()) {
                        RawHttp.Answer a = RawHttp.read(s.getInputStream());
                        assertEquals(400, a.status(), head.getKey() + ": " + a.body());
                        assertEquals("bad_request", a.errorCode());
                    }
                    assertEquals(-1, s.getInputStream().read(), "the server closed it, so it has logged whatever it logs");
                }
            }
        }
        assertNothingLogged("heads cut short");
    }

    private static void assertNothingLogged(String what) {
        assertEquals(List.of(), WARNINGS.stream().map(r -> r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage()
                + (r.getThrown() == null ? "" : " " + r.getThrown())).toList(), "no warnings or stack traces for " + what);
    }
}

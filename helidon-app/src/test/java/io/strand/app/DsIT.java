package io.strand.app;

import static io.strand.app.testing.ColdLogs.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.TestServer;
import io.strand.core.Json;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Durable Streams endpoint (SPEC §14) against the real server: create, append, read with
 * offsets, JSON mode, long-poll, SSE, closure, producer dedupe, oversized bodies, and a DS stream
 * seen as a native log. The public conformance suite (ds-conformance/run.sh) covers the rest.
 */
@Timeout(120)
class DsIT {
    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static final AtomicInteger IDS = new AtomicInteger();
    @TempDir
    static Path dir;
    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(dir, Map.of("STRAND_DS_LONG_POLL_TIMEOUT", "5s"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static String fresh(String prefix) {
        return "/ds/acme/v1/stream/" + prefix + "-" + IDS.incrementAndGet();
    }

    static HttpResponse<byte[]> send(String method, String path, byte[] body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        try {
            return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (Exception e) {
            throw new IllegalStateException(method + " " + path + ": " + e, e);
        }
    }

    static HttpResponse<byte[]> send(String method, String path, String body, String... headers) {
        return send(method, path, body == null ? null : body.getBytes(StandardCharsets.UTF_8), headers);
    }

    static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }

    @Test
    void appendsShouldReadBackInOrderFromAnyOffsetTheServerReturned() {
        String s = fresh("bytes");
        HttpResponse<byte[]> created = send("PUT", s, "first;", "Content-Type", "text/plain");
        assertEquals(201, created.statusCode(), text(created));
        assertTrue(header(created, "Location").endsWith(s), header(created, "Location"));
        String afterFirst = header(created, "Stream-Next-Offset");
        assertEquals("0000000000000001_0000000000000000", afterFirst);
        HttpResponse<byte[]> appended = send("POST", s, "second;", "Content-Type", "text/plain");
        assertEquals(204, appended.statusCode(), text(appended));
        String tail = header(appended, "Stream-Next-Offset");
        assertTrue(tail.compareTo(afterFirst) > 0, tail + " after " + afterFirst);

        HttpResponse<byte[]> all = send("GET", s + "?offset=-1", (String) null);
        assertEquals(200, all.statusCode());
        assertEquals("first;second;", text(all));
        assertEquals(tail, header(all, "Stream-Next-Offset"));
        assertEquals("true", header(all, "Stream-Up-To-Date"));
        assertEquals("second;", text(send("GET", s + "?offset=" + afterFirst, (String) null)));
        HttpResponse<byte[]> atTail = send("GET", s + "?offset=" + tail, (String) null);
        assertEquals(0, atTail.body().length);
        assertEquals(tail, header(atTail, "Stream-Next-Offset"));
        assertEquals(400, send("GET", s + "?offset=1,2", (String) null).statusCode());
    }

    @Test
    void rawBytesShouldRoundTripExactlyIncludingBodiesLargerThanOneEntry() {
        String s = fresh("binary");
        byte[] big = new byte[700_000]; // several entries (190,000 raw bytes each)
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31 + 7);
        }
        assertEquals(201, send("PUT", s, big, "Content-Type", "application/octet-stream").statusCode());
        HttpResponse<byte[]> read = send("GET", s + "?offset=-1", (byte[]) null);
        assertArrayEquals(big, read.body());
        assertEquals("application/octet-stream", header(read, "Content-Type"));
    }

    @Test
    void jsonModeShouldStoreEachArrayElementAsOneMessageAndReadBackAnArray() {
        String s = fresh("json");
        assertEquals(201, send("PUT", s, "[]", "Content-Type", "application/json").statusCode());
        assertEquals(204, send("POST", s, "[{\"a\":1},{\"b\":2.50}]", "Content-Type", "application/json").statusCode());
        assertEquals(204, send("POST", s, "{\"c\":[3]}", "Content-Type", "application/json; charset=utf-8").statusCode());
        assertEquals(400, send("POST", s, "[]", "Content-Type", "application/json").statusCode());
        assertEquals(400, send("POST", s, "{\"broken\":", "Content-Type", "application/json").statusCode());
        assertEquals(409, send("POST", s, "x", "Content-Type", "text/plain").statusCode());
        HttpResponse<byte[]> read = send("GET", s + "?offset=-1", (String) null);
        assertEquals("[{\"a\":1},{\"b\":2.50},{\"c\":[3]}]", text(read));
        assertEquals("0000000000000003_0000000000000000", header(read, "Stream-Next-Offset"));
    }

    @Test
    void longPollShouldAnswerWithDataAppendedWhileItWaitsAnd204WhenNoneCame() throws Exception {
        String s = fresh("poll");
        // created with a first message, so its log exists (is listed) when the poll below parks on it
        HttpResponse<byte[]> created = send("PUT", s, "a", "Content-Type", "text/plain");
        String tail = header(created, "Stream-Next-Offset");
        HttpResponse<byte[]> timedOut = send("GET", s + "?offset=" + tail + "&live=long-poll", (String) null);
        assertEquals(204, timedOut.statusCode());
        assertEquals(tail, header(timedOut, "Stream-Next-Offset"));
        assertEquals("true", header(timedOut, "Stream-Up-To-Date"));
        assertTrue(header(timedOut, "Stream-Cursor").matches("\\d+"));

        // a poll waiting at the tail answers with the append it was waiting for
        CompletableFuture<HttpResponse<byte[]>> poll = CompletableFuture.supplyAsync(
                () -> send("GET", s + "?offset=" + tail + "&live=long-poll", (String) null));
        awaitParkedRead(poll);
        send("POST", s, "x", "Content-Type", "text/plain");
        HttpResponse<byte[]> r = poll.get(WOKEN_WITHIN_S, TimeUnit.SECONDS);
        assertEquals(200, r.statusCode(), "the append woke the waiting poll");
        assertEquals("x", text(r));
        assertTrue(header(r, "Stream-Cursor").matches("\\d+"));
    }

    /**
     * A parked poll must answer this soon after the append it waits for: under the server's long-poll
     * timeout (5 s), so a poll that only looked again when its wait ran out fails.
     */
    private static final int WOKEN_WITHIN_S = 4;

    /**
     * Waits until a read is parked on a log of the workspace (a long-poll holds a watch of its stream's
     * log while it waits; the log must exist to be listed), so that what the test appends next has to
     * wake it. Started after the
     * server's long-poll timeout (5 s here) would leave the poll answering 204: then it fails.
     */
    private static void awaitParkedRead(CompletableFuture<HttpResponse<byte[]>> poll) {
        await("a long-poll waiting on a log of acme", Duration.ofSeconds(5), () -> {
            if (poll.isDone()) {
                throw new AssertionError("the poll answered before anything was appended: " + poll.join().statusCode());
            }
            return server.server.logs().list("acme", null, 10_000).stream()
                    .mapToInt(log -> server.server.logs().watchers("acme", log)).sum() > 0;
        });
    }

    @Test
    void sseShouldSendEachChunkAsADataEventFollowedByControlAndEndAtClosure() throws Exception {
        String s = fresh("sse");
        send("PUT", s, "one\ntwo", "Content-Type", "text/plain");
        HttpRequest req = HttpRequest.newBuilder(URI.create(server.url() + s + "?offset=-1&live=sse")).GET().build();
        HttpResponse<InputStream> r = CLIENT.send(req, HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        assertEquals("text/event-stream", header(r, "Content-Type"));
        List<String> lines = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            readUntil(in, lines, "upToDate");
            assertEquals(List.of("event: data", "data:one", "data:two", "", "event: control"), lines.subList(0, 5));
            assertEquals(204, send("POST", s, "", "Stream-Closed", "true").statusCode());
            readUntil(in, lines, "streamClosed");
        }
        JsonNode last = Json.parse(lines.getLast().substring("data:".length()));
        assertTrue(last.path("streamClosed").asBoolean(), last.toString());
    }

    private static void readUntil(BufferedReader in, List<String> lines, String marker) throws Exception {
        String line;
        while ((line = in.readLine()) != null) {
            lines.add(line);
            if (line.startsWith("data:{") && line.contains(marker)) {
                return;
            }
        }
        throw new AssertionError("stream ended before " + marker + ": " + lines);
    }

    @Test
    void closedStreamShouldRefuseAppendsAndSayClosedAtItsTail() {
        String s = fresh("closed");
        send("PUT", s, "a", "Content-Type", "text/plain");
        HttpResponse<byte[]> close = send("POST", s, "b", "Content-Type", "text/plain", "Stream-Closed", "true");
        assertEquals(204, close.statusCode());
        assertEquals("true", header(close, "Stream-Closed"));
        HttpResponse<byte[]> refused = send("POST", s, "c", "Content-Type", "text/plain");
        assertEquals(409, refused.statusCode());
        assertEquals("stream_closed", Json.parse(refused.body()).path("error").path("code").asText());
        assertEquals("true", header(refused, "Stream-Closed"));
        HttpResponse<byte[]> read = send("GET", s + "?offset=-1", (String) null);
        assertEquals("ab", text(read));
        assertEquals("true", header(read, "Stream-Closed"));
        HttpResponse<byte[]> poll = send("GET", s + "?offset=" + header(read, "Stream-Next-Offset") + "&live=long-poll", (String) null);
        assertEquals(204, poll.statusCode());
        assertEquals("true", header(poll, "Stream-Closed"));
    }

    @Test
    void producerRetriesShouldBeAppliedOnceAndStaleEpochsRefused() {
        String s = fresh("producer");
        send("PUT", s, (String) null, "Content-Type", "text/plain");
        String[] p0 = {"Content-Type", "text/plain", "Producer-Id", "w", "Producer-Epoch", "1", "Producer-Seq", "0"};
        assertEquals(200, send("POST", s, "once", p0).statusCode());
        HttpResponse<byte[]> retry = send("POST", s, "once", p0);
        assertEquals(204, retry.statusCode());
        assertEquals("0", header(retry, "Producer-Seq"));
        HttpResponse<byte[]> gap = send("POST", s, "x", "Content-Type", "text/plain", "Producer-Id", "w", "Producer-Epoch", "1",
                "Producer-Seq", "5");
        assertEquals(409, gap.statusCode());
        assertEquals("1", header(gap, "Producer-Expected-Seq"));
        HttpResponse<byte[]> stale = send("POST", s, "x", "Content-Type", "text/plain", "Producer-Id", "w", "Producer-Epoch", "0",
                "Producer-Seq", "1");
        assertEquals(403, stale.statusCode());
        assertEquals("1", header(stale, "Producer-Epoch"));
        assertEquals(400, send("POST", s, "x", "Content-Type", "text/plain", "Producer-Id", "w").statusCode());
        assertEquals("once", text(send("GET", s + "?offset=-1", (String) null)));
    }

    @Test
    void oversizedBodyShouldGet413AsAnAnswerAndAppendNothing() {
        String s = fresh("big");
        send("PUT", s, (String) null, "Content-Type", "application/octet-stream");
        byte[] tooBig = new byte[(int) server.server.config().maxBodyBytes() * 2 + (2 << 20)]; // past Helidon's own payload limit too
        HttpResponse<byte[]> r = send("POST", s, tooBig, "Content-Type", "application/octet-stream");
        assertEquals(413, r.statusCode());
        assertEquals("*", header(r, "Access-Control-Allow-Origin"));
        assertEquals(0, send("GET", s + "?offset=-1", (String) null).body().length);
    }

    @Test
    void dsStreamShouldBeANativeLogWhoseInfoNamesItsPathAndContentType() {
        String s = fresh("native");
        send("PUT", s, "[{\"n\":1},{\"n\":2}]", "Content-Type", "application/json");
        JsonNode logs = Json.parse(send("GET", "/v1/ws/acme/logs?limit=1000", (String) null).body()).get("logs");
        String logName = null;
        for (JsonNode n : logs) {
            JsonNode info = Json.parse(send("GET", "/v1/ws/acme/logs/" + n.asText(), (String) null).body());
            if (s.substring("/ds/acme/".length()).equals(info.path("dsPath").asText())) {
                logName = n.asText();
                assertEquals("application/json", info.path("contentType").asText());
                assertEquals(2, info.path("head").asLong());
            }
        }
        assertTrue(logName != null && logName.startsWith("ds-"), "no native log holds " + s + " among " + logs);
        JsonNode page = Json.parse(send("GET", "/v1/ws/acme/logs/" + logName + "/entries?from=2", (String) null).body());
        assertEquals(2, page.path("entries").get(0).path("seq").asLong());
        assertEquals(2, page.path("entries").get(0).path("data").path("n").asInt());
        JsonNode plain = Json.parse(send("GET", "/v1/ws/acme/logs?limit=1000", (String) null).body());
        assertFalse(plain.toString().contains("/"), "listing stays names only");
    }

    @Test
    void listingWithDsShouldNameEachStreamsPathAndContentTypeAndLeaveNativeLogsOut() {
        String s = fresh("listed");
        send("PUT", s, "x", "Content-Type", "text/plain");
        assertEquals(200, server.http.post("/v1/ws/acme/logs/plain-listed/entries", "{\"data\":1}").status());
        JsonNode body = Json.parse(send("GET", "/v1/ws/acme/logs?limit=1000&ds=true", (String) null).body());
        JsonNode found = null;
        for (var e : body.path("ds").properties()) {
            if (s.substring("/ds/acme/".length()).equals(e.getValue().path("dsPath").asText())) {
                found = e.getValue();
                assertTrue(body.path("logs").toString().contains("\"" + e.getKey() + "\""), "listed log " + e.getKey());
            }
        }
        assertTrue(found != null, "no ds entry for " + s + " in " + body);
        assertEquals("text/plain", found.path("contentType").asText());
        assertTrue(body.path("logs").toString().contains("\"plain-listed\""));
        assertFalse(body.path("ds").has("plain-listed"), "a native log has no DS notes");
    }

    @Test
    void preflightShouldAnswer204WithCorsHeadersAndDeletedStreamsShouldBeGone() {
        String s = fresh("cors");
        HttpResponse<byte[]> pre = send("OPTIONS", s, (String) null, "Origin", "http://example.test",
                "Access-Control-Request-Method", "POST");
        assertEquals(204, pre.statusCode());
        assertTrue(header(pre, "Access-Control-Allow-Headers").contains("Producer-Id"));
        send("PUT", s, "x", "Content-Type", "text/plain");
        assertEquals(204, send("DELETE", s, (String) null).statusCode());
        assertEquals(404, send("GET", s + "?offset=-1", (String) null).statusCode());
        HttpResponse<byte[]> again = send("PUT", s, (String) null, "Content-Type", "text/plain");
        assertEquals(201, again.statusCode());
        assertEquals(0, send("GET", s + "?offset=-1", (String) null).body().length);
        assertNull(header(again, "Stream-Closed"));
    }

    @Test
    void nativeLogShouldReadAsAJsonStreamUnderLogAndRefuseWrites() throws Exception {
        String log = "native-" + IDS.incrementAndGet();
        assertEquals(200, server.http.post("/v1/ws/acme/logs/" + log + "/entries",
                "{\"entries\":[{\"data\":{\"n\":1}},{\"data\":\"two\"}]}").status());
        HttpResponse<byte[]> read = send("GET", "/ds/acme/_log/" + log + "?offset=-1", (String) null);
        assertEquals(200, read.statusCode(), text(read));
        assertEquals("[{\"n\":1},\"two\"]", text(read));
        assertEquals("0000000000000002_0000000000000000", header(read, "Stream-Next-Offset"), "DS offsets are native seqs");
        CompletableFuture<HttpResponse<byte[]>> poll = CompletableFuture.supplyAsync(() -> send("GET",
                "/ds/acme/_log/" + log + "?offset=" + header(read, "Stream-Next-Offset") + "&live=long-poll", (String) null));
        awaitParkedRead(poll);
        server.http.post("/v1/ws/acme/logs/" + log + "/entries", "{\"data\":3}");
        HttpResponse<byte[]> r = poll.get(WOKEN_WITHIN_S, TimeUnit.SECONDS);
        assertEquals("[3]", text(r));
        assertEquals(405, send("POST", "/ds/acme/_log/" + log, "[1]", "Content-Type", "application/json").statusCode());
        assertEquals(405, send("DELETE", "/ds/acme/_log/" + log, (String) null).statusCode());
        assertEquals(404, send("GET", "/ds/acme/_log/no-such-log?offset=-1", (String) null).statusCode());
    }

    @Test
    void nativeWritesToAStreamsLogShouldBeRefusedAndLeaveTheStreamAsItWas() {
        String closed = fresh("native-closed");
        assertEquals(201, send("PUT", closed, "[{\"a\":1}]", "Content-Type", "application/json", "Stream-Closed", "true")
                .statusCode());
        String bytes = fresh("native-bytes");
        assertEquals(201, send("PUT", bytes, "abc", "Content-Type", "text/plain").statusCode());
        String closedLog = logOf(closed);
        String bytesLog = logOf(bytes);

        var append = server.http.post("/v1/ws/acme/logs/" + closedLog + "/entries", "{\"data\":{\"after\":\"close\"}}");
        assertEquals(409, append.status(), append.body());
        assertEquals("stream_conflict", append.errorCode());
        assertTrue(append.body().contains(closed.substring("/ds/acme/".length())), "names the stream: " + append.body());
        var inTxn = server.http.post("/v1/ws/acme/txn", "{\"append\":[{\"log\":\"" + bytesLog + "\",\"data\":\"not-base64\"}]}");
        assertEquals(409, inTxn.status(), inTxn.body());
        var delete = server.http.delete("/v1/ws/acme/logs/" + bytesLog);
        assertEquals(409, delete.status(), delete.body());

        HttpResponse<byte[]> closedRead = send("GET", closed + "?offset=-1", (String) null);
        assertEquals("[{\"a\":1}]", text(closedRead), "a closed stream did not grow");
        assertEquals("true", header(closedRead, "Stream-Closed"));
        assertEquals("abc", text(send("GET", bytes + "?offset=-1", (String) null)), "the byte stream still decodes");
        assertEquals(1, server.http.get("/v1/ws/acme/logs/" + bytesLog).json().path("head").asLong(), "nothing appended");
        var page = server.http.get("/v1/ws/acme/logs/" + closedLog + "/entries?from=1");
        assertEquals(200, page.status(), "native reads stay open: " + page.body());
    }

    @Test
    void readsBelowATrimShouldAnswer410AndReadsFromTheStartShouldBeginAtTheFirstEntryKept() throws Exception {
        String s = fresh("trimmed");
        assertEquals(201, send("PUT", s, "[1,2,3,4,5]", "Content-Type", "application/json").statusCode());
        String log = logOf(s);
        var trim = server.http.post("/v1/ws/acme/logs/" + log + "/trim", "{\"before\":4}");
        assertEquals(200, trim.status(), trim.body());

        String belowFirst = "0000000000000001_0000000000000000";
        HttpResponse<byte[]> gone = send("GET", s + "?offset=" + belowFirst, (String) null);
        assertEquals(410, gone.statusCode(), text(gone));
        assertTrue(text(gone).contains("0000000000000003_0000000000000000"), "says where reading can go on: " + text(gone));
        assertEquals(410, send("GET", s + "?offset=" + belowFirst + "&live=long-poll", (String) null).statusCode());
        assertEquals(410, send("GET", s + "?offset=" + belowFirst + "&live=sse", (String) null).statusCode());
        HttpResponse<byte[]> fromStart = send("GET", s + "?offset=-1", (String) null);
        assertEquals("[4,5]", text(fromStart), "from the start: the entries kept");
        assertEquals("[4,5]", text(send("GET", s + "?offset=0000000000000003_0000000000000000", (String) null)));
        assertEquals("[5]", text(send("GET", s + "?offset=0000000000000004_0000000000000000", (String) null)));
    }

    @Test
    void aByteStreamsOffsetShouldStartInsideItsEntryAndAJsonStreamsShouldBeWhole() {
        String s = fresh("byte-offset");
        assertEquals(201, send("PUT", s, "hello", "Content-Type", "text/plain").statusCode());
        assertEquals(204, send("POST", s, " world", "Content-Type", "text/plain").statusCode());
        assertEquals("lo world", text(send("GET", s + "?offset=0000000000000000_0000000000000003", (String) null)));
        assertEquals("orld", text(send("GET", s + "?offset=0000000000000001_0000000000000002", (String) null)));
        assertEquals(" world", text(send("GET", s + "?offset=0000000000000000_0000000000000005", (String) null)),
                "the entry's length is the next entry's start");
        assertEquals(400, send("GET", s + "?offset=0000000000000000_0000000000000099", (String) null).statusCode());
        assertEquals(400, send("GET", s + "?offset=0000000000000002_0000000000000001", (String) null).statusCode(),
                "no entry to be inside of");
        String j = fresh("json-offset");
        assertEquals(201, send("PUT", j, "[1,2]", "Content-Type", "application/json").statusCode());
        assertEquals(400, send("GET", j + "?offset=0000000000000000_0000000000000001", (String) null).statusCode());
    }

    /** The native log holding DS stream {@code dsUrlPath}, or null. */
    static String logOf(String dsUrlPath) {
        for (JsonNode n : Json.parse(send("GET", "/v1/ws/acme/logs?limit=1000", (String) null).body()).get("logs")) {
            JsonNode info = Json.parse(send("GET", "/v1/ws/acme/logs/" + n.asText(), (String) null).body());
            if (dsUrlPath.substring("/ds/acme/".length()).equals(info.path("dsPath").asText())) {
                return n.asText();
            }
        }
        return null;
    }

    @Test
    void expiredStreamShouldBeDeletedEvenWhenNobodyTouchesItAgain() throws Exception {
        String s = fresh("ttl");
        assertEquals(201, send("PUT", s, "short-lived", "Content-Type", "text/plain", "Stream-TTL", "1").statusCode());
        String log = logOf(s);
        assertTrue(log != null, "the stream has a native log");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (send("GET", "/v1/ws/acme/logs/" + log, (String) null).statusCode() != 404) {
            assertTrue(System.nanoTime() < deadline, "the expired stream's log was never deleted");
            TimeUnit.MILLISECONDS.sleep(100); // polling with a deadline
        }
        assertEquals(404, send("HEAD", s, (String) null).statusCode());
    }

    @Test
    void forkShouldCopyUpToItsOffsetAndStayIdempotentWhenItInheritsItsSourcesTtl() {
        String src = fresh("fork-src");
        HttpResponse<byte[]> created = send("PUT", src, "a", "Content-Type", "text/plain", "Stream-TTL", "3600");
        send("POST", src, "b", "Content-Type", "text/plain");
        String fork = fresh("fork");
        String[] headers = {"Content-Type", "text/plain", "Stream-Forked-From", src.substring("/ds/acme".length()),
                "Stream-Fork-Offset", header(created, "Stream-Next-Offset")};
        assertEquals(201, send("PUT", fork, (String) null, headers).statusCode());
        assertEquals(200, send("PUT", fork, (String) null, headers).statusCode(), "the same fork again is idempotent");
        assertEquals("3600", header(send("HEAD", fork, (String) null), "Stream-TTL"), "the fork inherits its source's TTL");
        send("POST", fork, "c", "Content-Type", "text/plain");
        assertEquals("ac", text(send("GET", fork + "?offset=-1", (String) null)));
        assertEquals("ab", text(send("GET", src + "?offset=-1", (String) null)));
        assertEquals(204, send("DELETE", src, (String) null).statusCode());
        assertEquals(410, send("GET", src + "?offset=-1", (String) null).statusCode(), "kept, soft-deleted, while a fork lives");
        assertEquals(204, send("DELETE", fork, (String) null).statusCode());
        assertEquals(404, send("GET", src + "?offset=-1", (String) null).statusCode(), "collected with its last fork");
    }
}

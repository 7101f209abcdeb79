package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.RawSocket;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import io.strand.core.Json;
import io.strand.docstore.DocStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(180)
class SocketIT {
    @TempDir
    static Path dir;
    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(dir, Map.of("STRAND_DURABILITY", "fsync", "STRAND_HEARTBEAT", "1s"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String batch(int from, int n) {
        StringBuilder sb = new StringBuilder("\"entries\":[");
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"data\":{\"n\":").append(from + i).append("}}");
        }
        return sb.append(']').toString();
    }

    @Test
    void pipelinedAppendsFromEightSocketsShouldGetDenseUniqueSeqs() throws Exception {
        List<WsClient> clients = new ArrayList<>();
        for (int c = 0; c < 8; c++) {
            clients.add(WsClient.connect(server.wsUrl("acme")));
        }
        for (WsClient c : clients) {
            for (int i = 0; i < 250; i++) {
                c.request("append", "\"log\":\"pipelined\",\"data\":{\"i\":" + i + "}");
            }
        }
        Set<Long> seqs = new HashSet<>();
        for (WsClient c : clients) {
            for (int i = 0; i < 250; i++) {
                JsonNode reply = c.next(30_000);
                assertTrue(reply.get("ok").asBoolean(), reply.toString());
                assertTrue(seqs.add(reply.get("firstSeq").asLong()), "duplicate seq " + reply);
            }
            c.close();
        }
        assertEquals(2000, seqs.size());
        for (long s = 1; s <= 2000; s++) {
            assertTrue(seqs.contains(s), "missing seq " + s);
        }
    }

    /**
     * Replies queued together for one socket go out in bursts of up to {@code SocketWriter.BURST_BYTES}
     * per socket write: sixteen pipelined gets of a 20 KB doc (320 KB of replies) need several, and
     * every reply must still arrive whole, once, in the order asked.
     */
    /**
     * Appends pipelined on one socket are checked in the order sent, also on a log that does not exist
     * yet: the second's expectedLastSeq 1 is judged after the first created the log (it was refused
     * with head 0 before the first had run); one sent alone to a missing log is refused and creates nothing.
     */
    @Test
    void aPipelinedConditionalAppendToANewLogShouldSeeTheAppendBeforeIt() {
        try (WsClient c = WsClient.connect(server.wsUrl("pipe"))) {
            for (int i = 0; i < 20; i++) {
                long first = c.request("append", "\"log\":\"new" + i + "\",\"data\":1");
                long second = c.request("append", "\"log\":\"new" + i + "\",\"data\":2,\"expectedLastSeq\":1");
                JsonNode a = c.reply(first, 10_000);
                JsonNode b = c.reply(second, 10_000);
                assertTrue(a.path("ok").asBoolean(), a.toString());
                assertTrue(b.path("ok").asBoolean(), "in order: " + b);
                assertEquals(2, b.path("firstSeq").asLong(), b.toString());
            }
            JsonNode alone = c.reply(c.request("append", "\"log\":\"never\",\"data\":1,\"expectedLastSeq\":1"), 10_000);
            assertEquals("seq_mismatch", alone.path("error").path("code").asText(), alone.toString());
            assertEquals(404, server.http.get("/v1/ws/pipe/logs/never").status(), "a refused first append creates no log");
        }
    }

    @Test
    void pipelinedRepliesLargerThanOneBurstShouldArriveWholeAndInOrder() throws Exception {
        String value = "x".repeat(20_000);
        try (WsClient c = WsClient.connect(server.wsUrl("acme"))) {
            assertTrue(c.reply(c.request("doc.put", "\"doc\":\"big\",\"value\":{\"v\":\"" + value + "\"}"), 10_000).get("ok").asBoolean());
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                ids.add(c.request("doc.get", "\"doc\":\"big\""));
            }
            for (long id : ids) {
                JsonNode reply = c.next(10_000);
                assertEquals(id, reply.get("id").asLong(), "replies come in request order");
                assertTrue(reply.get("ok").asBoolean(), () -> reply.toString().substring(0, Math.min(200, reply.toString().length())));
                assertEquals(value, reply.get("value").get("v").asText());
            }
        }
    }

    @Test
    void subscribeShouldDeliverEveryEntryOnceAcrossDisconnectAndResume() throws Exception {
        String log = "replay";
        try (WsClient writer = WsClient.connect(server.wsUrl("acme"))) {
            for (int i = 0; i < 100; i++) { // 50,000 entries in batches of 500
                writer.request("append", "\"log\":\"" + log + "\"," + batch(i * 500 + 1, 500));
            }
            for (int i = 0; i < 100; i++) {
                assertTrue(writer.next(30_000).get("ok").asBoolean());
            }
        }
        // keep appending while subscribers replay
        AtomicBoolean appending = new AtomicBoolean(true);
        AtomicLong appended = new AtomicLong(50_000);
        Thread background = Thread.ofVirtual().start(() -> {
            try (WsClient w = WsClient.connect(server.wsUrl("acme"))) {
                while (appending.get()) {
                    long id = w.request("append", "\"log\":\"" + log + "\"," + batch(0, 10));
                    JsonNode r = w.reply(id, 30_000);
                    appended.set(r.get("lastSeq").asLong());
                }
            }
        });
        List<Long> received = new ArrayList<>();
        long next = 1;
        boolean sawProgressOrCaughtUp = false;
        // first connection: read ~20,000 entries then drop the connection abruptly
        WsClient sub = WsClient.connect(server.wsUrl("acme"));
        long id = sub.request("subscribe", "\"log\":\"" + log + "\",\"from\":1,\"sub\":\"r\"");
        JsonNode reply = sub.next(10_000);
        assertEquals(id, reply.get("id").asLong());
        assertEquals("r", reply.get("sub").asText());
        while (received.size() < 20_000) {
            JsonNode f = sub.next(10_000);
            if ("entries".equals(f.path("type").asText())) {
                assertTrue(f.get("entries").size() <= 500);
                f.get("entries").forEach(e -> received.add(e.get("seq").asLong()));
                next = f.get("next").asLong();
            }
        }
        sub.abort();
        // resume from the cursor on a new socket until caught up with everything appended so far
        appending.set(false);
        background.join();
        long target = appended.get();
        WsClient resumed = WsClient.connect(server.wsUrl("acme"));
        resumed.request("subscribe", "\"log\":\"" + log + "\",\"from\":" + next);
        assertTrue(resumed.next(10_000).get("ok").asBoolean());
        boolean caughtUp = false;
        while (!caughtUp || received.getLast() < target) {
            JsonNode f = resumed.next(20_000);
            switch (f.path("type").asText()) {
                case "entries" -> f.get("entries").forEach(e -> received.add(e.get("seq").asLong()));
                case "caughtUp" -> caughtUp = true;
                case "progress" -> {
                    sawProgressOrCaughtUp = true;
                    assertTrue(f.get("head").asLong() >= f.get("next").asLong());
                }
                default -> { }
            }
        }
        resumed.close();
        for (int i = 0; i < received.size(); i++) {
            assertEquals(i + 1, received.get(i), "entry at position " + i);
        }
        assertEquals(target, received.size());
    }

    @Test
    void latestShouldDeliverEveryEntryAcknowledgedAfterTheReply() {
        try (WsClient w = WsClient.connect(server.wsUrl("acme")); WsClient s = WsClient.connect(server.wsUrl("acme"))) {
            for (int i = 0; i < 5; i++) {
                w.reply(w.request("append", "\"log\":\"latest\",\"data\":" + i), 10_000);
            }
            long id = s.request("subscribe", "\"log\":\"latest\",\"from\":\"latest\"");
            JsonNode reply = s.reply(id, 10_000);
            assertEquals(6, reply.get("from").asLong());
            assertEquals(5, reply.get("head").asLong());
            w.reply(w.request("append", "\"log\":\"latest\",\"data\":\"new\""), 10_000);
            List<Long> got = new ArrayList<>();
            while (got.isEmpty()) {
                JsonNode f = s.next(10_000);
                if ("entries".equals(f.path("type").asText())) {
                    f.get("entries").forEach(e -> got.add(e.get("seq").asLong()));
                }
            }
            assertEquals(List.of(6L), got);
            // a quiet subscription gets heartbeats (1 s in this test)
            JsonNode hb = s.next(5_000);
            while (!"heartbeat".equals(hb.path("type").asText())) {
                hb = s.next(5_000);
            }
            assertEquals(6, hb.get("head").asLong());
        }
    }

    @Test
    void subscriptionToMissingLogShouldWaitForItsFirstEntry() {
        try (WsClient s = WsClient.connect(server.wsUrl("acme")); WsClient w = WsClient.connect(server.wsUrl("acme"))) {
            s.reply(s.request("subscribe", "\"log\":\"born-later\",\"from\":0"), 10_000);
            JsonNode caught = s.next(5_000);
            assertEquals("caughtUp", caught.get("type").asText());
            w.reply(w.request("append", "\"log\":\"born-later\",\"data\":1"), 10_000);
            JsonNode f = s.next(5_000);
            while (!"entries".equals(f.path("type").asText())) {
                f = s.next(5_000);
            }
            assertEquals(1, f.get("entries").get(0).get("seq").asLong());
        }
    }

    @Test
    void creditWindowShouldLimitDelivery() {
        try (WsClient w = WsClient.connect(server.wsUrl("acme")); WsClient s = WsClient.connect(server.wsUrl("acme"))) {
            w.reply(w.request("append", "\"log\":\"credit\"," + batch(1, 50)), 10_000);
            s.reply(s.request("subscribe", "\"log\":\"credit\",\"from\":1,\"window\":10,\"sub\":\"c\""), 10_000);
            JsonNode f = s.next(5_000);
            assertEquals(10, f.get("entries").size());
            assertEquals(11, f.get("next").asLong());
            long creditId = s.request("credit", "\"sub\":\"c\",\"n\":15");
            int got = 0;
            boolean replied = false;
            while (got < 15 || !replied) {
                JsonNode x = s.next(5_000);
                if (x.has("id")) {
                    assertEquals(creditId, x.get("id").asLong());
                    assertTrue(x.get("ok").asBoolean());
                    replied = true;
                } else if ("entries".equals(x.path("type").asText())) {
                    got += x.get("entries").size();
                }
            }
            assertEquals(15, got);
            long unsub = s.request("unsubscribe", "\"sub\":\"c\"");
            assertTrue(s.reply(unsub, 5_000).get("ok").asBoolean());
            assertEquals("not_found", s.reply(s.request("unsubscribe", "\"sub\":\"c\""), 5_000).path("error").path("code").asText());
        }
    }

    @Test
    void slowSubscriberShouldStayConnectedWithBoundedHeapAndNotSlowOthers() throws Exception {
        String log = "firehose";
        WsClient slow = WsClient.slow(server.wsUrl("acme"));
        slow.request("subscribe", "\"log\":\"" + log + "\",\"from\":1");
        WsClient fast = WsClient.connect(server.wsUrl("acme"));
        fast.request("subscribe", "\"log\":\"" + log + "\",\"from\":1");
        AtomicLong fastSeen = new AtomicLong();
        Thread fastReader = Thread.ofVirtual().start(() -> {
            while (true) {
                try {
                    JsonNode f = fast.frames.poll(20, TimeUnit.SECONDS);
                    if (f == null) {
                        return;
                    }
                    if ("entries".equals(f.path("type").asText())) {
                        fastSeen.set(f.get("next").asLong() - 1);
                    }
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        Runtime rt = Runtime.getRuntime();
        long total = 0;
        long heapMax = 0;
        try (WsClient w = WsClient.connect(server.wsUrl("acme"))) {
            // ~5,000 entries/s of 1 KiB for 5 s; the slow client takes one frame a second
            String payload = "x".repeat(1000);
            for (int sec = 0; sec < 5; sec++) {
                long start = System.nanoTime();
                for (int b = 0; b < 10; b++) {
                    StringBuilder sb = new StringBuilder("\"log\":\"" + log + "\",\"entries\":[");
                    for (int i = 0; i < 500; i++) {
                        sb.append(i == 0 ? "" : ",").append("{\"data\":\"").append(payload).append("\"}");
                    }
                    w.reply(w.request("append", sb.append(']').toString()), 30_000);
                    total += 500;
                }
                slow.demand(1);
                heapMax = Math.max(heapMax, rt.totalMemory() - rt.freeMemory());
                long spent = (System.nanoTime() - start) / 1_000_000;
                if (spent < 1000) {
                    Thread.sleep(1000 - spent); // pacing the load generator, not synchronisation
                }
            }
        }
        long deadline = System.currentTimeMillis() + 30_000;
        while (fastSeen.get() < total && System.currentTimeMillis() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll without burning a core
        }
        assertEquals(total, fastSeen.get(), "fast subscriber saw everything");
        assertFalse(slow.closed.isDone(), "slow subscriber must stay connected");
        assertTrue(heapMax < 900L << 20, "heap stayed bounded: " + (heapMax >> 20) + " MiB");
        // the slow one still gets everything in order once it reads
        slow.demand(Long.MAX_VALUE);
        long expect = 1;
        while (expect <= total) {
            JsonNode f = slow.next(30_000);
            if ("entries".equals(f.path("type").asText())) {
                for (JsonNode e : f.get("entries")) {
                    assertEquals(expect++, e.get("seq").asLong());
                }
            }
        }
        slow.close();
        fast.close();
        fastReader.join();
    }

    /**
     * The {@code read} op: forward pages (served on the socket's own thread from pooled cursors),
     * backward and by-time pages (handed to a reply thread), two readers interleaved on one log, keys
     * and non-ASCII data; every page carries exactly what was written and equals the HTTP page.
     */
    @Test
    void readOpShouldPageExactlyWhatWasWrittenLikeHttp() throws Exception {
        String log = "ws-pages";
        List<String> written = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        try (WsClient writer = WsClient.connect(server.wsUrl("acme"))) {
            for (int i = 1; i <= 40; i++) {
                StringBuilder req = new StringBuilder("\"log\":\"" + log + "\",\"entries\":[");
                int n = i % 4 == 0 ? 9 : 1;
                for (int j = 0; j < n; j++) {
                    String d = "{\"i\":" + i + ",\"j\":" + j + ",\"s\":\"\u00e9\u4e2d\\\"q\"}";
                    String key = j % 3 == 0 ? "k\\\"\u00fc" + j : null;
                    written.add(Json.MAPPER.readTree(d).toString());
                    keys.add(key == null ? null : Json.MAPPER.readTree("\"" + key + "\"").asText());
                    req.append(j == 0 ? "" : ",").append("{\"data\":").append(d).append(key == null ? "" : ",\"key\":\"" + key + "\"").append('}');
                }
                JsonNode ack = writer.reply(writer.request("append", req.append(']').toString()), 30_000);
                assertTrue(ack.get("ok").asBoolean(), ack.toString());
            }
        }
        try (WsClient a = WsClient.connect(server.wsUrl("acme")); WsClient b = WsClient.connect(server.wsUrl("acme"))) {
            long nextA = 1;
            long nextB = 1;
            int page = 0;
            while (nextA <= written.size() || nextB <= written.size()) {
                String idA = "\"a-" + page + "\"";
                a.send("{\"id\":" + idA + ",\"op\":\"read\",\"log\":\"" + log + "\",\"from\":" + nextA + ",\"limit\":7}");
                JsonNode ra = a.next(10_000);
                assertEquals("a-" + page, ra.get("id").asText(), "a string id comes back as the same JSON value");
                nextA = checkPage(ra, nextA, written, keys, "/v1/ws/acme/logs/" + log + "/entries?from=" + nextA + "&limit=7");
                JsonNode rb = b.reply(b.request("read", "\"log\":\"" + log + "\",\"from\":" + nextB + ",\"limit\":5"), 10_000);
                nextB = checkPage(rb, nextB, written, keys, "/v1/ws/acme/logs/" + log + "/entries?from=" + nextB + "&limit=5");
                page++;
            }
            JsonNode back = a.reply(a.request("read", "\"log\":\"" + log + "\",\"before\":\"end\",\"limit\":6"), 10_000);
            assertEquals(written.size() - 5, back.get("prev").asLong());
            assertEquals(withoutReplyFields(back), server.http.get("/v1/ws/acme/logs/" + log + "/entries?before=end&limit=6").json());
            long ts = back.get("entries").get(0).get("ts").asLong();
            JsonNode byTime = a.reply(a.request("read", "\"log\":\"" + log + "\",\"fromTime\":" + ts + ",\"limit\":3"), 10_000);
            assertEquals(withoutReplyFields(byTime), server.http.get("/v1/ws/acme/logs/" + log + "/entries?fromTime=" + ts + "&limit=3").json());
        }
    }

    /** Checks one forward page from {@code from} against what was written and the HTTP page; returns its next. */
    private static long checkPage(JsonNode reply, long from, List<String> written, List<String> keys, String httpPath) {
        assertTrue(reply.get("ok").asBoolean(), reply.toString());
        JsonNode entries = reply.get("entries");
        for (int i = 0; i < entries.size(); i++) {
            JsonNode e = entries.get(i);
            int idx = (int) (from + i - 1);
            assertEquals(from + i, e.get("seq").asLong());
            assertEquals(written.get(idx), e.get("data").toString(), "data of seq " + (from + i));
            assertEquals(keys.get(idx), e.has("key") ? e.get("key").asText() : null, "key of seq " + (from + i));
        }
        long next = reply.get("next").asLong();
        assertEquals(Math.min(from, written.size() + 1) + entries.size(), next);
        assertEquals(written.size(), reply.get("head").asLong());
        assertEquals(withoutReplyFields(reply), server.http.get(httpPath).json());
        return next;
    }

    private static JsonNode withoutReplyFields(JsonNode reply) {
        com.fasterxml.jackson.databind.node.ObjectNode page = reply.deepCopy();
        page.remove("id");
        page.remove("ok");
        return page;
    }

    @Test
    void badFramesShouldGetErrorRepliesAndKeepTheSocketUsable() throws Exception {
        try (WsClient c = WsClient.connect(server.wsUrl("acme"))) {
            c.send("{not json");
            JsonNode r = c.next(5_000);
            assertTrue(r.get("id").isNull());
            assertEquals("bad_frame", r.path("error").path("code").asText());
            c.send("[1,2]");
            assertEquals("bad_frame", c.next(5_000).path("error").path("code").asText());
            c.send("{\"id\":\"a\",\"op\":\"nope\"}");
            JsonNode unknown = c.next(5_000);
            assertEquals("a", unknown.get("id").asText());
            assertEquals("unknown_op", unknown.path("error").path("code").asText());
            c.send("{\"id\":2,\"op\":\"append\",\"log\":\"../etc\",\"data\":1}");
            assertEquals("invalid_name", c.next(5_000).path("error").path("code").asText());
            c.send("{\"id\":3,\"op\":\"append\",\"log\":\"ok\"}");
            assertEquals("bad_request", c.next(5_000).path("error").path("code").asText());
            c.send("{\"id\":4,\"op\":\"subscribe\",\"log\":\"ok\",\"from\":\"yesterday\"}");
            assertEquals("bad_request", c.next(5_000).path("error").path("code").asText());
            c.send("{\"id\":5,\"op\":\"read\",\"log\":\"ok\",\"limit\":5000}");
            assertEquals("bad_request", c.next(5_000).path("error").path("code").asText());
            long ping = c.request("ping", "");
            JsonNode pong = c.reply(ping, 5_000);
            assertTrue(pong.get("ok").asBoolean());
            assertTrue(pong.get("ts").asLong() > 0);
            c.send("{\"id\":\"s-\\\"1\",\"op\":\"append\",\"log\":\"ids\",\"data\":1}"); // a string id that needs escaping
            JsonNode appended = c.next(5_000);
            assertEquals("s-\"1", appended.get("id").asText(), appended.toString());
            assertTrue(appended.get("ok").asBoolean(), appended.toString());
            c.send("{\"id\":\"r\",\"op\":\"read\",\"log\":\"ids\",\"from\":1}");
            JsonNode page = c.next(5_000);
            assertEquals("r", page.get("id").asText(), page.toString());
            assertEquals(1, page.get("entries").size(), page.toString());
            long read = c.request("read", "\"log\":\"never\",\"from\":1");
            assertEquals(0, c.reply(read, 5_000).get("head").asLong());
        }
        assertEquals(1009, RawSocket.closeCodeAfterOversizeFrame(server.wsUrl("acme"), 1100 * 1024));
        assertEquals(1009, RawSocket.closeCodeAfterFragments(server.wsUrl("acme"), 600 * 1024, 2),
                "fragments that add up past the limit");
        try (WsClient other = WsClient.connect(server.wsUrl("acme"))) {
            assertTrue(other.reply(other.request("ping", ""), 5_000).get("ok").asBoolean());
        }
    }


    @Test
    void docOpsShouldRefuseADocTooDeepToReadBackAndChangeNothing() {
        try (WsClient c = WsClient.connect(server.wsUrl("acme"))) {
            assertTrue(c.reply(c.request("doc.put", "\"doc\":\"deep\",\"value\":{\"x\":1}"), 10_000).get("ok").asBoolean());
            JsonNode cas = c.reply(c.request("doc.cas", "\"doc\":\"deep\",\"path\":\"" + DocsIT.LONGEST_PATH
                    + "\",\"value\":" + DocsIT.nested(254)), 10_000);
            assertEquals("bad_request", cas.path("error").path("code").asText(), cas.toString());
            JsonNode apply = c.reply(c.request("doc.apply", "\"doc\":\"deep\",\"ops\":[{\"op\":\"set\",\"path\":\"a.b\",\"value\":"
                    + DocsIT.nested(DocStore.MAX_DEPTH - 1) + "}]"), 10_000);
            assertEquals("bad_request", apply.path("error").path("code").asText(), apply.toString());
            JsonNode put = c.reply(c.request("doc.put", "\"doc\":\"deep\",\"value\":" + DocsIT.nested(DocStore.MAX_DEPTH + 1)), 10_000);
            assertEquals("bad_request", put.path("error").path("code").asText(), put.toString());
            JsonNode get = c.reply(c.request("doc.get", "\"doc\":\"deep\""), 10_000);
            assertTrue(get.get("ok").asBoolean(), get.toString());
            assertEquals(1, get.get("version").asLong(), get.toString());
            assertEquals(Json.parse("{\"x\":1}"), get.get("value"));
            JsonNode incr = c.reply(c.request("doc.incr", "\"doc\":\"deep\",\"path\":\"n\",\"delta\":1"), 10_000);
            assertTrue(incr.get("ok").asBoolean(), incr.toString());
        }
    }

    /**
     * A client that pipelines appends and never reads the replies fills its socket's buffers. The
     * writer thread sends some replies itself, and it must never wait on that socket: once the
     * socket has no room its replies go to the socket's reply thread. So another client of the same
     * workspace (same writer thread) keeps being answered, and the first loses nothing once it reads.
     * 120,000 replies of about 80 bytes are more than this machine's socket buffers hold (at most
     * 4 MiB to send and the client's receive window). This checks the whole path end to end; it
     * passed too with the send-buffer probe forced to "room" (the flood mostly finds the writer busy,
     * so its replies queue), so the probe's part is pinned by {@code SocketWriterTest} and
     * {@code SendRoomTest}.
     */
    @Test
    void aClientThatNeverReadsItsRepliesShouldNotHoldUpItsWorkspacesWriter() {
        int deafAppends = 120_000;
        WsClient deaf = WsClient.slow(server.wsUrl("acme"));
        WsClient other = WsClient.connect(server.wsUrl("acme"));
        for (int i = 0; i < deafAppends; i++) {
            deaf.request("append", "\"log\":\"never-reads\",\"data\":{\"i\":" + i + "}");
        }
        for (int i = 0; i < 20; i++) {
            long id = other.request("append", "\"log\":\"reads\",\"data\":{\"i\":" + i + "}");
            JsonNode reply = other.reply(id, 30_000);
            assertTrue(reply != null && reply.get("ok").asBoolean(), "append " + i + " of the reading client: " + reply);
        }
        deaf.demand(Long.MAX_VALUE);
        Set<Long> seqs = new HashSet<>();
        for (int i = 0; i < deafAppends; i++) {
            JsonNode reply = deaf.next(30_000);
            assertTrue(reply != null && reply.get("ok").asBoolean(), "reply " + i + " of the client that did not read: " + reply);
            assertTrue(seqs.add(reply.get("firstSeq").asLong()), "duplicate seq " + reply);
        }
        assertEquals(deafAppends, seqs.size());
        assertTrue(seqs.contains(1L) && seqs.contains((long) deafAppends), "seqs 1.." + deafAppends);
        deaf.close();
        other.close();
    }
}

package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ServerProcess;
import io.strand.app.testing.Http;
import io.strand.app.testing.WsClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --ws-reader-threads} (with no event loops, as over TLS or in a cluster): the first sockets open
 * at once are each read by a platform thread of
 * their own, the ones beyond the cap by their virtual thread, and both serve requests; a closed
 * socket gives its thread back. Seen from outside, in a server of its own: the gauge
 * {@code strand_ws_reader_threads} and the process's threads in {@code /proc}.
 */
@Timeout(120)
@EnabledOnOs(OS.LINUX)
class ReaderThreadsIT {
    private static final Pattern GAUGE = Pattern.compile("(?m)^strand_ws_reader_threads(?:\\{[^}]*\\})? ([0-9.]+)$");
    /** {@code strand-ws-reader-N} as {@code /proc/.../comm} shows it (15 characters). */
    private static final String THREAD = "strand-ws-reade";

    @TempDir
    Path dir;

    @Test
    void socketsUpToTheCapShouldBeReadByTheirOwnPlatformThreadAndTheRestByVirtualOnes() throws IOException {
        try (ServerProcess child = ServerProcess.start(dir, List.of("--durability", "os", "--auth", "false",
                "--ws-reader-threads", "1", "--ws-event-loops", "0"), List.of())) {
            Http http = new Http(child.url, null);
            String url = child.url.replace("http://", "ws://") + "/v1/ws/acme/socket";
            long pid = child.process.pid();
            try (WsClient first = WsClient.connect(url)) {
                appendAndReadBack(first, "a");
                await("one platform reader", () -> gauge(http) == 1 && readerThreads(pid) == 1);
                try (WsClient second = WsClient.connect(url)) {
                    appendAndReadBack(second, "b");
                    appendAndReadBack(first, "a");
                    assertEquals(1, gauge(http), "the second socket is read by its virtual thread: the cap is 1");
                    assertEquals(1, readerThreads(pid));
                }
            }
            await("the closed socket's reader to end", () -> gauge(http) == 0 && readerThreads(pid) == 0);
            try (WsClient third = WsClient.connect(url)) {
                appendAndReadBack(third, "c");
                await("the freed place taken by a new socket", () -> gauge(http) == 1 && readerThreads(pid) == 1);
            }
        }
    }

    /** An append and a read of it on {@code ws}: the socket's reader handled both requests. */
    private static void appendAndReadBack(WsClient ws, String log) {
        JsonNode appended = ws.reply(ws.request("append", "\"log\":\"" + log + "\",\"data\":{\"n\":1}"), 10_000);
        assertTrue(appended.path("ok").asBoolean(), appended.toString());
        long seq = appended.get("firstSeq").asLong();
        JsonNode page = ws.reply(ws.request("read", "\"log\":\"" + log + "\",\"from\":" + seq + ",\"limit\":1"), 10_000);
        assertTrue(page.path("ok").asBoolean(), page.toString());
        assertEquals(seq, page.get("entries").get(0).get("seq").asLong(), page.toString());
    }

    private static int gauge(Http http) {
        Matcher m = GAUGE.matcher(http.get("/observe/metrics").body());
        assertTrue(m.find(), "strand_ws_reader_threads is exported");
        return (int) Double.parseDouble(m.group(1));
    }

    private static long readerThreads(long pid) {
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            return tasks.filter(t -> {
                try {
                    return Files.readString(t.resolve("comm")).trim().equals(THREAD);
                } catch (IOException gone) { // a thread that ended while listing
                    return false;
                }
            }).count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static void await(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "waited 30 s for " + what);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polling the server: nothing to wait on
        }
    }
}

package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.testing.Http;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server as {@code strand serve} starts it waits for socket readiness on the JDK's platform
 * poller threads ({@link Main#usePlatformPollers}), not on virtual-thread sub-pollers: the property
 * is only read once, when the first virtual thread blocks on a socket, so this fails if anything
 * starts the pollers before {@code Main.serve} sets it.
 */
@Timeout(120)
@EnabledOnOs(OS.LINUX)
class PollerModeIT {
    @TempDir
    Path dir;

    @Test
    void theServerShouldPollSocketsOnPlatformPollerThreads() throws IOException {
        try (ServerProcess child = ServerProcess.start(dir, List.of("--durability", "os", "--auth", "false"), List.of())) {
            Http.Reply r = new Http(child.url, null).post("/v1/ws/pollers/logs/l/entries", "{\"data\":1}");
            assertEquals(200, r.status(), r.body());
            int port = Integer.parseInt(child.url.substring(child.url.lastIndexOf(':') + 1));
            // a connection that sends nothing: its reader must block on it, which starts the JDK's pollers
            try (Socket idle = new Socket(InetAddress.getLoopbackAddress(), port)) {
                List<String> threads = threadNames(child.process.pid());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!threads.contains("Read-Poller") && !threads.contains("MasterPoller") && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polling /proc: nothing to wait on
                    threads = threadNames(child.process.pid());
                }
                assertTrue(threads.contains("Read-Poller"), "platform read poller thread: " + threads);
                assertFalse(threads.contains("MasterPoller"), "no virtual-thread pollers: " + threads);
            }
        }
    }

    private static List<String> threadNames(long pid) throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : tasks.toList()) {
                try {
                    names.add(Files.readString(t.resolve("comm")).trim());
                } catch (IOException gone) { // a thread that ended while listing
                }
            }
        }
        return names;
    }
}

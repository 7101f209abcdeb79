package io.strand.docstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ChildJvm;
import io.strand.core.Writers;
import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 while a child JVM is acknowledging increments, then restart here: every acknowledged increment
 * is present, no unacknowledged one beyond the in-flight window appears, and reopening never hangs.
 */
class DocStoreCrashTest {
    private static final int LOOPS = 5;
    private static final int WINDOW = 32;

    @TempDir
    Path dir;

    private ChildJvm startChild(DocStoreConfig.Recovery recovery, Path stderr) throws Exception {
        return ChildJvm.java(DocCrashChild.class.getName()).heap("256m").fastStart()
                .args(dir.toString(), recovery.name(), Integer.toString(WINDOW)).stderrTo(stderr).start();
    }

    @Test
    @Timeout(value = 100, unit = TimeUnit.SECONDS)
    void killDuringIncrementsShouldLoseNoAcknowledgedIncrement(@TempDir Path logs) throws Exception {
        long seed = System.nanoTime();
        System.out.println("DocStoreCrashTest seed " + seed);
        Random random = new Random(seed);
        long base = 0;
        for (int loop = 0; loop < LOOPS; loop++) {
            DocStoreConfig.Recovery recovery = loop % 2 == 0
                    ? DocStoreConfig.Recovery.REBUILD : DocStoreConfig.Recovery.RECOVER_IN_PLACE;
            Path stderr = logs.resolve("child-" + loop + ".err");
            long t0 = System.nanoTime();
            ChildJvm child = startChild(recovery, stderr);
            long acked = 0;
            long readyMillis = -1;
            long highestAck = base;
            int killAfter = 100 + random.nextInt(1500);
            try {
                try (BufferedReader in = child.stdout()) {
                    String ready = in.readLine();
                    assertNotNull(ready, () -> "child exited before READY: " + read(stderr));
                    assertEquals("READY " + base, ready, "the child did not start from the last verified value");
                    readyMillis = (System.nanoTime() - t0) / 1_000_000;
                    String line;
                    while (acked < killAfter && (line = in.readLine()) != null) {
                        if (line.startsWith("A ")) {
                            acked++;
                            highestAck = Math.max(highestAck, Long.parseLong(line.substring(2)));
                        } else {
                            throw new AssertionError("child reported: " + line);
                        }
                    }
                    // SIGKILL while it is still acknowledging; our end of the pipe stays open for the acks already written
                    child.kill();
                    while ((line = in.readLine()) != null) { // acks printed before it died count as acknowledged
                        if (line.startsWith("A ")) {
                            acked++;
                            highestAck = Math.max(highestAck, Long.parseLong(line.substring(2)));
                        }
                    }
                }
            } finally {
                child.close(); // never leave a writer behind when an assertion fails
            }
            assertTrue(child.waitFor(Duration.ofSeconds(10)), "child did not die");
            long t2 = System.nanoTime();
            long lowest = base + acked;
            long highestAllowed = base + acked + WINDOW;
            long finalBase = base;
            long value = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                try (Writers writers = TestStores.writers(dir);
                     DocStore store = new DocStore(DocCrashChild.config(dir, recovery), writers)) {
                    writers.recover();
                    assertEquals(recovery == DocStoreConfig.Recovery.REBUILD ? "rebuilt" : "recovered",
                            store.metrics().startMode());
                    store.get("w", "blob").ifPresent(b -> assertTrue(b.value().get("s").textValue().length() == 2000));
                    return store.get("w", "counter").map(v -> v.value().get("n").longValue()).orElse(finalBase);
                }
            }, "reopening after kill -9 hung");
            System.out.printf("loop %d (%s): child ready in %d ms, killed after %d acks, reopened in %d ms,"
                    + " counter %d (allowed %d..%d)%n", loop, recovery, readyMillis, acked,
                    (System.nanoTime() - t2) / 1_000_000, value, lowest, highestAllowed);
            assertTrue(value >= lowest && value >= highestAck, "acknowledged increments lost: counter " + value
                    + " < " + Math.max(lowest, highestAck) + " (loop " + loop + ", seed " + seed + ")");
            assertTrue(value <= highestAllowed, "more increments than acked + in flight: " + value + " > "
                    + highestAllowed + " (loop " + loop + ", seed " + seed + ")");
            base = value;
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (Exception e) {
            return "(no stderr: " + e + ")";
        }
    }

}

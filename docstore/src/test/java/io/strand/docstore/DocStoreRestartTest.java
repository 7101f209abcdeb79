package io.strand.docstore;

import static io.strand.docstore.TestStores.await;
import static io.strand.docstore.TestStores.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Restart, recovery, snapshot and corruption behaviour in one JVM (the kill -9 loop is in {@link DocStoreCrashTest}). */
@Timeout(60)
class DocStoreRestartTest {
    @TempDir
    Path dir;
    @TempDir
    Path image;
    Writers writers;

    @BeforeEach
    void startWriters() {
        writers = TestStores.writers(dir);
    }

    @AfterEach
    void stopWriters() {
        writers.close();
    }

    /** Writes a mix of creates, updates and deletes; returns what every doc must read back as. */
    private static Map<String, DocValue> writeMix(DocStore store) {
        for (int i = 0; i < 50; i++) {
            await(store.put("w" + (i % 3), "doc-" + i, obj("{\"i\":" + i + ",\"s\":\"v" + i + "\"}"), null));
        }
        for (int i = 0; i < 50; i += 5) {
            await(store.incr("w" + (i % 3), "doc-" + i, "n", i + 1, null, null));
        }
        for (int i = 1; i < 50; i += 7) {
            await(store.delete("w" + (i % 3), "doc-" + i, null));
        }
        return contents(store);
    }

    private static Map<String, DocValue> contents(DocStore store) {
        Map<String, DocValue> all = new TreeMap<>();
        for (String ws : List.of("w0", "w1", "w2")) {
            for (String doc : store.list(ws, null, 1000).docs()) {
                all.put(ws + "/" + doc, store.get(ws, doc).orElseThrow());
            }
        }
        return all;
    }

    /** Copies a live store's files as a crash would leave them (no clean-shutdown marker, map not closed). */
    private static void crashImage(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path p : files.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else if (!p.getFileName().toString().equals(DocStore.LOCK_FILE)) {
                    Files.copy(p, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static void flipByteOf(Path file, byte[] marker) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        int at = indexOf(bytes, marker);
        assertTrue(at >= 0, "marker not found in " + file);
        bytes[at + marker.length / 2] ^= 0x20;
        Files.write(file, bytes);
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void awaitCondition(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    @Test
    void restartShouldKeepEveryDocAfterCleanClose() {
        Map<String, DocValue> expected;
        try (DocStore store = new DocStore(TestStores.config(dir), writers)) {
            expected = writeMix(store);
        }
        try (DocStore store = new DocStore(TestStores.config(dir), writers)) {
            assertEquals("clean", store.metrics().startMode());
            assertEquals(0, store.metrics().replayedRecords());
            assertEquals(expected, contents(store));
            assertEquals(expected.size(), store.size());
            assertEquals(Optional.empty(), store.get("w1", "doc-1"));
            assertEquals(3L, await(store.incr("w0", "doc-0", "n", 2, null, null)).version());
        }
    }

    /**
     * Power loss, simulated: journal and map go back to an earlier image while the write-ahead log keeps
     * what was acknowledged since, including a delete and a re-create of the same doc (versions restart).
     */
    @Test
    void changesLostFromTheJournalShouldComeBackFromTheWriteAheadLog() throws Exception {
        Map<String, DocValue> expected;
        try (DocStore store = new DocStore(TestStores.config(dir), writers)) {
            writeMix(store);
            crashImage(dir, image);
            for (int i = 0; i < 20; i++) {
                await(store.incr("w0", "doc-0", "n", 1, 0L, null));
            }
            await(store.delete("w1", "doc-4", null));
            await(store.put("w1", "doc-4", obj("{\"again\":true}"), 0L));
            await(store.put("w2", "fresh", obj("{\"new\":1}"), null));
            expected = contents(store);
            crashImage(dir.resolve("wal"), image.resolve("wal")); // the kill: only the write-ahead log is newer
        }
        assertEquals(1L, expected.get("w1/doc-4").version());
        try (Writers afterPowerLoss = TestStores.writers(image);
             DocStore store = new DocStore(TestStores.config(image), afterPowerLoss)) {
            assertTrue(afterPowerLoss.recover() > 0);
            assertEquals(expected, contents(store));
        }
    }

    @Test
    void uncleanStopShouldRebuildTheMapFromTheJournal() throws Exception {
        Map<String, DocValue> expected;
        try (DocStore store = new DocStore(TestStores.config(dir), writers)) {
            expected = writeMix(store);
            crashImage(dir, image);
        }
        try (DocStore store = new DocStore(TestStores.config(image), writers)) {
            assertEquals("rebuilt", store.metrics().startMode());
            assertEquals(expected, contents(store));
            assertEquals(expected.size(), store.size());
        }
    }

    @Test
    void recoverInPlaceShouldRestoreFromTheJournalAKeyTheMapLost() throws Exception {
        DocStoreConfig config = TestStores.config(dir).withRecovery(DocStoreConfig.Recovery.RECOVER_IN_PLACE);
        Map<String, DocValue> expected;
        try (DocStore store = new DocStore(config, writers)) {
            expected = writeMix(store);
            crashImage(dir, image);
        }
        // what STACK.md saw Chronicle's recovery do: the key being overwritten at the kill is gone
        Path mapFile = image.resolve(DocStore.MAP_FILE);
        DocStoreConfig imageConfig = TestStores.config(image).withRecovery(DocStoreConfig.Recovery.RECOVER_IN_PLACE);
        try (DocView v = DocView.recover(mapFile, imageConfig)) {
            v.remove("w0/doc-0");
        }
        try (DocStore store = new DocStore(imageConfig, writers)) {
            assertEquals("recovered", store.metrics().startMode());
            assertEquals(expected, contents(store));
        }
    }

    @Test
    void restartShouldRebuildWhenTheCapacitySettingsChange() {
        Map<String, DocValue> expected;
        try (DocStore store = new DocStore(TestStores.config(dir), writers)) {
            expected = writeMix(store);
        }
        try (DocStore store = new DocStore(TestStores.config(dir).withCapacity(20_000, 40, 300), writers)) {
            assertEquals("rebuilt", store.metrics().startMode());
            assertEquals(expected, contents(store));
        }
    }

    @Test
    void snapshotShouldLetCoveredJournalCyclesBeDeletedAndStillRebuildEverything() throws Exception {
        SetTimeProvider clock = new SetTimeProvider(TimeUnit.SECONDS.toNanos(1_800_000_000L));
        DocStoreConfig config = TestStores.config(dir).withJournal(TestRollCycles.TEST_SECONDLY, 1 << 20, clock);
        Map<String, DocValue> expected;
        try (DocStore store = new DocStore(config, writers)) {
            for (int cycle = 0; cycle < 3; cycle++) {
                for (int i = 0; i < 20; i++) {
                    await(store.incr("w0", "c" + i, "n", cycle + 1, null, null));
                }
                clock.advanceMillis(1000);
            }
            await(store.incr("w0", "c0", "n", 100, null, null));
            assertEquals(4, store.describe().get("journalCycleFiles"));
            assertTrue(store.snapshotNow() >= 3, "covered cycles deleted");
            assertEquals(1, store.describe().get("journalCycleFiles"));
            await(store.incr("w0", "c1", "n", 1000, null, null)); // after the snapshot: only in the journal
            expected = contents(store);
        }
        Files.delete(dir.resolve(DocStore.CHECKPOINT_FILE)); // force a rebuild from snapshot + journal
        try (DocStore store = new DocStore(config, writers)) {
            assertEquals("rebuilt", store.metrics().startMode());
            assertEquals(expected, contents(store));
            assertEquals(106, store.get("w0", "c0").orElseThrow().value().get("n").longValue());
            assertEquals(1006, store.get("w0", "c1").orElseThrow().value().get("n").longValue());
        }
    }

    @Test
    void checkpointerShouldCheckpointAndSnapshotPeriodically() {
        DocStoreConfig config = TestStores.config(dir).withCheckpoints(Duration.ofMillis(20), 50);
        try (DocStore store = new DocStore(config, writers)) {
            for (int i = 0; i < 120; i++) {
                await(store.incr("w0", "c", "n", 1, null, null));
            }
            awaitCondition(() -> store.metrics().snapshots() >= 1, "a snapshot");
            awaitCondition(() -> (long) store.describe().get("checkpointIndex")
                    == (long) store.describe().get("journalLastIndex"), "a checkpoint covering every record");
            assertEquals(0, store.metrics().backgroundErrors());
        }
        assertTrue(Files.exists(dir.resolve(DocStore.SNAPSHOT_FILE)));
    }

    @Test
    void startShouldRefuseWithCorruptWhenTheSnapshotIsDamaged() throws Exception {
        try (DocStore store = new DocStore(TestStores.config(dir), writers)) {
            await(store.put("w0", "d", obj("{\"marker\":\"snapshot-marker-123\"}"), null));
            store.snapshotNow();
        }
        flipByteOf(dir.resolve(DocStore.SNAPSHOT_FILE), "snapshot-marker-123".getBytes(StandardCharsets.UTF_8));
        Files.delete(dir.resolve(DocStore.CHECKPOINT_FILE));
        StrandException e = assertThrows(StrandException.class, () -> new DocStore(TestStores.config(dir), writers));
        assertEquals(ErrorCode.CORRUPT, e.code(), e.getMessage());
    }

    @Test
    void startShouldRefuseWithCorruptWhenAJournalRecordIsDamaged() throws Exception {
        try (DocStore store = new DocStore(TestStores.config(dir), writers)) {
            await(store.put("w0", "d", obj("{\"marker\":\"journal-marker-456\"}"), null));
        }
        Path cycle;
        try (Stream<Path> files = Files.list(dir.resolve(DocStore.JOURNAL_DIR))) {
            cycle = files.filter(p -> p.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
        flipByteOf(cycle, "journal-marker-456".getBytes(StandardCharsets.UTF_8));
        Files.delete(dir.resolve(DocStore.CHECKPOINT_FILE));
        StrandException e = assertThrows(StrandException.class, () -> new DocStore(TestStores.config(dir), writers));
        assertEquals(ErrorCode.CORRUPT, e.code(), e.getMessage());
    }
}

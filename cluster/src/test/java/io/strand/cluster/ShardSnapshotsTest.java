package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.DirMirror;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Snapshots staged in the background, then brought up to date on the apply thread. */
class ShardSnapshotsTest {
    @TempDir
    Path tmp;

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aSnapshotAfterAStagedCopyShouldHoldExactlyTheFilesAtTheTakeAndWriteOnlyTheChanges() throws IOException {
        Path live = tmp.resolve("live");
        Files.createDirectories(live.resolve("logs/a/queue"));
        byte[] queue = random(1, 10 * DirMirror.BLOCK);
        Files.write(live.resolve("logs/a/queue/cycle.cq4"), queue);
        Files.write(live.resolve("logs/a/state.json"), "{\"head\":1}".getBytes());
        ShardSnapshots snapshots = new ShardSnapshots(0, tmp.resolve("shard"));
        snapshots.init(null);
        snapshots.reload();

        snapshots.prestage((dir, cancelled) -> DirMirror.mirror(live, dir, rel -> false, true, cancelled));
        // applies go on after the staging: a rewritten block, an appended tail, a new and a removed file
        queue[3 * DirMirror.BLOCK] ^= 1;
        byte[] grown = java.util.Arrays.copyOf(queue, queue.length + 500);
        System.arraycopy(random(2, 500), 0, grown, queue.length, 500); // appended entries (zeros would stay a hole)
        Files.write(live.resolve("logs/a/queue/cycle.cq4"), grown);
        Files.delete(live.resolve("logs/a/state.json"));
        Files.write(live.resolve("logs/a/meta.json"), "{}".getBytes());
        AtomicLong written = new AtomicLong();

        FileListSnapshotInfo info = snapshots.take(TermIndex.valueOf(2, 40), 7L,
                dir -> {
                    DirMirror.Result r = DirMirror.mirror(live, dir, rel -> false, false, () -> false);
                    written.set(r.bytesWritten());
                    return r;
                });

        Path taken = tmp.resolve("shard/snapshots/2_40");
        assertEquals(40, info.getIndex());
        assertArrayEquals(grown, Files.readAllBytes(taken.resolve("logs/a/queue/cycle.cq4")));
        assertTrue(Files.exists(taken.resolve("logs/a/meta.json")));
        assertFalse(Files.exists(taken.resolve("logs/a/state.json")), "a file removed after staging is not in the snapshot");
        assertEquals(DirMirror.BLOCK + 500 + 2, written.get(), "only the changed block, the tail and the new file are written");
        assertEquals(info.getTermIndex(), snapshots.reload().getTermIndex(), "the snapshot verifies against its manifest");
    }

    @Test
    void aTakeShouldCancelAStagingThatIsStillRunningAndNotWaitForItToFinish() throws Exception {
        Path live = tmp.resolve("live");
        Files.createDirectories(live);
        Files.write(live.resolve("f"), random(2, 1000));
        ShardSnapshots snapshots = new ShardSnapshots(0, tmp.resolve("shard"));
        snapshots.init(null);
        snapshots.reload();
        java.util.concurrent.CountDownLatch staging = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean sawCancel = new java.util.concurrent.atomic.AtomicBoolean();
        Thread stager = new Thread(() -> snapshots.prestage((dir, cancelled) -> {
            staging.countDown();
            while (!cancelled.getAsBoolean()) { // a staging far from done: it only ends when cancelled
                Thread.onSpinWait();
            }
            sawCancel.set(true);
            throw new java.util.concurrent.CancellationException();
        }));
        stager.start();
        staging.await();

        FileListSnapshotInfo info = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(10),
                () -> snapshots.take(TermIndex.valueOf(1, 5), 1L, dir -> DirMirror.mirror(live, dir, rel -> false, false, () -> false)));

        stager.join();
        assertTrue(sawCancel.get());
        assertEquals(5, info.getIndex());
        assertArrayEquals(Files.readAllBytes(live.resolve("f")), Files.readAllBytes(tmp.resolve("shard/snapshots/1_5/f")));
    }

    @Test
    void aRetiredSnapshotShouldBecomeTheNextStagingSoThatStagingWritesOnlyWhatChangedAndEverySnapshotStillMatchesItsManifest()
            throws IOException {
        Path live = tmp.resolve("live");
        Files.createDirectories(live.resolve("logs/a/queue"));
        byte[] queue = random(3, 8 * DirMirror.BLOCK);
        ShardSnapshots snapshots = new ShardSnapshots(0, tmp.resolve("shard"));
        snapshots.init(null);
        snapshots.reload();
        Path stage = tmp.resolve("shard/snapshot.tmp/stage");
        AtomicLong staged = new AtomicLong();
        FileListSnapshotInfo newest = null;
        int takes = ShardSnapshots.RETAINED + 2; // the last staging is over a recycled snapshot
        for (int i = 1; i <= takes; i++) {
            queue = java.util.Arrays.copyOf(queue, queue.length + DirMirror.BLOCK); // an append-only file grows
            System.arraycopy(random(10 + i, DirMirror.BLOCK), 0, queue, queue.length - DirMirror.BLOCK, DirMirror.BLOCK);
            queue[0] = (byte) i; // and its header block is rewritten
            Files.write(live.resolve("logs/a/queue/cycle.cq4"), queue);
            snapshots.prestage((dir, cancelled) -> {
                DirMirror.Result r = DirMirror.mirror(live, dir, rel -> false, true, cancelled);
                staged.set(r.bytesWritten());
                return r;
            });
            if (i > ShardSnapshots.RETAINED + 1) { // over the snapshot of take i - RETAINED - 1
                assertEquals((1L + ShardSnapshots.RETAINED + 1) * DirMirror.BLOCK, staged.get(),
                        "staging over a retired snapshot writes the header and the blocks appended since it");
            }
            newest = snapshots.take(TermIndex.valueOf(1, 10L * i), i,
                    dir -> DirMirror.mirror(live, dir, rel -> false, false, () -> false));
            assertFalse(Files.exists(stage), "a take moves the staging directory into snapshots/");
            snapshots.cleanupOldSnapshots(null);
            if (i > ShardSnapshots.RETAINED) {
                assertTrue(Files.isDirectory(stage), "the retired snapshot is the next staging directory");
            }
        }
        try (var named = Files.list(tmp.resolve("shard/snapshots"))) {
            assertEquals(ShardSnapshots.RETAINED, named.count());
        }
        ShardSnapshots restarted = new ShardSnapshots(0, tmp.resolve("shard")); // as after a restart
        restarted.init(null);
        assertEquals(newest.getTermIndex(), restarted.reload().getTermIndex());
        assertEquals(0, restarted.lastCopyBytes());
        restarted.refillLive(restarted.getLatestSnapshot()); // checks every file's CRC against the manifest
        assertArrayEquals(queue, Files.readAllBytes(restarted.liveDir().resolve("logs/a/queue/cycle.cq4")));
        assertEquals(queue.length, restarted.lastCopyBytes(),
                "a restarted replica's next take compares at least what it restored (SnapshotPolicy staggers by it)");
    }
}

package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The txn commit record: a committed, unfinished txn is replayed at start; one not committed, finished or torn is not. */
class TxnIntentsTest {
    @TempDir
    Path dir;

    private final List<String> replayed = new CopyOnWriteArrayList<>();

    private Writers writers() {
        Writers w = new Writers("t", 1, Durability.OS, 16, null, n -> { });
        for (byte type = 1; type <= 3; type++) {
            byte t = type;
            w.onReplay(type, payload -> {
                byte[] b = new byte[payload.remaining()];
                payload.get(b);
                replayed.add(t + ":" + new String(b));
                return CompletableFuture.completedFuture(null);
            });
        }
        return w;
    }

    private static final List<TxnIntents.Part> PARTS = List.of(
            new TxnIntents.Part((byte) 3, "doc".getBytes()), new TxnIntents.Part((byte) 1, "log-a".getBytes()),
            new TxnIntents.Part((byte) 1, "log-b".getBytes()));

    /** A crash after the commit point and before done: the next start replays every part, in order, once. */
    @Test
    void aCommittedUnfinishedTxnShouldBeReplayedOnce() {
        try (Writers w = writers()) {
            TxnIntents intents = new TxnIntents(dir);
            w.submit("ws", c -> {
                intents.commit(PARTS);
                return null; // "crash": done() never runs
            }).join();
        }
        try (Writers w = writers()) {
            assertEquals(1, new TxnIntents(dir).recover(w));
        }
        assertEquals(List.of("3:doc", "1:log-a", "1:log-b"), replayed);
        try (Writers w = writers()) {
            assertEquals(0, new TxnIntents(dir).recover(w), "the slot is empty after recovery");
        }
    }

    @Test
    void aFinishedTxnShouldNotBeReplayed() {
        try (Writers w = writers()) {
            TxnIntents intents = new TxnIntents(dir);
            w.submit("ws", c -> {
                intents.commit(PARTS);
                intents.done();
                intents.commit(List.of(new TxnIntents.Part((byte) 2, "second".getBytes())));
                intents.done();
                return null;
            }).join();
            assertEquals(0, new TxnIntents(dir).recover(w));
        }
        assertEquals(List.of(), replayed);
    }

    /** A body changed after its CRC (a torn write) never validates. */
    @Test
    void aTornRecordShouldNotBeReplayed() throws Exception {
        try (Writers w = writers()) {
            TxnIntents intents = new TxnIntents(dir);
            w.submit("ws", c -> {
                intents.commit(PARTS);
                return null;
            }).join();
        }
        Path slot;
        try (var files = Files.list(dir)) {
            slot = files.filter(p -> p.getFileName().toString().endsWith(".txn")).findFirst().orElseThrow();
        }
        try (FileChannel ch = FileChannel.open(slot, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {'X'}), 16 + 5);
        }
        try (Writers w = writers()) {
            assertEquals(0, new TxnIntents(dir).recover(w));
        }
        assertEquals(List.of(), replayed);
    }

    @Test
    void recordsShouldRoundTrip() {
        ByteBuffer map = ByteBuffer.allocate(64);
        assertEquals(List.of(), TxnIntents.read(map), "zeros: no txn");
        assertThrows(IllegalStateException.class, () -> new TxnIntents(dir).commit(PARTS), "writer thread only");
        try (Writers w = writers()) {
            TxnIntents intents = new TxnIntents(dir);
            w.submit("ws", c -> {
                intents.commit(List.of(new TxnIntents.Part((byte) 1, new byte[3 << 20]))); // past the first mapping
                return null;
            }).join();
        }
        try (Writers w = writers()) {
            assertEquals(1, new TxnIntents(dir).recover(w));
        }
        assertEquals(1, replayed.size());
        assertArrayEquals(new byte[3 << 20], replayed.getFirst().substring(2).getBytes());
    }
}

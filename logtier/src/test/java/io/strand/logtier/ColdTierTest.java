package io.strand.logtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.FileColdStore;
import io.strand.core.Durability;
import io.strand.core.Entry;
import io.strand.core.Writers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class ColdTierTest {
    @TempDir
    Path dir;

    private static AppendRequest batch(int from, int n) {
        List<byte[]> data = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            data.add(("{\"n\":" + (from + i) + "}").getBytes(StandardCharsets.UTF_8));
            keys.add(null);
        }
        return new AppendRequest(data, keys, null, null, null);
    }

    private record Node(Writers writers, LogStore store) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            store.close();
            writers.close();
            store.coldTier().close();
        }
    }

    private Node start() {
        LogConfig config = LogConfig.defaults(dir.resolve("data"), Durability.OS)
                .withRollCycle(TestRollCycles.TEST_SECONDLY)
                .withHot(new LogConfig.HotThreshold(1_000, 1L << 40, Duration.ofDays(1)));
        Writers writers = new Writers("t", 2, Durability.OS, 1024, null, n -> { });
        LogStore store = new LogStore(config, writers);
        store.enableColdTier(new ColdTier(new FileColdStore(dir.resolve("cold")), new BlockCache(8 << 20),
                ColdLogConfig.defaults(dir.resolve("tmp"))));
        return new Node(writers, store);
    }

    private static List<Long> readAll(LogStore store, long head) {
        List<Long> seqs = new ArrayList<>();
        long next = 1;
        while (next <= head) {
            Page p = store.readForward("w", "c", next, 1000);
            for (Entry e : p.entries()) {
                seqs.add(e.seq());
                assertEquals("{\"n\":" + e.seq() + "}", e.dataText());
            }
            next = p.next();
        }
        return seqs;
    }

    @Test
    void readsShouldCrossHotColdBoundaryExactlyWhenOldEntriesRolled() throws Exception {
        int total = 20_000;
        try (Node node = start()) {
            for (int i = 0; i < total / 100; i++) {
                node.store.append("w", "c", batch(i * 100 + 1, 100)).join();
            }
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (node.store.info("w", "c").orElseThrow().hotFirst() < total - 1_000 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll without burning a core
            }
            LogInfo info = node.store.info("w", "c").orElseThrow();
            assertTrue(info.coldSegments() > 0, "rolled: " + info);
            assertEquals(1, info.first());
            List<Long> seqs = readAll(node.store, total);
            assertEquals(total, seqs.size());
            for (int i = 0; i < total; i++) {
                assertEquals(i + 1, seqs.get(i));
            }
            Page back = node.store.readBackward("w", "c", 5, 10);
            assertEquals(List.of(1L, 2L, 3L, 4L), back.entries().stream().map(Entry::seq).toList());
            long ts = node.store.readForward("w", "c", 100, 1).entries().getFirst().ts();
            assertTrue(node.store.readFromTime("w", "c", ts, 1).entries().getFirst().seq() <= 100);
        }
        try (Node node = start()) {
            assertEquals(total, readAll(node.store, total).size());
            assertEquals(total + 1, node.store.append("w", "c", batch(total + 1, 1)).join().firstSeq());
            assertTrue(node.store.delete("w", "c"));
            assertEquals(0, node.store.readForward("w", "c", 1, 10).head());
        }
    }
}

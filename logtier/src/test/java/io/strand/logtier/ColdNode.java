package io.strand.logtier;

import io.strand.coldtier.BlockCache;
import io.strand.coldtier.ColdLogConfig;
import io.strand.coldtier.FileColdStore;
import io.strand.core.Durability;
import io.strand.core.Writers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

/**
 * Test fixture shared by the cold-tier stress tests: a {@link LogStore} with one-second hot cycle
 * files and a file-backed cold tier under one temp dir. Owned by the test thread that starts and
 * closes it; the store itself is thread-safe.
 */
record ColdNode(Writers writers, LogStore store) implements AutoCloseable {

    /** Starts a store under {@code dir} that rolls a log to cold once it holds {@code hotEntries}. */
    static ColdNode start(Path dir, long hotEntries) {
        LogConfig config = LogConfig.defaults(dir.resolve("data"), Durability.OS)
                .withRollCycle(TestRollCycles.TEST_SECONDLY)
                .withHot(new LogConfig.HotThreshold(hotEntries, 1L << 40, Duration.ofDays(1)));
        Writers writers = new Writers("t", 2, Durability.OS, 1024, null, n -> { });
        LogStore store = new LogStore(config, writers);
        store.enableColdTier(new ColdTier(new FileColdStore(dir.resolve("cold")), new BlockCache(8 << 20),
                ColdLogConfig.defaults(dir.resolve("tmp"))));
        return new ColdNode(writers, store);
    }

    /** {@code n} entries {@code {"n":from}}, {@code {"n":from+1}}, … without keys: entry n is at seq n. */
    static AppendRequest batch(long from, int n) {
        List<byte[]> data = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            data.add(("{\"n\":" + (from + i) + "}").getBytes(StandardCharsets.UTF_8));
            keys.add(null);
        }
        return new AppendRequest(data, keys, null, null, null);
    }

    /** Starts a thread that compacts the logs in turn, one every 0.1 s, until {@code done}; failures go to {@code violations}. */
    static Thread compactor(LogStore store, List<String> logs, AtomicBoolean done, Collection<String> violations) {
        return Thread.ofPlatform().name("compactor").start(() -> {
            int round = 0;
            try {
                while (!done.get()) {
                    store.coldTier().log("w", logs.get(round++ % logs.size())).compact(1L << 30, Duration.ZERO);
                    LockSupport.parkNanos(100_000_000); // a compaction every 0.1 s
                }
            } catch (Throwable t) {
                violations.add("compactor: " + t);
            }
        });
    }

    @Override
    public void close() throws Exception {
        store.close();
        writers.close();
        store.coldTier().close();
    }
}

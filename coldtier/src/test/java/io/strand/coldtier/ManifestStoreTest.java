package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestStoreTest {
    private static final String KEY = "w/l/manifest.json";
    private static final String ZERO = "0".repeat(64);

    @TempDir
    Path tmp;

    private static SegmentMeta seg(long first, long last, String prevChain, String chain) {
        return new SegmentMeta(String.format("w/l/seg/%020d-%020d.seg", first, last), first, last, 10 * first,
                10 * last, last - first + 1, 100, "a".repeat(64), prevChain, chain);
    }

    @Test
    void commitShouldCreateGenerationOneOnlyOnce() {
        ManifestStore ms = new ManifestStore(new FileColdStore(tmp));
        ManifestStore.Snapshot empty = ms.read(KEY, "w", "l");
        assertEquals(0, empty.manifest().generation());
        assertNull(empty.etag());
        Manifest one = empty.manifest().withAppended(seg(1, 10, ZERO, "1".repeat(64)));
        assertInstanceOf(ManifestStore.Committed.class, ms.commit(KEY, empty, one));
        Manifest rival = empty.manifest().withAppended(seg(1, 20, ZERO, "2".repeat(64)));
        ManifestStore.Conflict c = assertInstanceOf(ManifestStore.Conflict.class, ms.commit(KEY, empty, rival));
        assertEquals(one, c.current().manifest(), "the conflict shows the winner");
        assertEquals(one, ms.read(KEY, "w", "l").manifest());
    }

    @Test
    void commitShouldConflictWhenTheEtagIsStale() {
        ManifestStore ms = new ManifestStore(new FileColdStore(tmp));
        ManifestStore.Snapshot s0 = ms.read(KEY, "w", "l");
        ManifestStore.Committed c1 = (ManifestStore.Committed) ms.commit(KEY, s0,
                s0.manifest().withAppended(seg(1, 10, ZERO, "1".repeat(64))));
        ManifestStore.Snapshot s1 = c1.snapshot();
        ManifestStore.Commit won = ms.commit(KEY, s1, s1.manifest().withAppended(seg(11, 20, "1".repeat(64), "2".repeat(64))));
        assertInstanceOf(ManifestStore.Committed.class, won);
        ManifestStore.Commit lost = ms.commit(KEY, s1, s1.manifest().withAppended(seg(11, 30, "1".repeat(64), "3".repeat(64))));
        ManifestStore.Conflict c = assertInstanceOf(ManifestStore.Conflict.class, lost);
        assertEquals(2, c.current().manifest().generation());
        assertEquals(20, c.current().manifest().lastSeq());
    }

    @Test
    void commitShouldSucceedWhenAnAmbiguous412HidesOurOwnWrite() {
        // the store applies the write, then answers "precondition failed" as after an SDK retry
        ColdStore liar = new CountingColdStore(new FileColdStore(tmp)) {
            @Override
            public Optional<String> putIfMatch(String key, byte[] bytes, String etag) {
                inner.putIfMatch(key, bytes, etag);
                return Optional.empty();
            }

            @Override
            public Optional<String> putIfAbsent(String key, byte[] bytes) {
                inner.putIfAbsent(key, bytes);
                return Optional.empty();
            }
        };
        ManifestStore ms = new ManifestStore(liar);
        ManifestStore.Snapshot s0 = ms.read(KEY, "w", "l");
        ManifestStore.Committed c1 = assertInstanceOf(ManifestStore.Committed.class,
                ms.commit(KEY, s0, s0.manifest().withAppended(seg(1, 10, ZERO, "1".repeat(64)))));
        ManifestStore.Committed c2 = assertInstanceOf(ManifestStore.Committed.class, ms.commit(KEY, c1.snapshot(),
                c1.snapshot().manifest().withAppended(seg(11, 12, "1".repeat(64), "2".repeat(64)))));
        assertEquals(2, c2.snapshot().manifest().generation());
        assertEquals(c2.snapshot().etag(), liar.getVersioned(KEY).orElseThrow().etag());
    }

    @Test
    void readShouldRejectAManifestWithAGap() {
        FileColdStore store = new FileColdStore(tmp);
        Manifest bad = new Manifest(1, "w", "l", 3, List.of(seg(1, 10, ZERO, "1".repeat(64)),
                seg(12, 20, "1".repeat(64), "2".repeat(64))), List.of());
        store.put(KEY, bad.toJson());
        StrandException e = assertThrows(StrandException.class, () -> new ManifestStore(store).read(KEY, "w", "l"));
        assertEquals(ErrorCode.CORRUPT, e.code());
        assertTrue(e.getMessage().contains("gap"), e.getMessage());
        store.put(KEY, "{\"format\":1,".getBytes(StandardCharsets.UTF_8));
        assertEquals(ErrorCode.CORRUPT, assertThrows(StrandException.class,
                () -> new ManifestStore(store).read(KEY, "w", "l")).code());
    }

    @Test
    void racingCommittersShouldNeverLoseAGeneration() throws Exception {
        int threads = 4;
        int each = 15;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> conflicts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                conflicts.add(pool.submit(() -> {
                    ManifestStore ms = new ManifestStore(new FileColdStore(tmp));
                    start.await();
                    int lost = 0;
                    for (int i = 0; i < each; i++) {
                        ManifestStore.Snapshot s = ms.read(KEY, "w", "l");
                        while (true) {
                            List<Manifest.PendingDelete> pd = new ArrayList<>(s.manifest().pendingDeletes());
                            pd.add(new Manifest.PendingDelete("w/l/seg/t" + me + "-" + i, i));
                            Manifest next = new Manifest(1, "w", "l", s.manifest().generation() + 1, List.of(), pd);
                            ManifestStore.Commit c = ms.commit(KEY, s, next);
                            if (c instanceof ManifestStore.Conflict(ManifestStore.Snapshot current)) {
                                s = current;
                                lost++;
                            } else {
                                break;
                            }
                        }
                    }
                    return lost;
                }));
            }
            for (Future<Integer> f : conflicts) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        Manifest end = new ManifestStore(new FileColdStore(tmp)).read(KEY, "w", "l").manifest();
        assertEquals(threads * each, end.generation());
        assertEquals(threads * each, end.pendingDeletes().size(), "one update lost");
    }
}

package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What every {@link ColdStore} must do; run against the directory store and a real S3 server. */
abstract class ColdStoreContract {
    @TempDir
    Path tmp;
    ColdStore store;

    abstract ColdStore newStore();

    /** Another client on the location {@link #newStore()} last returned. */
    abstract ColdStore reopen();

    @BeforeEach
    void open() {
        store = newStore();
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void putFromFileShouldBeReadableWholeAndByRange() throws Exception {
        Path f = tmp.resolve("obj");
        Files.write(f, bytes("0123456789abcdef"));
        store.put("w/l/seg/a.seg", f);
        assertArrayEquals(bytes("0123456789abcdef"), store.get("w/l/seg/a.seg"));
        assertArrayEquals(bytes("456"), store.getRange("w/l/seg/a.seg", 4, 3));
        assertArrayEquals(bytes("ef"), store.getRange("w/l/seg/a.seg", 14, 10), "a range past the end is cut short");
        assertEquals(0, store.getRange("w/l/seg/a.seg", 16, 4).length, "a range starting at the end is empty");
        assertEquals(16, store.head("w/l/seg/a.seg").orElseThrow().size());
        Files.write(f, bytes("replaced"));
        store.put("w/l/seg/a.seg", f);
        assertArrayEquals(bytes("replaced"), store.get("w/l/seg/a.seg"), "overwrite is allowed");
    }

    @Test
    void missingObjectShouldBeNotFoundOrEmpty() {
        StrandException e = assertThrows(StrandException.class, () -> store.get("w/l/nope"));
        assertEquals(ErrorCode.NOT_FOUND, e.code());
        assertEquals(ErrorCode.NOT_FOUND, assertThrows(StrandException.class, () -> store.getRange("w/l/nope", 0, 4)).code());
        assertTrue(store.head("w/l/nope").isEmpty());
        assertTrue(store.getVersioned("w/l/nope").isEmpty());
        store.delete("w/l/nope"); // no error
    }

    @Test
    void listShouldReturnKeysUnderPrefixOnlyInOrder() {
        store.put("w/log/seg/2", bytes("b"));
        store.put("w/log/seg/1", bytes("a"));
        store.put("w/log/manifest.json", bytes("{}"));
        store.put("w/log2/seg/1", bytes("other log"));
        List<String> keys = store.list("w/log/").stream().map(ColdStore.ObjectInfo::key).toList();
        assertEquals(List.of("w/log/manifest.json", "w/log/seg/1", "w/log/seg/2"), keys);
        assertTrue(store.list("w/nothing/").isEmpty());
        store.delete("w/log/seg/1");
        assertEquals(2, store.list("w/log/").size());
    }

    @Test
    void putIfAbsentShouldCreateOnlyOnce() {
        Optional<String> first = store.putIfAbsent("w/l/manifest.json", bytes("one"));
        assertTrue(first.isPresent());
        assertTrue(store.putIfAbsent("w/l/manifest.json", bytes("two")).isEmpty());
        assertArrayEquals(bytes("one"), store.get("w/l/manifest.json"));
    }

    @Test
    void putIfMatchShouldReplaceOnlyTheVersionRead() {
        String e1 = store.putIfAbsent("w/l/manifest.json", bytes("one")).orElseThrow();
        ColdStore.Versioned v = store.getVersioned("w/l/manifest.json").orElseThrow();
        assertEquals(e1, v.etag());
        String e2 = store.putIfMatch("w/l/manifest.json", bytes("two"), v.etag()).orElseThrow();
        assertTrue(store.putIfMatch("w/l/manifest.json", bytes("three"), v.etag()).isEmpty(), "stale etag loses");
        assertArrayEquals(bytes("two"), store.get("w/l/manifest.json"));
        assertTrue(store.putIfMatch("w/l/manifest.json", bytes("three"), e2).isPresent());
        assertTrue(store.putIfMatch("w/l/absent.json", bytes("x"), e2).isEmpty(), "If-Match on a missing object loses");
    }

    @Test
    void racingConditionalWritersFromSeparateClientsShouldHaveOneWinnerPerVersion() throws Exception {
        int writers = 4;
        store.putIfAbsent("w/l/manifest.json", "0".getBytes(StandardCharsets.UTF_8)).orElseThrow();
        CyclicBarrier start = new CyclicBarrier(writers);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<Future<Integer>> wins = new ArrayList<>();
        try {
            for (int w = 0; w < writers; w++) {
                wins.add(pool.submit(() -> {
                    // each thread its own client on the same location, like separate processes
                    try (ColdStore mine = reopen()) {
                        start.await();
                        int won = 0;
                        for (int i = 0; i < 25; i++) {
                            ColdStore.Versioned v = mine.getVersioned("w/l/manifest.json").orElseThrow();
                            int n = Integer.parseInt(new String(v.bytes(), StandardCharsets.UTF_8));
                            if (mine.putIfMatch("w/l/manifest.json", String.valueOf(n + 1).getBytes(StandardCharsets.UTF_8),
                                    v.etag()).isPresent()) {
                                won++;
                            }
                        }
                        return won;
                    }
                }));
            }
            int total = 0;
            for (Future<Integer> f : wins) {
                total += f.get();
            }
            int stored = Integer.parseInt(new String(store.get("w/l/manifest.json"), StandardCharsets.UTF_8));
            assertEquals(total, stored, "every successful conditional write is one increment: no lost update");
            assertTrue(total >= 25, "someone made progress: " + total);
        } finally {
            pool.shutdownNow();
        }
    }
}

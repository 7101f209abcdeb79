package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class FileColdStoreTest extends ColdStoreContract {

    @Override
    ColdStore newStore() {
        return new FileColdStore(tmp.resolve("cold"));
    }

    @Test
    void keysShouldNeverEscapeTheRoot() {
        for (String bad : List.of("../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", ".strand-lock", "a\\b", "")) {
            assertThrows(IllegalArgumentException.class, () -> store.put(bad, new byte[1]), bad);
        }
    }

    @Test
    void tempFilesShouldNotBeListed() throws Exception {
        store.put("w/l/a", new byte[] {1});
        Files.writeString(tmp.resolve("cold/.strand-tmp/leftover.tmp"), "crash debris");
        assertEquals(List.of("w/l/a"), store.list("").stream().map(ColdStore.ObjectInfo::key).toList());
    }

    @Test
    void racingConditionalWritersFromTwoStoreInstancesShouldHaveOneWinnerPerVersion() throws Exception {
        int writers = 4;
        store.putIfAbsent("w/l/manifest.json", "0".getBytes(StandardCharsets.UTF_8)).orElseThrow();
        CyclicBarrier start = new CyclicBarrier(writers);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<Future<Integer>> wins = new ArrayList<>();
        try {
            for (int w = 0; w < writers; w++) {
                wins.add(pool.submit(() -> {
                    // each thread its own instance on the same directory, like separate processes
                    try (ColdStore mine = new FileColdStore(tmp.resolve("cold"))) {
                        start.await();
                        int won = 0;
                        for (int i = 0; i < 50; i++) {
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
            assertTrue(total >= 50, "someone made progress: " + total);
        } finally {
            pool.shutdownNow();
        }
    }
}

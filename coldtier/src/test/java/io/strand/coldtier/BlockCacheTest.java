package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BlockCacheTest {

    @Test
    void cacheShouldEvictLeastRecentlyUsedToStayWithinBudget() {
        BlockCache c = new BlockCache(300);
        c.get(new BlockCache.Key("a", 0), () -> "a0", v -> 100);
        c.get(new BlockCache.Key("a", 1), () -> "a1", v -> 100);
        c.get(new BlockCache.Key("a", 2), () -> "a2", v -> 100);
        c.get(new BlockCache.Key("a", 0), () -> "reloaded", v -> 100); // touch a0
        c.get(new BlockCache.Key("b", 0), () -> "b0", v -> 100);      // evicts a1
        assertTrue(c.contains(new BlockCache.Key("a", 0)));
        assertFalse(c.contains(new BlockCache.Key("a", 1)));
        assertTrue(c.usedBytes() <= 300);
        assertEquals(1, c.hits());
        c.get(new BlockCache.Key("huge", 0), () -> "x", v -> 1000);
        assertFalse(c.contains(new BlockCache.Key("huge", 0)), "an item bigger than the budget is served, not kept");
    }

    @Test
    void concurrentLoadsOfOneBlockShouldFetchOnce() throws Exception {
        BlockCache c = new BlockCache(1_000);
        AtomicInteger loads = new AtomicInteger();
        CountDownLatch inLoader = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        BlockCache.Key k = new BlockCache.Key("s", 3);
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> c.get(k, () -> {
            loads.incrementAndGet();
            inLoader.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "block";
        }, v -> 10));
        assertTrue(inLoader.await(10, TimeUnit.SECONDS));
        CompletableFuture<String> second = CompletableFuture.supplyAsync(() -> c.get(k, () -> {
            loads.incrementAndGet();
            return "dup";
        }, v -> 10));
        release.countDown();
        assertEquals("block", first.get(10, TimeUnit.SECONDS));
        assertEquals("block", second.get(10, TimeUnit.SECONDS));
        assertEquals(1, loads.get());
    }
}

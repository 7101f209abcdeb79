package io.strand.coldtier;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * A least-recently-used cache of decoded cold blocks and segment indexes with a byte budget,
 * shared by every {@link ColdLog} of a node so memory stays bounded however many logs are read.
 * Thread-safe: the LRU map is guarded by this object's monitor, held only for map operations;
 * loads run outside it, and concurrent loads of one key share a single fetch.
 *
 * <p>Keys are content-addressed (segment body SHA-256 + block number), so a cached block can never
 * be stale: a recreated log with the same key names has different hashes.
 */
public final class BlockCache {
    /** Default budget: 64 MiB of decoded entries. */
    public static final long DEFAULT_BUDGET_BYTES = 64L * 1024 * 1024;

    /** A cached item: block {@code block} of the segment with body hash {@code sha256}; -1 = its footer index. */
    record Key(String sha256, int block) {
    }

    private record Item(Object value, long weight) {
    }

    private final long budget;
    private final LinkedHashMap<Key, Item> lru = new LinkedHashMap<>(256, 0.75f, true);
    private final ConcurrentHashMap<Key, CompletableFuture<Object>> loading = new ConcurrentHashMap<>();
    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong misses = new AtomicLong();
    private long used;

    public BlockCache(long budgetBytes) {
        if (budgetBytes < 0) {
            throw new IllegalArgumentException("cache budget must be ≥ 0");
        }
        this.budget = budgetBytes;
    }

    public long budgetBytes() {
        return budget;
    }

    public synchronized long usedBytes() {
        return used;
    }

    public synchronized int size() {
        return lru.size();
    }

    public long hits() {
        return hits.get();
    }

    public long misses() {
        return misses.get();
    }

    public synchronized void clear() {
        lru.clear();
        used = 0;
    }

    synchronized boolean contains(Key key) {
        return lru.containsKey(key);
    }

    /** The cached value, or the loader's (run once however many threads ask at the same time). */
    @SuppressWarnings("unchecked")
    <T> T get(Key key, Supplier<T> loader, ToLongFunction<T> weigher) {
        synchronized (this) {
            Item item = lru.get(key);
            if (item != null) {
                hits.incrementAndGet();
                return (T) item.value;
            }
        }
        misses.incrementAndGet();
        CompletableFuture<Object> mine = new CompletableFuture<>();
        CompletableFuture<Object> theirs = loading.putIfAbsent(key, mine);
        if (theirs != null) {
            try {
                return (T) theirs.join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException re) {
                    throw re;
                }
                throw e;
            }
        }
        try {
            T value = loader.get();
            put(key, value, weigher.applyAsLong(value));
            mine.complete(value);
            return value;
        } catch (RuntimeException | Error e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            loading.remove(key, mine);
        }
    }

    private synchronized void put(Key key, Object value, long weight) {
        if (weight > budget) {
            return; // larger than the whole cache: serve it, don't keep it
        }
        Item old = lru.put(key, new Item(value, weight));
        used += weight - (old == null ? 0 : old.weight);
        Iterator<Map.Entry<Key, Item>> it = lru.entrySet().iterator();
        while (used > budget && it.hasNext()) {
            Map.Entry<Key, Item> eldest = it.next();
            used -= eldest.getValue().weight;
            it.remove();
        }
    }
}

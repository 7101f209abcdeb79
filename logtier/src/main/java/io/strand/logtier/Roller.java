package io.strand.logtier;

import io.strand.coldtier.ColdLog;
import io.strand.core.Entry;
import io.strand.core.StrandException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Moves the oldest hot entries of logs past their hot threshold into cold segments, following the
 * roll protocol (segment written, uploaded, verified and in the manifest, then hot cycles
 * dropped). Runs on one named thread, {@code cold-roller}, so cold work is bounded to one roll at a
 * time and never runs on the append path. A store that is down only delays rolling: the log's hot
 * part keeps growing, the failure is counted and retried with capped backoff.
 */
final class Roller implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("strand.cold");
    static final int MAX_SEGMENT_ENTRIES = 250_000;
    private static final long MAX_BACKOFF_MILLIS = 30_000;

    private final LogStore logs;
    private final ColdTier cold;
    private final LogConfig.HotThreshold threshold;
    private final ReentrantLock lock = new ReentrantLock();
    /** Held for a whole roll, so the background loop and {@code cold roll} requests never roll at the same time. */
    private final ReentrantLock rolling = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final LinkedHashSet<String> candidates = new LinkedHashSet<>();
    private final Map<String, Long> retryAt = new ConcurrentHashMap<>();
    private final Map<String, Integer> failures = new ConcurrentHashMap<>();
    private final Map<String, Known> known = new ConcurrentHashMap<>();
    private static final long AGE_CHECK_NANOS = 10_000_000_000L;
    private final Thread thread;
    private volatile boolean running = true;
    final AtomicLong rolls = new AtomicLong();
    final AtomicLong rolledEntries = new AtomicLong();
    final AtomicLong rollFailures = new AtomicLong();
    volatile String lastError = "";

    Roller(LogStore logs, ColdTier cold, LogConfig.HotThreshold threshold) {
        this.logs = logs;
        this.cold = cold;
        this.threshold = threshold;
        this.thread = WorkerThreads.start(this::loop, "cold-roller");
    }

    /** After an append or open: queue a check of the log (deduplicated; the check itself runs on the roller). */
    void afterAppend(String ws, String name, long head) {
        String key = ws + '/' + name;
        Known k = known.get(key);
        long now = System.nanoTime();
        // Runs on the writer thread after every ack: decide from what the roller last saw, no I/O.
        // Past the entry threshold (or the byte estimate) a check is due now; age only needs a look
        // every AGE_CHECK_NANOS.
        if (k == null || head - k.coldLast > threshold.maxEntries()
                || (head - k.coldLast) * k.avgEntryBytes > threshold.maxBytes() || now - k.checkedAt > AGE_CHECK_NANOS) {
            request(ws, name);
        }
    }

    /** What the last check of a log saw: its cold last seq, average entry size and when it looked. */
    private record Known(long coldLast, double avgEntryBytes, long checkedAt) {
    }

    /** Forgets what was seen of a deleted log. */
    void forget(String ws, String name) {
        known.remove(ws + '/' + name);
    }

    /** Queues a log for a roll check (also used by {@code strand cold roll}). */
    void request(String ws, String name) {
        lock.lock();
        try {
            if (candidates.add(ws + '/' + name)) {
                work.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    private void loop() {
        while (running) {
            String key;
            lock.lock();
            try {
                key = nextDue();
                if (key == null) {
                    work.await(1, TimeUnit.SECONDS);
                    continue;
                }
            } catch (InterruptedException e) {
                continue;
            } finally {
                lock.unlock();
            }
            int slash = key.indexOf('/');
            String ws = key.substring(0, slash);
            String name = key.substring(slash + 1);
            try {
                rollNow(ws, name, false);
                failures.remove(key);
                retryAt.remove(key);
            } catch (RuntimeException e) {
                int n = failures.merge(key, 1, Integer::sum);
                long backoff = Math.min(MAX_BACKOFF_MILLIS, 500L << Math.min(n, 10));
                retryAt.put(key, System.currentTimeMillis() + backoff);
                rollFailures.incrementAndGet();
                lastError = key + ": " + e.getMessage();
                LOG.log(System.Logger.Level.WARNING, "cold roll of " + key + " failed (attempt " + n + ", retry in "
                        + backoff + " ms); hot part keeps growing: " + e.getMessage());
                request(ws, name);
            }
        }
    }

    /** The first candidate whose retry time has come; called with the lock held. */
    private String nextDue() {
        long now = System.currentTimeMillis();
        for (Iterator<String> it = candidates.iterator(); it.hasNext(); ) {
            String key = it.next();
            if (retryAt.getOrDefault(key, 0L) <= now) {
                it.remove();
                return key;
            }
        }
        return null;
    }

    /**
     * Rolls what the threshold asks for (or, when {@code everything}, all committed entries but
     * the newest) into segments. Returns the number of entries rolled.
     */
    /** Runs {@code body} while no roll runs (a log delete: no roll may commit a manifest between its steps). */
    <T> T withoutRolls(java.util.function.Supplier<T> body) {
        rolling.lock();
        try {
            return body.get();
        } finally {
            rolling.unlock();
        }
    }

    long rollNow(String ws, String name, boolean everything) {
        rolling.lock();
        try {
            return rollLocked(ws, name, everything);
        } finally {
            rolling.unlock();
        }
    }

    private long rollLocked(String ws, String name, boolean everything) {
        LogStore.LogSlot slot = logs.slotFor(ws, name);
        Log log = slot.acquire(false);
        if (log == null) {
            return 0;
        }
        try {
            ColdLog c = cold.log(ws, name);
            long coldLast = c.lastSeq();
            long floor = log.floor();
            if (coldLast < floor - 1) {
                // trimmed past the cold part: its segments all lie below first and hot files below it
                // may be gone, so retire them and continue the cold part at first (never roll a gap)
                if (coldLast > 0) {
                    c.trimBefore(floor, io.strand.coldtier.ColdLogConfig.DEFAULT_COMPACTION_GRACE);
                }
                coldLast = Math.max(c.lastSeq(), floor - 1);
            }
            long head = log.head();
            long rollTo = everything ? head : target(log, coldLast, head);
            long rolled = 0;
            while (coldLast < rollTo) {
                long segEnd = Math.min(rollTo, coldLast + MAX_SEGMENT_ENTRIES);
                c.roll(hotEntries(log, coldLast + 1, segEnd));
                rolled += segEnd - coldLast;
                coldLast = segEnd;
                rolls.incrementAndGet();
            }
            long bytes = log.dataBytes();
            known.put(ws + '/' + name, new Known(coldLast, head > 0 ? (double) bytes / head : 0, System.nanoTime()));
            if (rolled > 0) {
                rolledEntries.addAndGet(rolled);
                long keepFrom = coldLast + 1;
                logs.writers().submit(ws, commit -> {
                    log.snapshot();
                    return log.hot().dropCyclesBefore(keepFrom);
                }).join();
            }
            return rolled;
        } finally {
            slot.release();
        }
    }

    /** Highest seq to roll so that the hot part is back under every limit with room to grow. */
    private long target(Log log, long coldLast, long head) {
        long hot = head - coldLast;
        long rollTo = coldLast;
        if (hot > threshold.maxEntries()) {
            rollTo = Math.max(rollTo, head - threshold.maxEntries() / 2);
        }
        long bytes = log.dataBytes();
        if (head > 0 && bytes > 0) {
            double avg = (double) bytes / head; // hot bytes estimated from the log's average entry size
            if (hot * avg > threshold.maxBytes()) {
                rollTo = Math.max(rollTo, head - (long) (threshold.maxBytes() / 2 / avg));
            }
        }
        long cutoff = System.currentTimeMillis() - threshold.maxAge().toMillis();
        if (cutoff > 0) {
            rollTo = Math.max(rollTo, log.seqAtOrAfter(cutoff) - 1);
        }
        return Math.min(rollTo, head);
    }

    /** Streams hot entries {@code from..to} in chunks (memory stays bounded for big segments). */
    private static Iterator<Entry> hotEntries(Log log, long from, long to) {
        return new Iterator<>() {
            private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
            private long next = from;

            @Override
            public boolean hasNext() {
                if (buffer.isEmpty() && next <= to) {
                    List<Entry> chunk = new ArrayList<>();
                    long after = log.hot().read(next, to, 2000, 8L << 20, chunk::add);
                    if (chunk.isEmpty()) {
                        throw new StrandException(io.strand.core.ErrorCode.CORRUPT,
                                "hot entries " + next + ".." + to + " are missing while rolling");
                    }
                    buffer.addAll(chunk);
                    next = after;
                }
                return !buffer.isEmpty();
            }

            @Override
            public Entry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return buffer.poll();
            }
        };
    }

    int backlog() {
        lock.lock();
        try {
            return candidates.size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        running = false;
        WorkerThreads.stop(thread);
    }
}

package io.strand.logtier;

import io.strand.coldtier.ColdLog;
import io.strand.core.Agent;
import io.strand.core.Entry;
import io.strand.core.StrandException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Thread-safe: rolls run one at a time on the {@code cold-roller} {@link Agent} (or on a {@code cold
 * roll} request's thread, never two at once); any thread may queue a log. Moves the oldest hot
 * entries of logs past their hot threshold into cold segments, following the roll protocol
 * (segment written, uploaded, verified and in the manifest, then hot cycles dropped), so cold work
 * is bounded to one roll at a time and never runs on the append path. A store that is down only
 * delays rolling: the log's hot part keeps growing, the failure is counted and retried with capped
 * backoff. The roller sees the log tier only through {@link Logs} and {@link RollableLog}.
 *
 * <p>On a cluster replica (SPEC §13) the roller rolls only while its shard's {@link ColdTier#writerTerm}
 * says this replica leads; otherwise queued logs wait, and are checked once it leads. A new term
 * first re-reads a log's manifest (the previous leader may have rolled further than this replica
 * saw), and step 6 goes to {@link Logs#covered}, which proposes it to the shard's log so every
 * replica drops its own hot files in log order — including after a previous leader committed a
 * manifest and died before proposing its step 6.
 */
final class Roller implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("strand.cold");
    static final int MAX_SEGMENT_ENTRIES = 250_000;
    private static final long MAX_BACKOFF_MILLIS = 30_000;
    /** How often the agent looks for candidates whose retry time has come (a request wakes it at once). */
    private static final Duration PASS_EVERY = Duration.ofSeconds(1);

    /** What the roller needs of the log tier. */
    interface Logs {
        /** Runs {@code roll} on the open log {@code ws/name}, held open meanwhile; 0 when the log does not exist. */
        long withLog(String ws, String name, ToLongFunction<RollableLog> roll);

        /** Runs {@code change} as a turn on the writer of {@code ws} and waits for it. */
        <T> T onWriter(String ws, Supplier<T> change);

        /**
         * Step 6: the manifest of {@code ws/name} now holds every entry ≤ {@code coldLast}, so hot
         * cycle files wholly below it may go. A single node drops them as a turn on the writer; a
         * cluster replica proposes it to its shard's log and waits until it is applied here.
         */
        void covered(String ws, String name, RollableLog log, long coldLast);

        /** A cluster replica's deleted logs ({@code "ws/name"}) whose shared cold part is not emptied yet; empty on a single node. */
        default List<String> pendingColdDeletes() {
            return List.of();
        }

        /** Proposes "the deleted {@code ws/name}'s manifest is empty at {@code generation}" and waits until it is applied here. */
        default void coldDeleted(String ws, String name, long generation) {
            throw new IllegalStateException("a single node deletes its cold part with the log");
        }
    }

    /** What the roller needs of one open log. */
    interface RollableLog {
        long head();

        /** The trim point: entries below it are never rolled. */
        long floor();

        /** Data bytes appended over the log's life, for its average entry size. */
        long dataBytes();

        long seqAtOrAfter(long ts);

        /** Hot entries {@code from..to} into {@code limit}; returns the seq after the last one delivered. */
        long readHot(long from, long to, LogReader.Limit limit);

        /** Drops hot cycle files wholly below {@code keepFrom}; writer thread only. */
        int dropHotBefore(long keepFrom);

        /** Where the hot part stands for {@code seq}, for an error that says a hot read found nothing. */
        String describeHot(long seq);
    }

    private final Logs logs;
    private final ColdTier cold;
    private final LogConfig.HotThreshold threshold;
    private final ReentrantLock lock = new ReentrantLock();
    /** Held for a whole roll, so the background loop and {@code cold roll} requests never roll at the same time. */
    private final ReentrantLock rolling = new ReentrantLock();
    private final LinkedHashSet<String> candidates = new LinkedHashSet<>();
    private final Map<String, Long> retryAt = new ConcurrentHashMap<>();
    private final Map<String, Integer> failures = new ConcurrentHashMap<>();
    private final Map<String, Known> known = new ConcurrentHashMap<>();
    /** How often a log that is appended to is looked at for age alone. */
    private static final Duration AGE_CHECK_EVERY = Duration.ofSeconds(10);
    private static final long AGE_CHECK_NANOS = AGE_CHECK_EVERY.toNanos();
    /** The term of a {@link Known} that no check recorded: the log's first check under any term re-reads its manifest. */
    private static final long NO_TERM = Long.MIN_VALUE;
    private final Agent agent;
    private volatile boolean closed;
    final AtomicLong rolls = new AtomicLong();
    /** Roll checks run (each may roll nothing); read by tests. */
    final AtomicLong checks = new AtomicLong();
    final AtomicLong rolledEntries = new AtomicLong();
    final AtomicLong rollFailures = new AtomicLong();
    volatile String lastError = "";

    Roller(Logs logs, ColdTier cold, LogConfig.HotThreshold threshold) {
        this.logs = logs;
        this.cold = cold;
        this.threshold = threshold;
        this.agent = Agent.start("cold-roller", PASS_EVERY, this::rollDue);
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

    /**
     * After the append of a log's first batch (seq 1 up to {@code head}, {@code bytes} of data; not a
     * duplicate of it, answered from the producer window): records what a check would see, instead of
     * queueing one. Nothing of a log whose first batch this was can be cold or old, so a check now
     * would roll nothing; before this, one ran for every new log, opening a tailer (a directory
     * listing and a mapping) and taking the log's slot — 4 % of the server's CPU under {@code strand
     * bench many-logs} in {@code perf} (2026-12-04). The log's next append is judged from this as after
     * a check: past a threshold at once, for age after {@link #AGE_CHECK_EVERY}. A log the roller has
     * seen before keeps what was seen. With a hot age limit no longer than that interval, the check is
     * queued as before.
     */
    void afterFirstBatch(String ws, String name, long head, long bytes) {
        if (threshold.maxAge().compareTo(AGE_CHECK_EVERY) > 0) { // as Durations: toNanos() overflows past 292 years
            known.putIfAbsent(ws + '/' + name, new Known(0, (double) bytes / Math.max(head, 1), System.nanoTime(), NO_TERM, 0));
        }
        afterAppend(ws, name, head);
    }

    /**
     * What the last check of a log saw: its cold last seq, average entry size and when it looked;
     * the writer term it rolled under and the last seq whose step 6 it handed on in that term.
     */
    private record Known(long coldLast, double avgEntryBytes, long checkedAt, long term, long covered) {
    }

    /** Forgets what was seen of a deleted log. */
    void forget(String ws, String name) {
        known.remove(ws + '/' + name);
    }

    /** Queues a log for a roll check (also used by {@code strand cold roll}). */
    void request(String ws, String name) {
        lock.lock();
        try {
            if (!candidates.add(ws + '/' + name)) {
                return;
            }
        } finally {
            lock.unlock();
        }
        agent.wake();
    }

    /** The agent's pass: rolls every candidate whose retry time has come, one after another, while this node may write. */
    private void rollDue() {
        if (!closed && cold.writerTerm().current() >= 0) {
            retireDeleted();
        }
        String key;
        while (!closed && cold.writerTerm().current() >= 0 && (key = nextDue()) != null) {
            int slash = key.indexOf('/');
            String ws = key.substring(0, slash);
            String name = key.substring(slash + 1);
            try {
                rollNow(ws, name, false);
                failures.remove(key);
                retryAt.remove(key);
            } catch (RuntimeException | Error e) {
                int n = failures.merge(key, 1, Integer::sum);
                long backoff = Math.min(MAX_BACKOFF_MILLIS, 500L << Math.min(n, 10));
                retryAt.put(key, System.currentTimeMillis() + backoff);
                rollFailures.incrementAndGet();
                lastError = key + ": " + e.getMessage();
                LOG.log(System.Logger.Level.WARNING, "cold roll of " + key + " failed (attempt " + n + ", retry in "
                        + backoff + " ms); hot part keeps growing: " + e.getMessage());
                requeue(key);
                if (e instanceof VirtualMachineError fatal) {
                    throw fatal; // counted and queued again; the agent reports it
                }
            }
        }
    }

    private void requeue(String key) {
        lock.lock();
        try {
            candidates.add(key);
        } finally {
            lock.unlock();
        }
    }

    /** Takes the first candidate whose retry time has come, null when none has. */
    private String nextDue() {
        long now = System.currentTimeMillis();
        lock.lock();
        try {
            for (Iterator<String> it = candidates.iterator(); it.hasNext(); ) {
                String key = it.next();
                if (retryAt.getOrDefault(key, 0L) <= now) {
                    it.remove();
                    return key;
                }
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code body} while no roll runs (a log delete: no roll may commit a manifest between its steps). */
    <T> T withoutRolls(Supplier<T> body) {
        rolling.lock();
        try {
            return body.get();
        } finally {
            rolling.unlock();
        }
    }

    /**
     * Rolls what the threshold asks for (or, when {@code everything}, all committed entries) into
     * segments. Returns the number of entries rolled.
     */
    long rollNow(String ws, String name, boolean everything) {
        rolling.lock();
        try {
            return rollLocked(ws, name, everything);
        } finally {
            rolling.unlock();
        }
    }

    private long rollLocked(String ws, String name, boolean everything) {
        if (logs.pendingColdDeletes().contains(ws + '/' + name)) {
            retireDeletedLocked(ws, name); // a log of this name was deleted: its cold part goes before any roll of the new one
        }
        return logs.withLog(ws, name, log -> roll(ws, name, log, everything));
    }

    /**
     * A cluster leader's first duty each pass: the cold part of every log its shard deleted (see
     * {@link ColdDeletes}) is emptied, before any roll, so a log created again under the name never
     * rolls onto the deleted one's manifest. A failure is counted and retried on the next pass.
     */
    private void retireDeleted() {
        for (String key : logs.pendingColdDeletes()) {
            if (closed || cold.writerTerm().current() < 0) {
                return;
            }
            int slash = key.indexOf('/');
            rolling.lock();
            try {
                retireDeletedLocked(key.substring(0, slash), key.substring(slash + 1));
            } catch (RuntimeException e) {
                rollFailures.incrementAndGet();
                lastError = key + " (deleted): " + e.getMessage();
                LOG.log(System.Logger.Level.WARNING, "emptying the cold part of the deleted log " + key
                        + " failed (retried on the next pass; no roll of that name runs meanwhile): " + e.getMessage());
            } finally {
                rolling.unlock();
            }
        }
    }

    /**
     * Empties the deleted log's manifest under this leader's term, then proposes it to the shard;
     * holds {@link #rolling}. Fail point {@code cold.deleted.afterEmpty}: a leader that dies between
     * the two leaves the name noted on every replica, and the next leader repeats both (the manifest
     * is already empty: no commit).
     */
    private void retireDeletedLocked(String ws, String name) {
        // Asked as a turn on the workspace's writer: a leader is ready once its replica has applied every
        // entry before its term, but the effect of a coldDeleted among them (a writer turn) may still be
        // queued; emptying the manifest again then would empty a new log's.
        if (!logs.onWriter(ws, () -> logs.pendingColdDeletes().contains(ws + '/' + name))) {
            return;
        }
        long generation = cold.log(ws, name).retireDeleted();
        io.strand.core.FailPoints.hit("cold.deleted.afterEmpty");
        known.remove(ws + '/' + name);
        logs.coldDeleted(ws, name, generation);
    }

    private long roll(String ws, String name, RollableLog log, boolean everything) {
        checks.incrementAndGet();
        long term = cold.writerTerm().current();
        if (term < 0) {
            throw new StrandException(io.strand.core.ErrorCode.UNAVAILABLE, "log " + ws + "/" + name
                    + " is rolled by its shard's leader only, and this node does not lead it now", java.util.Map.of("retryable", true));
        }
        ColdLog c = cold.log(ws, name);
        Known before = known.get(ws + '/' + name);
        boolean sameTerm = before != null && before.term() == term;
        if (term > 0 && !sameTerm) {
            c.refresh(); // a new leader: the previous one may have rolled further than this replica saw
        }
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
        coldLast = Math.max(coldLast, c.lastSeq()); // a roll that found its range already cold re-read a manifest that may reach further
        long bytes = log.dataBytes();
        long covered = sameTerm ? before.covered() : 0;
        known.put(ws + '/' + name, new Known(coldLast, head > 0 ? (double) bytes / head : 0, System.nanoTime(), term, covered));
        if (rolled > 0) {
            rolledEntries.addAndGet(rolled);
        }
        // A single node drops after its own rolls; a leader also hands on what an earlier leader
        // committed (once per term), so a step 6 lost with a dying leader still reaches every replica.
        if (term == 0 ? rolled > 0 : coldLast > covered) {
            logs.covered(ws, name, log, coldLast);
            known.computeIfPresent(ws + '/' + name, (k, v) -> new Known(v.coldLast(), v.avgEntryBytes(), v.checkedAt(), term, v.coldLast()));
        }
        return rolled;
    }

    /** Highest seq to roll so that the hot part is back under every limit with room to grow. */
    private long target(RollableLog log, long coldLast, long head) {
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
    private static Iterator<Entry> hotEntries(RollableLog log, long from, long to) {
        return new Iterator<>() {
            private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
            private long next = from;

            @Override
            public boolean hasNext() {
                if (buffer.isEmpty() && next <= to) {
                    List<Entry> chunk = new ArrayList<>();
                    long after = log.readHot(next, to, new LogReader.Limit(2000, 8L << 20, EntrySink.of(chunk::add)));
                    if (chunk.isEmpty()) {
                        throw new StrandException(io.strand.core.ErrorCode.CORRUPT,
                                "hot entries " + next + ".." + to + " are missing while rolling (" + log.describeHot(next) + ")");
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
        closed = true;
        agent.close();
    }
}

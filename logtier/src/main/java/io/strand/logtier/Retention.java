package io.strand.logtier;

import io.strand.coldtier.ColdLog;
import io.strand.core.Agent;
import io.strand.core.ErrorCode;
import io.strand.core.FailPoints;
import io.strand.core.Names;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Thread-safe: trims, retention policies and the {@code log-retention} {@link Agent} that applies
 * them (SPEC §12). A log's trim point and policy change only in a turn on its workspace's writer (so
 * they are ordered with its appends); giving space back runs only on the worker thread, while no
 * roll runs ({@link Roller#withoutRolls}), so a trim never races a roll.
 *
 * <p>A trim's commit point is {@code retention.json} ({@link RetentionFile}) renamed and fsynced
 * with the new {@code first}; from then on no read serves a seq below it (reads take the log's
 * {@code first} when they start, see {@link LogReader#forward}), and the reply follows.
 * Space comes back afterwards, on the worker, each step safe to repeat after a crash:
 * <ol>
 * <li>cold segments wholly below {@code first} are retired in one manifest commit (readers holding
 *     the older manifest still finish), and deleted by garbage collection after the grace period;</li>
 * <li>hot cycle files wholly below {@code first} are deleted (the log's producer window is
 *     snapshotted first, so duplicates of retained windows are still answered after a restart).</li>
 * </ol>
 * A segment or cycle file that holds {@code first} stays whole; reads still start at {@code first}.
 * Fail points: {@code trim.afterCommit}, {@code trim.afterColdManifest}, {@code trim.afterHotDrop}.
 *
 * <p>A cluster replica (with {@link ReplicatedTrims}): trims and policies come from its shard's Raft
 * log ({@link #trimAsync}, {@link #policyAsync}, in log order); its worker decides policy trims only
 * while the replica leads the shard, and proposes them rather than apply them. Every replica gives
 * back its own hot files below {@code first}; cold segments are retired by the leader only (the
 * manifest commit is fenced by its term, see {@link io.strand.coldtier.WriterTerm}).
 */
public final class Retention implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("strand.retention");
    /** How often every log is checked against its policy: within a minute of an entry leaving it. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);

    /** A trim's answer: the first retained seq and the committed head. */
    /** Told of each trim the worker made to a log's policy (SPEC §12: trims are audited). */
    @FunctionalInterface
    public interface PolicyTrims {
        /** {@code ws/name} now starts at {@code first}, by {@code policy}. Called on the worker's thread, after the trim is durable. */
        void trimmed(String ws, String name, long first, RetentionPolicy policy);
    }

    public record Trimmed(long first, long head) {
    }

    private final LogStore logs;
    private final RetentionPolicy defaults;
    private final Duration interval;
    private final Duration coldGrace;
    /** A cluster replica's way to its shard's Raft log; null on a single node. */
    private final ReplicatedTrims replicated;
    private final ConcurrentLinkedQueue<String> requests = new ConcurrentLinkedQueue<>();
    /** When the next pass over every log is due (System.nanoTime); the agent's thread only. */
    private long nextPass = System.nanoTime(); // a pass at start finishes what a crash interrupted
    private final Agent agent;
    private volatile boolean running = true;
    public final AtomicLong trims = new AtomicLong();
    public final AtomicLong passes = new AtomicLong();
    public final AtomicLong failures = new AtomicLong();
    public final AtomicLong hotFilesDeleted = new AtomicLong();
    public final AtomicLong coldSegmentsRetired = new AtomicLong();
    public final AtomicLong coldSegmentsDeleted = new AtomicLong();
    public volatile String lastError = "";
    /** Told of the worker's policy trims; set once by whoever audits them. */
    private volatile PolicyTrims policyTrims = (ws, name, first, policy) -> { };

    /**
     * Starts the worker.
     *
     * @param defaults  the policy of logs without one of their own (not applied to {@code _system})
     * @param interval  how often every log is checked
     * @param coldGrace how long retired cold segments stay readable
     */
    public Retention(LogStore logs, RetentionPolicy defaults, Duration interval, Duration coldGrace) {
        this(logs, defaults, interval, coldGrace, null);
    }

    /** As above for a cluster replica: policy trims are decided by the shard's leader and proposed through {@code replicated}. */
    public Retention(LogStore logs, RetentionPolicy defaults, Duration interval, Duration coldGrace, ReplicatedTrims replicated) {
        this.logs = logs;
        this.replicated = replicated;
        this.defaults = defaults;
        this.interval = interval;
        this.coldGrace = coldGrace;
        logs.retentionDefaults(defaults);
        // the agent looks at least every second for requests and a due pass; a request wakes it at once
        Duration period = interval.compareTo(Duration.ofSeconds(1)) < 0 ? interval : Duration.ofSeconds(1);
        this.agent = Agent.start("log-retention", period, this::work, true);
    }

    public RetentionPolicy defaults() {
        return defaults;
    }

    // ---------------------------------------------------------------- requests

    /**
     * Makes every entry below {@code before} unreadable, durably, then asks the worker to give the
     * space back. A {@code before} at or below the current first is a no-op answering it.
     *
     * @throws StrandException {@code not_found} for a missing log, {@code bad_request} (with
     *         {@code head}) when {@code before} passes {@code head+1}; nothing changed then
     */
    public Trimmed trim(String ws, String name, long before) {
        return LogStore.join(trimAsync(ws, name, before, false));
    }

    /**
     * {@link #trim} as a turn on the workspace's writer, ordered with its appends: what a cluster
     * replica runs when it applies a committed trim. {@code clamp} (a policy trim the leader
     * decided) takes a {@code before} past {@code head+1} as {@code head+1} instead of refusing it.
     */
    public CompletableFuture<Trimmed> trimAsync(String ws, String name, long before, boolean clamp) {
        try {
            Names.workspace(ws);
            Names.object("log", name);
            if (before < 0) {
                throw StrandException.badRequest("before must be ≥ 0, not " + before);
            }
        } catch (StrandException e) {
            return CompletableFuture.failedFuture(e);
        }
        return onWriter(ws, name, log -> {
            long head = log.writtenHead(); // every append before this turn, whatever group it is in
            if (before > head + 1 && !clamp) {
                throw new StrandException(ErrorCode.BAD_REQUEST, "before " + before + " is past head+1 of log " + name
                        + " (head " + head + ")", Map.of("head", head));
            }
            moveFirst(log, Math.min(before, head + 1));
            return new Trimmed(log.first(), head);
        });
    }

    /** Sets a log's own policy ({@link RetentionPolicy#UNLIMITED} keeps everything), durably; {@code not_found} for a missing log. */
    public RetentionPolicy policy(String ws, String name, RetentionPolicy policy) {
        return LogStore.join(policyAsync(ws, name, policy));
    }

    /** {@link #policy} as a turn on the workspace's writer (what a cluster replica applies). */
    public CompletableFuture<RetentionPolicy> policyAsync(String ws, String name, RetentionPolicy policy) {
        try {
            Names.workspace(ws);
            Names.object("log", name);
        } catch (StrandException e) {
            return CompletableFuture.failedFuture(e);
        }
        return onWriter(ws, name, log -> {
            log.retention(log.retention().withPolicy(policy));
            return policy;
        });
    }

    /** Who is told of the worker's policy trims (on a cluster: the shard leader's, which proposes them). */
    public void onPolicyTrim(PolicyTrims listener) {
        this.policyTrims = listener;
    }

    /** Moves the log's first to {@code before} when that is forward; writer thread. True when it moved. */
    private boolean moveFirst(Log log, long before) {
        if (before > log.floor()) {
            log.retention(log.retention().withFirst(before));
            trims.incrementAndGet();
            FailPoints.hit("trim.afterCommit");
            return true;
        }
        return false;
    }

    /**
     * Runs {@code change} as a turn on the workspace's writer with the log open, then asks the worker
     * to look at the log; {@code not_found} when it does not exist.
     */
    private <T> CompletableFuture<T> onWriter(String ws, String name, java.util.function.Function<Log, T> change) {
        return logs.writers().submit(ws, commit -> logs.withLog(ws, name, change, null)).thenApply(out -> {
            if (out == null) {
                throw StrandException.notFound("log '" + name + "' does not exist in workspace '" + ws + "'");
            }
            request(ws, name);
            return out;
        });
    }

    // ---------------------------------------------------------------- worker

    /** The agent's pass: the logs asked for, then every log when a pass is due. Each failure is counted and logged. */
    private void work() {
        String key;
        while (running && (key = requests.poll()) != null) {
            int slash = key.indexOf('/');
            String ws = key.substring(0, slash);
            String name = key.substring(slash + 1);
            applyCounted(ws, name);
        }
        if (running && System.nanoTime() - nextPass >= 0) {
            try {
                pass();
            } catch (IOException | RuntimeException | Error e) {
                failed("retention pass", e);
            }
            nextPass = System.nanoTime() + interval.toNanos();
        }
    }

    private void applyCounted(String ws, String name) {
        try {
            apply(ws, name);
        } catch (RuntimeException | Error e) {
            failed(ws + "/" + name, e);
        }
    }

    /** Counts and logs a failed step (retried on the next pass); a VM error goes on to the agent, which reports it. */
    private void failed(String what, Throwable e) {
        failures.incrementAndGet();
        lastError = what + ": " + e;
        LOG.log(System.Logger.Level.WARNING, "retention of " + what + " failed (retried on the next pass): " + e, e);
        if (e instanceof VirtualMachineError fatal) {
            throw fatal;
        }
    }

    /** Checks every log that has a trim point or policy of its own, and every log when server defaults are set. */
    private void pass() throws IOException {
        passes.incrementAndGet();
        Path root = logs.config().logsDir();
        if (!Files.isDirectory(root)) {
            return;
        }
        try (DirectoryStream<Path> workspaces = Files.newDirectoryStream(root)) {
            for (Path wsDir : workspaces) {
                String ws = wsDir.getFileName().toString();
                if (!Files.isDirectory(wsDir) || !(Names.isWorkspace(ws) || Names.SYSTEM_WORKSPACE.equals(ws))) {
                    continue;
                }
                boolean byDefault = !defaults.unlimited() && !Names.SYSTEM_WORKSPACE.equals(ws);
                try (DirectoryStream<Path> names = Files.newDirectoryStream(wsDir)) {
                    for (Path logDir : names) {
                        String name = logDir.getFileName().toString();
                        if (!running) {
                            return;
                        }
                        if (Names.isObject(name) && (byDefault || RetentionFile.exists(logDir)) && Log.exists(logDir)) {
                            applyCounted(ws, name);
                        }
                    }
                }
            }
        }
    }

    /**
     * Trims one log to its policy, then gives back the space below its first. Worker thread. A
     * cluster leader proposes the trim once the log is let go (not held open across a Raft round);
     * the space comes back when the trim's apply asks for this log again.
     */
    void apply(String ws, String name) {
        long[] propose = {0};
        long[] moved = {0};
        RetentionPolicy[] by = {null};
        logs.withLog(ws, name, log -> {
            RetentionPolicy policy = log.policy() != null ? log.policy()
                    : Names.SYSTEM_WORKSPACE.equals(ws) ? RetentionPolicy.UNLIMITED : defaults;
            long keep = policy.keepFrom(log.head(), log.dataBytes(), System.currentTimeMillis(), log::seqAtOrAfter);
            if (keep > log.floor()) {
                long before = Math.min(keep, log.head() + 1);
                by[0] = policy;
                if (replicated == null) {
                    if (LogStore.onWriter(logs.writers(), ws, () -> moveFirst(log, before))) {
                        moved[0] = before;
                    }
                } else if (replicated.leads()) {
                    propose[0] = before; // every replica moves first when it applies it
                }
            }
            reclaim(ws, name, log);
            return true;
        }, false);
        if (propose[0] > 0) {
            LogStore.join(replicated.proposeTrim(ws, name, propose[0]));
            moved[0] = propose[0];
        }
        if (moved[0] > 0) {
            policyTrims.trimmed(ws, name, moved[0], by[0]);
        }
    }

    /** Deletes cold segments and hot cycle files wholly below the log's first (see the class comment). */
    private void reclaim(String ws, String name, Log log) {
        long first = log.floor();
        if (first <= 1) {
            return;
        }
        Roller roller = logs.roller();
        ColdTier tier = logs.coldTier();
        Runnable steps = () -> {
            if (tier != null && tier.writerTerm().current() >= 0) { // a cluster's followers leave the shared store to the leader
                ColdLog cold = tier.log(ws, name);
                coldSegmentsRetired.addAndGet(cold.trimBefore(first, coldGrace));
                Instant now = Instant.now();
                if (cold.garbageDue(now)) {
                    coldSegmentsDeleted.addAndGet(cold.collectGarbage(now));
                }
            }
            // The cold part now holds nothing wholly below first, so hot files below it are not needed
            // to continue it either: the roller goes on at first.
            long hotFirst = log.hotStoredFirst();
            if (hotFirst > 0 && hotFirst < first) {
                int dropped = LogStore.onWriter(logs.writers(), ws, () -> log.dropHotBefore(first));
                FailPoints.hit("trim.afterHotDrop");
                hotFilesDeleted.addAndGet(dropped);
            }
        };
        if (roller != null) {
            roller.withoutRolls(() -> {
                steps.run();
                return null;
            });
        } else {
            steps.run();
        }
    }

    /** Queues a log for an immediate check (tests; the worker also checks every {@code interval}). */
    public void request(String ws, String name) {
        requests.add(ws + '/' + name);
        agent.wake();
    }

    /** Counters for metrics and status. */
    public Map<String, Object> stats() {
        return Map.of("trims", trims.get(), "passes", passes.get(), "failures", failures.get(),
                "hotFilesDeleted", hotFilesDeleted.get(), "coldSegmentsRetired", coldSegmentsRetired.get(),
                "coldSegmentsDeleted", coldSegmentsDeleted.get(), "lastError", lastError);
    }

    @Override
    public void close() {
        running = false;
        agent.close();
    }
}

package io.strand.app;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Timer;
import io.strand.core.ErrorCode;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Strand's meters in Helidon's registry, served by the observe endpoint as Prometheus text.
 * Thread-safe: meters and the subscription state behind the gauges are concurrent. The registry is
 * process-wide and a gauge keeps the state object of whoever registered it first, so the state the
 * subscription gauges read is process-wide too (several servers in one JVM, as in tests, share it).
 */
public final class StrandMetrics {
    private static final AtomicLong SUBSCRIBERS = new AtomicLong();
    /**
     * What each {@link #gauge} and {@link #counter} reads, by name: the registry keeps the first meter
     * of a name for the whole process, so the meter reads through this map and the newest server's
     * supplier wins (one server per process in production; several in a test JVM). Held strongly
     * here, since the registry holds a meter's state only weakly.
     */
    private static final Map<String, Supplier<Number>> CURRENT = new ConcurrentHashMap<>();
    /** Every live subscription's lag as it last reported it. */
    private static final Set<ReplayLag> LAGS = ConcurrentHashMap.newKeySet();
    /**
     * Helidon's metrics settings for the whole process: no {@code scope} tag (every series would carry
     * {@code scope="application"} or {@code "base"}, noise for a server that has one application).
     * The observer gets the same settings ({@link #metricsConfig}), or it would replace the registry.
     */
    private static final io.helidon.metrics.api.MetricsConfig CONFIG = io.helidon.metrics.api.MetricsConfig.builder()
            .scoping(io.helidon.metrics.api.ScopingConfig.builder().clearTagName().build())
            .build();
    /**
     * Latency buckets (Prometheus {@code le}), 100 µs to 10 s: histograms aggregate across nodes,
     * which per-node quantiles do not.
     */
    static final java.time.Duration[] LATENCY_BUCKETS = java.util.stream.LongStream.of(
            100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
            5_000_000, 10_000_000).mapToObj(us -> java.time.Duration.of(us, java.time.temporal.ChronoUnit.MICROS))
            .toArray(java.time.Duration[]::new);

    private final MeterRegistry registry = globalRegistry();

    /**
     * The process-wide registry with {@link #CONFIG}. Helidon's factory installs the tag settings of
     * the config it was made from (the defaults, with {@code scope}), so ours are installed after it.
     */
    private static synchronized MeterRegistry globalRegistry() {
        io.helidon.metrics.api.MetricsFactory factory = io.helidon.metrics.api.MetricsFactory.getInstance();
        io.helidon.metrics.api.SystemTagsManager.instance(CONFIG);
        return factory.globalRegistry(CONFIG);
    }

    /** The settings the global registry was made with: the observer must use the same, or it replaces that registry. */
    public static io.helidon.metrics.api.MetricsConfig metricsConfig() {
        return CONFIG;
    }
    private final Counter appends = registry.getOrCreate(Counter.builder("strand.appends").description("Entries appended"));
    private final Counter appendBytes = registry.getOrCreate(Counter.builder("strand.append.bytes").description("Entry data bytes appended"));
    private final Counter appendErrors = registry.getOrCreate(Counter.builder("strand.append.errors").description("Appends refused or failed"));
    private final Timer commitLatency = registry.getOrCreate(latency("strand.commit.sync").description("Group-commit write-ahead write latency (one O_DSYNC write per group)"));
    /**
     * Turns (requests: an append, a doc op, a txn) per group commit of a writer thread; in
     * {@code fsync} mode each group is one write-ahead write, so this says whether concurrent
     * requests share flushes. Buckets by powers of two up to the writers' 4,096-turn batch.
     */
    private final io.helidon.metrics.api.DistributionSummary groupSize = registry.getOrCreate(
            io.helidon.metrics.api.DistributionSummary.builder("strand.commit.group.size",
                            io.helidon.metrics.api.DistributionStatisticsConfig.builder()
                                    .buckets(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096).percentiles(new double[0]))
                    .description("Turns (appends, doc ops, txns) per group commit; one write-ahead write per group in fsync mode"));
    private final Timer appendLatency = registry.getOrCreate(latency("strand.append.latency").description("Append request to durable ack"));
    private final Counter framesSent = registry.getOrCreate(Counter.builder("strand.subscription.frames").description("Entry frames pushed to subscribers"));
    private final Counter docOps = registry.getOrCreate(Counter.builder("strand.doc.ops").description("Doc operations committed"));
    private final Counter docConflicts = registry.getOrCreate(Counter.builder("strand.doc.conflicts").description("Doc version and CAS conflicts"));
    private final Counter floorRejections = registry.getOrCreate(Counter.builder("strand.doc.bound.rejections").description("incr refused at a floor or ceiling"));

    public StrandMetrics() {
        registry.getOrCreate(Gauge.builder("strand.subscribers", SUBSCRIBERS, AtomicLong::doubleValue).description("Open subscriptions"));
        registry.getOrCreate(Gauge.builder("strand.replay.lag", LAGS, StrandMetrics::largestLag)
                .description("Largest entries-behind-head among live subscriptions, each as it last reported"));
        counter("strand.agent.failures", "Failed passes of the background jobs (agents) running now; health check 'agents' names them",
                AgentsHealth::failures);
    }

    /** A value that goes up and down (Prometheus {@code gauge}). */
    public void gauge(String name, String description, Supplier<Number> value) {
        CURRENT.put(name, value);
        registry.getOrCreate(Gauge.builder(name, CURRENT, c -> read(c, name).doubleValue()).description(description));
    }

    /** A gauge per shard: {@code name{shard="k"}}, read from {@code value} at each scrape (NaN when it has none). */
    public void shardGauge(String name, String description, int shard, Supplier<Number> value) {
        registry.getOrCreate(Gauge.builder(name, value, v -> {
            Number n = v.get();
            return n == null ? Double.NaN : n.doubleValue();
        }).description(description).tags(java.util.List.of(io.helidon.metrics.api.Tag.create("shard", String.valueOf(shard)))));
    }

    /**
     * A running total kept elsewhere (Prometheus {@code counter}, {@code _total}): rates and
     * {@code increase()} work on it, and a restart reads as a counter reset.
     */
    public void counter(String name, String description, Supplier<Number> total) {
        CURRENT.put(name, total);
        registry.getOrCreate(io.helidon.metrics.api.FunctionalCounter.builder(name, CURRENT, c -> read(c, name).longValue())
                .description(description));
    }

    /**
     * This process's CPU time (user + system of every thread) in microseconds, from the JDK's
     * {@code OperatingSystemMXBean} (on Linux {@code CLOCK_PROCESS_CPUTIME_ID}, nanosecond resolution,
     * where {@code /proc/<pid>/stat} counts 10 ms ticks); -1 where the JDK cannot tell.
     */
    public static long processCpuMicros() {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long nanos = os.getProcessCpuTime();
            return nanos < 0 ? -1 : nanos / 1_000;
        }
        return -1;
    }

    private static Number read(Map<String, Supplier<Number>> current, String name) {
        Supplier<Number> value = current.get(name);
        return value == null ? 0 : value.get();
    }

    private static Timer.Builder latency(String name) {
        return Timer.builder(name).buckets(LATENCY_BUCKETS).percentiles(new double[0]);
    }

    public void syncNanos(long nanos) {
        commitLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** One group commit of {@code turns} turns (writer thread). */
    public void groupSize(int turns) {
        groupSize.record(turns);
    }

    /** Counts an append and its latency when it completes. */
    /** An append refused before it reached a log (bad JSON, a limit, its scope): counted with the failed ones. */
    public void appendRefused() {
        appendErrors.increment();
    }

    public CompletableFuture<AppendResult> timeAppend(AppendRequest req, CompletableFuture<AppendResult> ack) {
        long start = System.nanoTime();
        return ack.whenComplete((r, t) -> {
            if (t != null) {
                appendErrors.increment();
                return;
            }
            appendLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            if (!r.duplicate()) {
                appended(req);
            }
        });
    }

    /** Entries of {@code req} applied: counted in {@code strand.appends} and their data bytes. */
    public void appended(AppendRequest req) {
        appends.increment(req.data().size());
        long bytes = 0;
        for (byte[] d : req.data()) {
            bytes += d.length;
        }
        appendBytes.increment(bytes);
    }

    public void subscriberOpened() {
        SUBSCRIBERS.incrementAndGet();
    }

    public void subscriberClosed() {
        SUBSCRIBERS.decrementAndGet();
    }

    /** A live subscription's share of {@code strand.replay.lag}; close it when the subscription ends. */
    public ReplayLag replayLag() {
        ReplayLag lag = new ReplayLag();
        LAGS.add(lag);
        return lag;
    }

    private static double largestLag(Set<ReplayLag> lags) {
        long max = 0;
        for (ReplayLag lag : lags) {
            max = Math.max(max, lag.behind);
        }
        return max;
    }

    /** One subscription's entries behind the head: written by its loop, read by the gauge. */
    public static final class ReplayLag implements AutoCloseable {
        private volatile long behind;

        private ReplayLag() {
        }

        public void set(long entriesBehind) {
            behind = Math.max(0, entriesBehind);
        }

        @Override
        public void close() {
            LAGS.remove(this);
        }
    }

    public void frameSent() {
        framesSent.increment();
    }

    public void docOp() {
        docOps.increment();
    }

    /**
     * A refused doc change: a {@code version_conflict} or {@code cas_conflict} counts as a conflict,
     * a floor or ceiling refusal as a bound rejection, anything else in neither.
     */
    public void docRefused(ErrorCode code) {
        switch (code) {
            case VERSION_CONFLICT, CAS_CONFLICT -> docConflicts.increment();
            case FLOOR_VIOLATION, CEILING_VIOLATION -> floorRejections.increment();
            default -> { }
        }
    }
}

package io.strand.app;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Timer;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
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
    /** Every live subscription's lag as it last reported it. */
    private static final Set<ReplayLag> LAGS = ConcurrentHashMap.newKeySet();
    private final MeterRegistry registry = Metrics.globalRegistry();
    private final Counter appends = registry.getOrCreate(Counter.builder("strand.appends").description("Entries appended"));
    private final Counter appendBytes = registry.getOrCreate(Counter.builder("strand.append.bytes").description("Entry data bytes appended"));
    private final Counter appendErrors = registry.getOrCreate(Counter.builder("strand.append.errors").description("Appends refused or failed"));
    private final Timer commitLatency = registry.getOrCreate(Timer.builder("strand.commit.sync").description("Group-commit write-ahead write latency (one O_DSYNC write per group)"));
    private final Timer appendLatency = registry.getOrCreate(Timer.builder("strand.append.latency").description("Append request to durable ack"));
    private final Counter framesSent = registry.getOrCreate(Counter.builder("strand.subscription.frames").description("Entry frames pushed to subscribers"));
    private final Counter docOps = registry.getOrCreate(Counter.builder("strand.doc.ops").description("Doc operations committed"));
    private final Counter docConflicts = registry.getOrCreate(Counter.builder("strand.doc.conflicts").description("Doc version and CAS conflicts"));
    private final Counter floorRejections = registry.getOrCreate(Counter.builder("strand.doc.bound.rejections").description("incr refused at a floor or ceiling"));

    public StrandMetrics() {
        registry.getOrCreate(Gauge.builder("strand.subscribers", SUBSCRIBERS, AtomicLong::doubleValue).description("Open subscriptions"));
        registry.getOrCreate(Gauge.builder("strand.replay.lag", LAGS, StrandMetrics::largestLag)
                .description("Largest entries-behind-head among live subscriptions, each as it last reported"));
    }

    public void gauge(String name, String description, Supplier<Number> value) {
        registry.getOrCreate(Gauge.builder(name, value, v -> v.get().doubleValue()).description(description));
    }

    public void syncNanos(long nanos) {
        commitLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Counts an append and its latency when it completes. */
    public CompletableFuture<AppendResult> timeAppend(AppendRequest req, CompletableFuture<AppendResult> ack) {
        long start = System.nanoTime();
        return ack.whenComplete((r, t) -> {
            if (t != null) {
                appendErrors.increment();
                return;
            }
            appendLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            if (!r.duplicate()) {
                appends.increment(req.data().size());
                long bytes = 0;
                for (byte[] d : req.data()) {
                    bytes += d.length;
                }
                appendBytes.increment(bytes);
            }
        });
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

    public void docConflict() {
        docConflicts.increment();
    }

    public void boundRejection() {
        floorRejections.increment();
    }
}

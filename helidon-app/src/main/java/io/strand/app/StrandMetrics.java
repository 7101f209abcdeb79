package io.strand.app;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Timer;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/** Strand's meters in Helidon's registry, served by the observe endpoint as Prometheus text. */
public final class StrandMetrics {
    private final MeterRegistry registry = Metrics.globalRegistry();
    private final Counter appends = registry.getOrCreate(Counter.builder("strand.appends").description("Entries appended"));
    private final Counter appendBytes = registry.getOrCreate(Counter.builder("strand.append.bytes").description("Entry data bytes appended"));
    private final Counter appendErrors = registry.getOrCreate(Counter.builder("strand.append.errors").description("Appends refused or failed"));
    private final Timer commitLatency = registry.getOrCreate(Timer.builder("strand.commit.sync").description("Group-commit write-ahead write latency (one O_DSYNC write per group)"));
    private final Timer appendLatency = registry.getOrCreate(Timer.builder("strand.append.latency").description("Append request to durable ack"));
    private final AtomicLong subscribers = new AtomicLong();
    private final AtomicLong replayLag = new AtomicLong();
    private final Counter framesSent = registry.getOrCreate(Counter.builder("strand.subscription.frames").description("Entry frames pushed to subscribers"));
    private final Counter docOps = registry.getOrCreate(Counter.builder("strand.doc.ops").description("Doc operations committed"));
    private final Counter docConflicts = registry.getOrCreate(Counter.builder("strand.doc.conflicts").description("Doc version and CAS conflicts"));
    private final Counter floorRejections = registry.getOrCreate(Counter.builder("strand.doc.bound.rejections").description("incr refused at a floor or ceiling"));

    public StrandMetrics() {
        registry.getOrCreate(Gauge.builder("strand.subscribers", subscribers, AtomicLong::doubleValue).description("Open subscriptions"));
        registry.getOrCreate(Gauge.builder("strand.replay.lag", replayLag, AtomicLong::doubleValue).description("Largest entries-behind-head among subscriptions, last reported"));
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
        subscribers.incrementAndGet();
    }

    public void subscriberClosed() {
        subscribers.decrementAndGet();
    }

    public void replayLag(long behind) {
        replayLag.set(behind);
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

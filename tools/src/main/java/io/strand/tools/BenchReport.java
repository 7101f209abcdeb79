package io.strand.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * One scenario's result: latency percentiles (from an HdrHistogram in ns), throughput, durability
 * mode, requests in flight, and the warm-up that ran before it. Filled by one thread.
 */
final class BenchReport {
    /** The largest latency a histogram holds (2 minutes); longer ones are recorded as this. */
    static final long HIGHEST_NANOS = 120_000_000_000L;
    final String scenario;
    final String durability;
    final Histogram latency;
    long count;
    double seconds;
    String unit = "ops";
    /** Requests outstanding at once over all connections; 0 when the scenario is not request/reply. */
    int inFlight;
    double warmupSeconds;
    /** Operations of the warm-up: requests, or whole replays, rolls and compactions where those are the operation. */
    long warmupOps;
    final ObjectNode extra = Json.MAPPER.createObjectNode();

    BenchReport(String scenario, String durability) {
        this.scenario = scenario;
        this.durability = durability;
        this.latency = new Histogram(HIGHEST_NANOS, 3);
    }

    void record(long nanos) {
        latency.recordValue(Math.max(1, Math.min(nanos, latency.getHighestTrackableValue())));
    }

    /** Takes a closed loop's latencies and wall time, and {@code units} (operations, entries, …) as its count. */
    void add(ClosedLoop.Result result, long units) {
        latency.add(result.latency());
        seconds += result.seconds();
        count += units;
    }

    /** Notes the warm-up that ran first: how long, and how many operations. */
    void warmup(Warmup.Done done) {
        warmupSeconds += done.seconds();
        warmupOps += done.operations();
    }

    double throughput() {
        return seconds > 0 ? count / seconds : 0;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    ObjectNode json() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("scenario", scenario);
        o.put("durability", durability);
        o.put("n", count);
        o.put("unit", unit);
        o.put("seconds", seconds);
        o.put("throughputPerSec", Math.round(throughput()));
        if (inFlight > 0) {
            o.put("inFlight", inFlight);
        }
        o.put("warmupSeconds", Math.round(warmupSeconds * 10) / 10.0);
        o.put("warmupOps", warmupOps);
        if (latency.getTotalCount() > 0) {
            o.put("latencySamples", latency.getTotalCount());
            o.put("p50Ms", ms(latency.getValueAtPercentile(50)));
            o.put("p90Ms", ms(latency.getValueAtPercentile(90)));
            o.put("p95Ms", ms(latency.getValueAtPercentile(95)));
            o.put("p99Ms", ms(latency.getValueAtPercentile(99)));
            o.put("p999Ms", ms(latency.getValueAtPercentile(99.9)));
            o.put("maxMs", ms(latency.getMaxValue()));
        }
        o.setAll(extra);
        return o;
    }

    String line() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-22s %-6s n=%-9d %,12.0f %s/s", scenario,
                durability, count, throughput(), unit));
        if (latency.getTotalCount() > 0) {
            sb.append(String.format(Locale.ROOT, "  p50=%.3fms p95=%.3fms p99=%.3fms max=%.3fms",
                    ms(latency.getValueAtPercentile(50)), ms(latency.getValueAtPercentile(95)),
                    ms(latency.getValueAtPercentile(99)), ms(latency.getMaxValue())));
        }
        if (inFlight > 0) {
            sb.append("  inFlight=").append(inFlight);
        }
        sb.append(String.format(Locale.ROOT, "  warmup=%.1fs/%d ops", warmupSeconds, warmupOps));
        extra.properties().forEach(e -> sb.append("  ").append(e.getKey()).append('=').append(e.getValue()));
        return sb.toString();
    }
}

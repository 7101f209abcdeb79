package io.strand.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * One scenario's result: latency percentiles (from an HdrHistogram in ns), throughput, the CPU the
 * server and the client spent per counted unit in the timed window ({@link CpuMeter}), durability
 * mode, requests in flight, the disk probe taken just before the scenario, and the warm-up that
 * ran before it. Filled by one thread.
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
    /** CPU of the timed window; null when the scenario did not measure it. */
    CpuMeter.Used cpu;
    /** The disk probe taken just before this scenario; null when none was. */
    DiskProbe.Result disk;
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

    /** Ends the timed window that {@code start} opened on {@code meter}: its CPU is this row's. */
    void cpu(CpuMeter meter, CpuMeter.Sample start) {
        cpu = meter.since(start);
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
        putCpu(o);
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
        if (disk != null) {
            o.put("diskP50Ms", disk.p50Ms());
            o.put("diskP99Ms", disk.p99Ms());
        }
        o.setAll(extra);
        return o;
    }

    /**
     * {@code serverCpuUsPerOp} and {@code clientCpuUsPerOp} (per counted unit: operation, entry,
     * attempt…, as {@code unit} says), the CPU ms behind them and the cores each side kept busy over
     * the window; or {@code cpuNote} saying why a side is missing.
     */
    private void putCpu(ObjectNode o) {
        if (cpu == null) {
            return;
        }
        if (cpu.serverKnown()) {
            if (count > 0) {
                o.put("serverCpuUsPerOp", CpuMeter.rounded(cpu.serverMicrosPer(count)));
            }
            o.put("serverCpuMs", cpu.serverNanos() / 1_000_000);
            o.put("serverCores", Math.round(cpu.serverCores() * 100) / 100.0);
            if (!Double.isNaN(cpu.serverJitShare())) {
                o.put("serverJitShare", Math.round(cpu.serverJitShare() * 1000) / 1000.0);
            }
        }
        if (cpu.clientKnown()) {
            if (count > 0) {
                o.put("clientCpuUsPerOp", CpuMeter.rounded(cpu.clientMicrosPer(count)));
            }
            o.put("clientCpuMs", cpu.clientNanos() / 1_000_000);
            o.put("clientCores", Math.round(cpu.clientCores() * 100) / 100.0);
        }
        if (cpu.note() != null) {
            o.put("cpuNote", cpu.note());
        }
    }

    /**
     * "cpu/entry server=9.70µs (JIT 4%) client=3.10µs (cores 1.52+0.49)", or the note when a side is
     * unknown; the JIT share is the part of the server's CPU its compiler threads used, when it was read.
     */
    String cpuText() {
        if (cpu == null) {
            return "";
        }
        StringBuilder sb = new StringBuilder("cpu/").append(singular(unit));
        sb.append(" server=").append(cpu.serverKnown() ? CpuMeter.micros(cpu.serverMicrosPer(count)) + "µs" : "?");
        if (cpu.serverKnown() && !Double.isNaN(cpu.serverJitShare())) {
            sb.append(" (JIT ").append(CpuMeter.percent(cpu.serverJitShare())).append("%)");
        }
        sb.append(" client=").append(cpu.clientKnown() ? CpuMeter.micros(cpu.clientMicrosPer(count)) + "µs" : "?");
        if (cpu.serverKnown() && cpu.clientKnown()) {
            sb.append(String.format(Locale.ROOT, " (cores %.2f+%.2f)", cpu.serverCores(), cpu.clientCores()));
        }
        if (cpu.note() != null) {
            sb.append(" (").append(cpu.note()).append(')');
        }
        return sb.toString();
    }

    /** ops → op, entries → entry, commits → commit. */
    static String singular(String unit) {
        if (unit.endsWith("ies")) {
            return unit.substring(0, unit.length() - 3) + "y";
        }
        return unit.endsWith("s") ? unit.substring(0, unit.length() - 1) : unit;
    }

    String line() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-22s %-6s n=%-9d %,12.0f %s/s", scenario,
                durability, count, throughput(), unit));
        if (cpu != null) {
            sb.append("  ").append(cpuText());
        }
        if (latency.getTotalCount() > 0) {
            sb.append(String.format(Locale.ROOT, "  p50=%.3fms p95=%.3fms p99=%.3fms max=%.3fms",
                    ms(latency.getValueAtPercentile(50)), ms(latency.getValueAtPercentile(95)),
                    ms(latency.getValueAtPercentile(99)), ms(latency.getMaxValue())));
        }
        if (inFlight > 0) {
            sb.append("  inFlight=").append(inFlight);
        }
        if (disk != null) {
            sb.append(String.format(Locale.ROOT, "  disk p50=%.3fms", disk.p50Ms()));
        }
        sb.append(String.format(Locale.ROOT, "  warmup=%.1fs/%d ops", warmupSeconds, warmupOps));
        extra.properties().forEach(e -> sb.append("  ").append(e.getKey()).append('=').append(e.getValue()));
        return sb.toString();
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Locale;

/**
 * One {@code strand bench} run (the JSON document it stores) as a Markdown table for the README and
 * the issues: a line naming the date, the durability mode, the machine, the warm-up, the disk probe
 * and the command, then one row per scenario with its throughput beside the server's and the
 * client's CPU per counted unit, its latency percentiles and the disk probe taken just before it.
 * A run with {@code --cluster} adds the comparison (each scenario's single-node and cluster
 * throughput and server CPU per unit, with the ratios, the goal and the failover figure) and the
 * cluster's rows in full. Stateless: a pure function of the document.
 */
final class BenchMarkdown {
    private BenchMarkdown() {
    }

    static String render(JsonNode run) {
        JsonNode m = run.path("machine");
        JsonNode disk = run.path("diskProbe");
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "%s, durability %s%s, %s cores (%s), warm-up %s s per scenario; disk probe at"
                        + " start: one %s-byte DSYNC write p50 %.3f ms, p99 %.3f ms; `%s`%n%n",
                run.path("startedAt").asText("?"), run.path("durability").asText("?"),
                run.path("quick").asBoolean() ? " (--quick sizes: a smoke run, not for reporting)" : "",
                m.path("cores").asText(run.path("cores").asText("?")), m.path("cpu").asText("CPU model unknown"),
                run.path("warmupSeconds").asText("?"), disk.path("writeBytes").asText("?"), disk.path("p50Ms").asDouble(),
                disk.path("p99Ms").asDouble(), run.path("command").asText("strand bench")));
        rows(md, run.path("results"));
        JsonNode cluster = run.path("cluster");
        if (cluster.isObject()) {
            md.append('\n').append("**").append(ClusterComparison.header(cluster)).append("**\n\n");
            md.append("| scenario | single node | cluster | ratio | server CPU µs/unit single | cluster | ratio | JIT % single | cluster"
                    + " | p99 ms single | cluster |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (JsonNode r : cluster.path("comparison")) {
                String unit = r.path("unit").asText("ops");
                md.append("| ").append(r.path("scenario").asText())
                        .append(r.has("inFlight") ? " (" + r.path("inFlight").asInt() + " in flight)" : "")
                        .append(" | ").append(ClusterComparison.rate(r, "singleThroughputPerSec", unit))
                        .append(" | ").append(ClusterComparison.rate(r, "clusterThroughputPerSec", unit))
                        .append(" | ").append(ClusterComparison.times(r, "throughputRatio"))
                        .append(" | ").append(ClusterComparison.micros(r, "singleServerCpuUsPerOp"))
                        .append(" | ").append(ClusterComparison.micros(r, "clusterServerCpuUsPerOp"))
                        .append(" | ").append(ClusterComparison.times(r, "serverCpuRatio"))
                        .append(" | ").append(ClusterComparison.percent(r, "singleServerJitShare"))
                        .append(" | ").append(ClusterComparison.percent(r, "clusterServerJitShare"))
                        .append(" | ").append(ClusterComparison.millis(r, "singleP99Ms"))
                        .append(" | ").append(ClusterComparison.millis(r, "clusterP99Ms")).append(" |\n");
            }
            String goal = ClusterComparison.goalLine(cluster.path("goal"));
            String failover = ClusterComparison.failoverLine(cluster.path("failover"));
            if (!goal.isEmpty() || !failover.isEmpty()) {
                md.append('\n');
                for (String line : List.of(goal, failover)) {
                    if (!line.isEmpty()) {
                        md.append("- ").append(line).append('\n');
                    }
                }
            }
            md.append("\nThe cluster's rows in full (server CPU summed over its ").append(cluster.path("nodes").asInt())
                    .append(" nodes):\n\n");
            rows(md, cluster.path("results"));
        }
        return md.toString();
    }

    /** The table of one pass's rows. */
    private static void rows(StringBuilder md, JsonNode results) {
        md.append("| scenario | throughput | server CPU µs/unit (cores) | client CPU µs/unit (cores) | p50 ms | p99 ms"
                + " | disk p50 ms |\n|---|---|---|---|---|---|---|\n");
        for (JsonNode r : results) {
            md.append("| ").append(r.path("scenario").asText());
            if (r.has("inFlight")) {
                md.append(" (").append(r.path("inFlight").asInt()).append(" in flight)");
            }
            md.append(String.format(Locale.ROOT, " | %,d %s/s", r.path("throughputPerSec").asLong(), r.path("unit").asText("ops")));
            md.append(" | ").append(cpu(r, "server")).append(" | ").append(cpu(r, "client"));
            md.append(" | ").append(r.has("p50Ms") ? String.format(Locale.ROOT, "%.3f", r.path("p50Ms").asDouble()) : "");
            md.append(" | ").append(r.has("p99Ms") ? String.format(Locale.ROOT, "%.3f", r.path("p99Ms").asDouble()) : "");
            md.append(" | ").append(r.has("diskP50Ms") ? String.format(Locale.ROOT, "%.3f", r.path("diskP50Ms").asDouble()) : "");
            md.append(" |\n");
        }
    }

    /**
     * "45.7 (1.41)" from {@code serverCpuUsPerOp} and {@code serverCores}, "45.7 (1.41, JIT 12 %)" when
     * the server's JIT share was read; the row's note when there are none.
     */
    private static String cpu(JsonNode r, String side) {
        if (r.has(side + "CpuUsPerOp")) {
            String jit = r.has(side + "JitShare") ? ", JIT " + CpuMeter.percent(r.path(side + "JitShare").asDouble()) + " %" : "";
            return CpuMeter.micros(r.path(side + "CpuUsPerOp").asDouble())
                    + String.format(Locale.ROOT, " (%.2f%s)", r.path(side + "Cores").asDouble(), jit);
        }
        return r.has("cpuNote") ? "n/a: " + r.path("cpuNote").asText() : "";
    }
}

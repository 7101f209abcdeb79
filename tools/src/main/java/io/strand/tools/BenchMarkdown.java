package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;

/**
 * One {@code strand bench} run (the JSON document it stores) as a Markdown table for the README and
 * the issues: a line naming the date, the durability mode, the machine, the warm-up, the disk probe
 * and the command, then one row per scenario with its throughput beside the server's and the
 * client's CPU per counted unit, its latency percentiles and the disk probe taken just before it.
 * Stateless: a pure function of the document.
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
        md.append("| scenario | throughput | server CPU µs/unit (cores) | client CPU µs/unit (cores) | p50 ms | p99 ms"
                + " | disk p50 ms |\n|---|---|---|---|---|---|---|\n");
        for (JsonNode r : run.path("results")) {
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
        return md.toString();
    }

    /** "45.7 (1.41)" from {@code serverCpuUsPerOp} and {@code serverCores}; the row's note when there are none. */
    private static String cpu(JsonNode r, String side) {
        if (r.has(side + "CpuUsPerOp")) {
            return CpuMeter.micros(r.path(side + "CpuUsPerOp").asDouble())
                    + String.format(Locale.ROOT, " (%.2f)", r.path(side + "Cores").asDouble());
        }
        return r.has("cpuNote") ? "n/a: " + r.path("cpuNote").asText() : "";
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The cluster section of the {@code --report} page of a {@code strand bench --cluster N} run: the
 * setting (nodes, shards, where the clients connected, what the CPU figures sum), each scenario's
 * single-node and cluster throughput as a pair of bars on one log axis with the ratio, a table of both
 * columns (throughput, server CPU per unit, p99) with the ratios, the goal and the failover figure, and
 * the cluster's rows in full. Stateless: pure functions of the run's {@code cluster} object.
 */
final class BenchHtmlCluster {
    private BenchHtmlCluster() {
    }

    static void section(StringBuilder h, JsonNode cluster) {
        h.append("<section><h2>Cluster vs single node <small>the same scenarios in the same run</small></h2>\n<p class=\"note\">")
                .append(BenchHtmlReport.esc(ClusterComparison.header(cluster))).append("</p>\n");
        verdicts(h, cluster);
        List<JsonNode> rows = new ArrayList<>();
        cluster.path("comparison").forEach(rows::add);
        pairedBars(h, rows);
        comparisonTable(h, rows);
        h.append("</section>\n<section><h2>Cluster figures <small>server CPU summed over the ")
                .append(cluster.path("nodes").asInt()).append(" nodes</small></h2>\n");
        List<JsonNode> results = new ArrayList<>();
        cluster.path("results").forEach(results::add);
        BenchHtmlReport.table(h, results);
        h.append("</section>\n");
    }

    /** The goal and failover lines, green when met and red when not. */
    private static void verdicts(StringBuilder h, JsonNode cluster) {
        String goal = ClusterComparison.goalLine(cluster.path("goal"));
        if (!goal.isEmpty()) {
            h.append("<p class=\"verdict ").append(cluster.path("goal").path("met").asBoolean() ? "met" : "missed").append("\">")
                    .append(BenchHtmlReport.esc(goal)).append("</p>\n");
        }
        String failover = ClusterComparison.failoverLine(cluster.path("failover"));
        if (!failover.isEmpty()) {
            h.append("<p class=\"verdict ").append(cluster.path("failover").path("goalMet").asBoolean() ? "met" : "missed").append("\">")
                    .append(BenchHtmlReport.esc(failover)).append("</p>\n");
        }
    }

    private static void pairedBars(StringBuilder h, List<JsonNode> rows) {
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (JsonNode r : rows) {
            for (String f : List.of("singleThroughputPerSec", "clusterThroughputPerSec")) {
                double v = r.path(f).asDouble();
                if (v > 0) {
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
            }
        }
        if (hi == 0) {
            h.append("<p>No throughput figures.</p>\n");
            return;
        }
        h.append("<div class=\"legend\"><span><i style=\"background:#3b82f6\"></i>single node</span>"
                + "<span><i style=\"background:#f97316\"></i>cluster</span><span class=\"note\">per second, log scale</span></div>\n");
        BenchHtmlReport.LogAxis axis = BenchHtmlReport.LogAxis.spanning(lo, hi);
        int row = BenchHtmlReport.ROW;
        int height = BenchHtmlReport.TOP + row * rows.size() + 8;
        BenchHtmlReport.svgOpen(h, height);
        axis.grid(h, height, BenchHtmlReport::count);
        int y = BenchHtmlReport.TOP;
        int label = BenchHtmlReport.LABEL;
        for (JsonNode r : rows) {
            h.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" class=\"label\">%s</text>", label - 12, y + row / 2 + 5,
                    BenchHtmlReport.esc(r.path("scenario").asText())));
            bar(h, axis, r.path("singleThroughputPerSec").asDouble(), y + 4, "bar", "single node");
            bar(h, axis, r.path("clusterThroughputPerSec").asDouble(), y + row / 2, "bar cluster", "cluster");
            h.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" class=\"value\">%s</text>", label + BenchHtmlReport.PLOT + 14,
                    y + row / 2 + 5, BenchHtmlReport.esc(ClusterComparison.rate(r, "clusterThroughputPerSec", r.path("unit").asText("ops"))
                            + " · ×" + ClusterComparison.times(r, "throughputRatio"))));
            y += row;
        }
        h.append("</svg>\n");
    }

    private static void bar(StringBuilder h, BenchHtmlReport.LogAxis axis, double v, int y, String cls, String what) {
        if (v > 0) {
            h.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" rx=\"2\" class=\"%s\"><title>%s %s/s</title></rect>",
                    BenchHtmlReport.LABEL, y, Math.max(2, axis.x(v) - BenchHtmlReport.LABEL), BenchHtmlReport.ROW / 2 - 5, cls, what,
                    BenchHtmlReport.grouped(v)));
        }
    }

    private static void comparisonTable(StringBuilder h, List<JsonNode> rows) {
        h.append("<table><thead><tr><th>scenario</th><th>single node</th><th>cluster</th><th>×</th>"
                + "<th title=\"server CPU microseconds per counted unit; the cluster's summed over its nodes\">server CPU µs/unit<br>"
                + "single · cluster</th><th>×</th><th>p99 ms<br>single · cluster</th></tr></thead><tbody>\n");
        for (JsonNode r : rows) {
            String unit = r.path("unit").asText("ops");
            h.append("<tr><td>").append(BenchHtmlReport.esc(r.path("scenario").asText()))
                    .append(r.has("inFlight") ? "<br><small>" + r.path("inFlight").asInt() + " in flight</small>" : "").append("</td>")
                    .append(cell(ClusterComparison.rate(r, "singleThroughputPerSec", unit)))
                    .append(cell(ClusterComparison.rate(r, "clusterThroughputPerSec", unit)))
                    .append(cell(ClusterComparison.times(r, "throughputRatio")))
                    .append(cell(ClusterComparison.micros(r, "singleServerCpuUsPerOp") + " · "
                            + ClusterComparison.micros(r, "clusterServerCpuUsPerOp")))
                    .append(cell(ClusterComparison.times(r, "serverCpuRatio")))
                    .append(cell(ClusterComparison.millis(r, "singleP99Ms") + " · " + ClusterComparison.millis(r, "clusterP99Ms")))
                    .append("</tr>\n");
        }
        h.append("</tbody></table>\n");
    }

    private static String cell(String text) {
        return "<td class=\"num\">" + BenchHtmlReport.esc(text) + "</td>";
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes one {@code strand bench} run (the JSON document it stores) as a self-contained HTML page
 * for {@code --report}: the machine, the durability mode and the disk probe, then each scenario's
 * throughput (with the server's CPU per unit beside it) and latency percentiles as SVG charts on
 * log axes, and a table of every figure: the server's and the client's CPU per unit and the disk
 * probe taken before each scenario among them; a {@code --cluster} run adds its comparison with the
 * single-node figures ({@link BenchHtmlCluster}). All
 * CSS and SVG is inline and nothing is fetched, so the page opens offline and two runs' pages can
 * be compared side by side. Stateless: every method is a pure function of its arguments.
 */
final class BenchHtmlReport {
    /** The latency percentiles drawn, as JSON field and label; colours in {@link #COLORS}. */
    private static final List<Map.Entry<String, String>> PERCENTILES = List.of(Map.entry("p50Ms", "p50"),
            Map.entry("p90Ms", "p90"), Map.entry("p99Ms", "p99"), Map.entry("p999Ms", "p99.9"), Map.entry("maxMs", "max"));
    static final String[] COLORS = {"#2563eb", "#0d9488", "#d97706", "#dc2626", "#6b7280"};
    static final int WIDTH = 980;
    static final int LABEL = 190;
    static final int PLOT = 520;
    static final int ROW = 30;
    static final int TOP = 34;

    private BenchHtmlReport() {
    }

    static void write(JsonNode run, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, render(run), StandardCharsets.UTF_8);
    }

    static String render(JsonNode run) {
        List<JsonNode> results = new ArrayList<>();
        run.path("results").forEach(results::add);
        String durability = run.path("durability").asText("?");
        StringBuilder h = new StringBuilder(16_384);
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>strand bench · ")
                .append(esc(durability)).append(" · ").append(esc(run.path("startedAt").asText(""))).append("</title>\n");
        h.append("<style>\n").append(CSS).append("</style></head><body>\n");
        h.append("<header><h1>strand bench</h1><span class=\"badge ").append(durability.equals("fsync") ? "fsync" : "os")
                .append("\">durability: ").append(esc(durability)).append("</span>");
        if (run.path("quick").asBoolean()) {
            h.append("<span class=\"badge quick\">--quick sizes: a smoke run, not for reporting</span>");
        }
        h.append("<span class=\"when\">").append(esc(run.path("startedAt").asText(""))).append("</span></header>\n");

        h.append("<section class=\"cards\">");
        JsonNode m = run.path("machine");
        card(h, "Machine", new String[][] {
                {"cores", text(m.path("cores"), run.path("cores").asText("?"))},
                {"memory", m.has("memoryBytes") ? gib(m.path("memoryBytes").asLong()) : "?"},
                {"cpu", text(m.path("cpu"), "?")},
                {"kernel", text(m.path("kernel"), "?")},
                {"jdk", text(m.path("jdk"), "?")}});
        JsonNode d = run.path("diskProbe");
        card(h, "Disk probe at start", new String[][] {
                {"what", d.path("writes").asText("?") + " DSYNC writes of " + d.path("writeBytes").asText("?") + " B"},
                {"p50", ms(d.path("p50Ms"))},
                {"p99", ms(d.path("p99Ms"))},
                {"max", ms(d.path("maxMs"))},
                {"dir", text(d.path("dir"), "?")}});
        card(h, "Run", new String[][] {
                {"durability", durability},
                {"scenarios", Integer.toString(results.size())},
                {"warm-up", run.path("warmupSeconds").asText("?") + " s per scenario"},
                {"server", run.path("cluster").isObject() ? "child JVM, loopback; then a " + run.path("cluster").path("nodes").asInt()
                        + "-node cluster, each node a child JVM" : "child JVM, loopback"},
                {"client", "closed loop, HdrHistogram"},
                {"cpu", text(run.path("cpuClock"), "not measured")}});
        h.append("</section>\n");

        h.append("<section><h2>Throughput <small>per second, log scale</small></h2>\n");
        h.append("<p class=\"note\">CPU: the server's CPU microseconds per unit (op, entry, attempt…) in the timed window.</p>\n");
        throughputChart(h, results);
        h.append("</section>\n<section><h2>Latency <small>ms, log scale</small></h2>\n");
        latencyChart(h, results);
        h.append("</section>\n<section><h2>Figures</h2>\n");
        table(h, results);
        h.append("</section>\n");
        if (run.path("cluster").isObject()) {
            BenchHtmlCluster.section(h, run.path("cluster"));
        }
        h.append("<details><summary>Raw JSON</summary><pre>")
                .append(esc(run.toPrettyString()))
                .append("</pre></details>\n</body></html>\n");
        return h.toString();
    }

    private static void card(StringBuilder h, String title, String[][] rows) {
        h.append("<div class=\"card\"><h3>").append(esc(title)).append("</h3><dl>");
        for (String[] r : rows) {
            h.append("<dt>").append(esc(r[0])).append("</dt><dd>").append(esc(r[1])).append("</dd>");
        }
        h.append("</dl></div>");
    }

    private static void throughputChart(StringBuilder h, List<JsonNode> results) {
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (JsonNode r : results) {
            double v = r.path("throughputPerSec").asDouble();
            if (v > 0) {
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
        }
        if (hi == 0) {
            h.append("<p>No throughput figures.</p>");
            return;
        }
        LogAxis axis = LogAxis.spanning(lo, hi);
        int height = TOP + ROW * results.size() + 8;
        svgOpen(h, height);
        axis.grid(h, height, BenchHtmlReport::count);
        int y = TOP;
        for (JsonNode r : results) {
            rowLabel(h, r, y);
            double v = r.path("throughputPerSec").asDouble();
            if (v > 0) {
                double w = Math.max(2, axis.x(v) - LABEL);
                h.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" rx=\"3\" class=\"bar\">"
                        + "<title>%s</title></rect>", LABEL, y + 6, w, ROW - 12, esc(r.path("scenario").asText())));
            }
            String cpu = r.has("serverCpuUsPerOp") ? " · CPU " + CpuMeter.micros(r.path("serverCpuUsPerOp").asDouble()) + " µs" : "";
            h.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" class=\"value\">%s %s/s%s</text>", LABEL + PLOT + 14,
                    y + ROW / 2 + 5, v > 0 ? grouped(v) : "—", esc(r.path("unit").asText("ops")), esc(cpu)));
            y += ROW;
        }
        h.append("</svg>\n");
    }

    private static void latencyChart(StringBuilder h, List<JsonNode> results) {
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (JsonNode r : results) {
            for (Map.Entry<String, String> p : PERCENTILES) {
                double v = r.path(p.getKey()).asDouble();
                if (v > 0) {
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
            }
        }
        h.append("<div class=\"legend\">");
        for (int i = 0; i < PERCENTILES.size(); i++) {
            h.append("<span><i style=\"background:").append(COLORS[i]).append("\"></i>").append(PERCENTILES.get(i).getValue())
                    .append("</span>");
        }
        h.append("<span class=\"note\">thick: p50 to p99 · thin: to max</span></div>\n");
        if (hi == 0) {
            h.append("<p>No latency figures.</p>");
            return;
        }
        LogAxis axis = LogAxis.spanning(lo, hi);
        int height = TOP + ROW * results.size() + 8;
        svgOpen(h, height);
        axis.grid(h, height, v -> v >= 1000 ? trim(v / 1000) + " s" : trim(v) + " ms");
        int y = TOP;
        for (JsonNode r : results) {
            rowLabel(h, r, y);
            int mid = y + ROW / 2;
            if (r.path("p50Ms").asDouble() > 0) {
                double p50 = axis.x(r.path("p50Ms").asDouble());
                double p99 = axis.x(r.path("p99Ms").asDouble());
                double max = axis.x(r.path("maxMs").asDouble());
                h.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"whisker\"/>", p99, mid, max, mid));
                h.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"10\" rx=\"3\" class=\"span\"/>",
                        p50, mid - 5, Math.max(1, p99 - p50)));
                for (int i = 0; i < PERCENTILES.size(); i++) {
                    double v = r.path(PERCENTILES.get(i).getKey()).asDouble();
                    if (v > 0) {
                        h.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%d\" r=\"5\" fill=\"%s\"><title>%s %s</title></circle>",
                                axis.x(v), mid, COLORS[i], PERCENTILES.get(i).getValue(), millis(v)));
                    }
                }
                h.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" class=\"value\">p50 %s · p99 %s</text>", LABEL + PLOT + 14,
                        mid + 5, millis(r.path("p50Ms").asDouble()), millis(r.path("p99Ms").asDouble())));
            } else {
                h.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" class=\"value\">not measured</text>", LABEL + PLOT + 14, mid + 5));
            }
            y += ROW;
        }
        h.append("</svg>\n");
    }

    static void table(StringBuilder h, List<JsonNode> results) {
        h.append("<table><thead><tr><th>scenario</th><th>n</th><th>throughput</th>"
                + "<th title=\"CPU microseconds per counted unit of the server and of this bench client, and the cores each kept busy\">"
                + "CPU µs/unit<br>server · client</th>");
        for (Map.Entry<String, String> p : PERCENTILES) {
            h.append("<th>").append(p.getValue()).append(" ms</th>");
        }
        h.append("<th title=\"the disk probe just before the scenario: one DSYNC write\">disk<br>p50 ms</th><th>warm-up</th><th>notes</th></tr></thead><tbody>\n");
        for (JsonNode r : results) {
            h.append("<tr><td>").append(esc(r.path("scenario").asText()))
                    .append(r.has("inFlight") ? "<br><small>" + r.path("inFlight").asInt() + " in flight</small>" : "")
                    .append("</td><td class=\"num\">")
                    .append(grouped(r.path("n").asDouble())).append("</td><td class=\"num\">")
                    .append(grouped(r.path("throughputPerSec").asDouble())).append(' ').append(esc(r.path("unit").asText("ops")))
                    .append("/s</td>").append(cpuCell(r));
            for (Map.Entry<String, String> p : PERCENTILES) {
                h.append("<td class=\"num\">").append(r.has(p.getKey()) ? number(r.path(p.getKey()).asDouble()) : "").append("</td>");
            }
            h.append("<td class=\"num\">").append(r.has("diskP50Ms") ? number(r.path("diskP50Ms").asDouble()) : "").append("</td>");
            h.append("<td class=\"num\">").append(esc(r.path("warmupSeconds").asText())).append(" s<br><small>")
                    .append(grouped(r.path("warmupOps").asDouble())).append(" ops</small></td><td class=\"notes\">");
            List<String> notes = new ArrayList<>();
            r.properties().forEach(e -> {
                if (!STANDARD_FIELDS.contains(e.getKey())) {
                    notes.add(e.getKey() + "=" + (e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString()));
                }
            });
            h.append(esc(String.join(" · ", notes))).append("</td></tr>\n");
        }
        h.append("</tbody></table>\n");
    }

    /**
     * "45.7 · 15.2" (server · client CPU per unit) over "1.41 + 0.47 cores" and, when read, the server's
     * JIT share; a side not measured is "?", and the row's note (e.g. an in-process server) is shown
     * when a side is missing.
     */
    private static String cpuCell(JsonNode r) {
        if (!r.has("serverCpuUsPerOp") && !r.has("clientCpuUsPerOp")) {
            return "<td class=\"notes\">" + (r.has("cpuNote") ? esc(r.path("cpuNote").asText()) : "") + "</td>";
        }
        StringBuilder c = new StringBuilder("<td class=\"num\">").append(side(r, "serverCpuUsPerOp")).append(" · ")
                .append(side(r, "clientCpuUsPerOp")).append("<br><small>").append(cores(r, "serverCores"))
                .append(" + ").append(cores(r, "clientCores")).append(" cores</small>");
        if (r.has("serverJitShare")) {
            c.append("<br><small>server JIT ").append(CpuMeter.percent(r.path("serverJitShare").asDouble())).append(" %</small>");
        }
        if (r.has("cpuNote")) {
            c.append("<br><small>").append(esc(r.path("cpuNote").asText())).append("</small>");
        }
        return c.append("</td>").toString();
    }

    private static String cores(JsonNode r, String field) {
        return r.has(field) ? String.format(Locale.ROOT, "%.2f", r.path(field).asDouble()) : "?";
    }

    private static String side(JsonNode r, String field) {
        return r.has(field) ? CpuMeter.micros(r.path(field).asDouble()) : "?";
    }

    private static final List<String> STANDARD_FIELDS = List.of("scenario", "durability", "n", "unit", "seconds", "throughputPerSec",
            "inFlight", "warmupSeconds", "warmupOps", "latencySamples", "p50Ms", "p90Ms", "p95Ms", "p99Ms", "p999Ms", "maxMs",
            "serverCpuUsPerOp", "clientCpuUsPerOp", "serverCores", "clientCores", "serverJitShare", "cpuNote", "diskP50Ms",
            "serverCpuMs", "clientCpuMs", "diskP99Ms"); // the last three only in the raw JSON

    static void svgOpen(StringBuilder h, int height) {
        h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height)
                .append("\" width=\"").append(WIDTH).append("\" height=\"").append(height).append("\">");
    }

    private static void rowLabel(StringBuilder h, JsonNode r, int y) {
        h.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" class=\"label\">%s</text>", LABEL - 12, y + ROW / 2 + 5,
                esc(r.path("scenario").asText())));
    }

    /** A base-10 log axis over whole decades from below {@code lo} to above {@code hi}, across the plot. */
    record LogAxis(double from, double to) {
        static LogAxis spanning(double lo, double hi) {
            double from = Math.floor(Math.log10(lo));
            return new LogAxis(from, Math.max(Math.ceil(Math.log10(hi)), from + 1));
        }

        double x(double v) {
            double at = (Math.log10(Math.max(v, Math.pow(10, from))) - from) / (to - from);
            return LABEL + Math.min(1, at) * PLOT;
        }

        void grid(StringBuilder h, int height, java.util.function.DoubleFunction<String> label) {
            for (int e = (int) from; e <= (int) to; e++) {
                double x = x(Math.pow(10, e));
                h.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>", x, TOP - 8, x,
                        height - 4));
                h.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%s</text>", x, TOP - 14,
                        label.apply(Math.pow(10, e))));
                if (e < (int) to) {
                    for (int k = 2; k <= 9; k++) {
                        double xm = x(k * Math.pow(10, e));
                        h.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"minor\"/>", xm,
                                TOP - 4, xm, height - 4));
                    }
                }
            }
        }
    }

    /** 1, 10, 100, 1k, 10k, 100k, 1M: an axis label for a count. */
    static String count(double v) {
        if (v >= 1e6) {
            return trim(v / 1e6) + "M";
        }
        if (v >= 1e3) {
            return trim(v / 1e3) + "k";
        }
        return trim(v);
    }

    /** 0.01 ms … 999 ms, then seconds. */
    static String millis(double ms) {
        if (ms >= 1000) {
            return trim(ms / 1000) + " s";
        }
        return number(ms) + " ms";
    }

    static String number(double v) {
        if (v >= 100) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (v >= 1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.3g", v).replaceAll("\\.?0+$", "");
    }

    static String grouped(double v) {
        return String.format(Locale.ROOT, "%,.0f", v);
    }

    private static String ms(JsonNode n) {
        return n.isNumber() ? number(n.asDouble()) + " ms" : "?";
    }

    private static String gib(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    }

    private static String text(JsonNode n, String otherwise) {
        return n.isMissingNode() || n.isNull() ? otherwise : n.asText();
    }

    static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    private static final String CSS = """
            :root { color-scheme: light; }
            body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1f2937;
                   background: #f8fafc; margin: 0 auto; padding: 24px 32px 48px; max-width: 1040px; }
            header { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 16px; }
            h1 { font-size: 24px; margin: 0 8px 0 0; }
            h2 { font-size: 17px; margin: 0 0 10px; } h2 small { font-weight: normal; color: #6b7280; font-size: 13px; }
            h3 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: #6b7280; margin: 0 0 8px; }
            .badge { border-radius: 999px; padding: 2px 10px; font-size: 13px; font-weight: 600; }
            .badge.fsync { background: #dbeafe; color: #1e40af; } .badge.os { background: #fef3c7; color: #92400e; }
            .badge.quick { background: #fee2e2; color: #991b1b; }
            .when { color: #6b7280; margin-left: auto; font-variant-numeric: tabular-nums; }
            section { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 16px 18px; margin: 0 0 16px; }
            section.cards { display: grid; grid-template-columns: repeat(3, 1fr); gap: 16px; background: none; border: 0; padding: 0; }
            .card { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 12px 14px; }
            dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0; }
            dt { color: #6b7280; } dd { margin: 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
            svg { display: block; max-width: 100%; height: auto; font-size: 12px; }
            svg .label { text-anchor: end; fill: #111827; font-size: 13px; }
            svg .value { fill: #374151; font-variant-numeric: tabular-nums; }
            svg .tick { text-anchor: middle; fill: #6b7280; }
            svg .grid { stroke: #d1d5db; } svg .minor { stroke: #f1f5f9; }
            svg .bar.cluster { fill: #f97316; } .verdict.met { color: #166534; } .verdict.missed { color: #991b1b; }
            svg .bar { fill: #3b82f6; } svg .span { fill: #c7d2fe; } svg .whisker { stroke: #9ca3af; stroke-width: 2; }
            .legend { display: flex; gap: 14px; margin: 0 0 6px; color: #374151; font-size: 13px; flex-wrap: wrap; }
            .legend i { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 5px; }
            .legend .note { color: #6b7280; }
            p.note { color: #6b7280; font-size: 13px; margin: 0 0 6px; }
            table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
            th, td { padding: 4px 4px; border-bottom: 1px solid #f1f5f9; text-align: left; vertical-align: top; }
            th { color: #6b7280; font-weight: 600; white-space: nowrap; }
            td:first-child { white-space: nowrap; }
            td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
            td.notes { color: #6b7280; font-size: 12px; }
            details { margin-top: 8px; } pre { font-size: 12px; background: #fff; border: 1px solid #e5e7eb; padding: 12px; overflow: auto; }
            """;
}

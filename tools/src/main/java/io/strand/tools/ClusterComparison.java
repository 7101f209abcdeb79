package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The two passes of one {@code strand bench --cluster N} run side by side: each cluster row beside
 * the single-node row of the same scenario, with the ratio cluster / single node of the throughput
 * and of the server CPU per unit (for the cluster, summed over its nodes' JVMs), the goal
 * (batched appends at ≥ 50 % of single-node throughput), and the text table printed at the end of the
 * run. Stateless: pure functions of the run's JSON.
 */
final class ClusterComparison {
    /** The scenario the goal is about, and the throughput ratio it asks for (issue 12). */
    static final String GOAL_SCENARIO = "append batched";
    static final double GOAL_RATIO = 0.5;

    private ClusterComparison() {
    }

    /**
     * One object per cluster row, in its order: scenario, unit, in flight, both throughputs and their
     * ratio, both server CPU per unit and their ratio, both JIT shares of it, both p50 and p99; a figure that either row
     * lacks (a scenario with no single-node row, a CPU not read) is left out, and so is its ratio.
     */
    static ArrayNode rows(JsonNode single, JsonNode cluster) {
        ArrayNode out = Json.MAPPER.createArrayNode();
        for (JsonNode c : cluster) {
            String scenario = c.path("scenario").asText();
            JsonNode s = null;
            for (JsonNode r : single) {
                if (scenario.equals(r.path("scenario").asText())) {
                    s = r;
                }
            }
            ObjectNode o = out.addObject().put("scenario", scenario).put("unit", c.path("unit").asText("ops"));
            if (c.has("inFlight")) {
                o.put("inFlight", c.path("inFlight").asInt());
            }
            pair(o, s, c, "throughputPerSec", "ThroughputPerSec", "throughputRatio");
            pair(o, s, c, "serverCpuUsPerOp", "ServerCpuUsPerOp", "serverCpuRatio");
            pair(o, s, c, "serverJitShare", "ServerJitShare", null);
            pair(o, s, c, "p50Ms", "P50Ms", null);
            pair(o, s, c, "p99Ms", "P99Ms", null);
        }
        return out;
    }

    /** {@code singleX} and {@code clusterX} from the rows' {@code field}, and their ratio as {@code ratioField} when both are > 0. */
    private static void pair(ObjectNode o, JsonNode single, JsonNode cluster, String field, String suffix, String ratioField) {
        boolean hasSingle = single != null && single.has(field);
        if (hasSingle) {
            o.set("single" + suffix, single.get(field));
        }
        if (cluster.has(field)) {
            o.set("cluster" + suffix, cluster.get(field));
        }
        if (ratioField != null && hasSingle && cluster.has(field)) {
            double ratio = ratio(cluster.get(field).asDouble(), single.get(field).asDouble());
            if (!Double.isNaN(ratio)) {
                o.put(ratioField, Math.round(ratio * 1000) / 1000.0);
            }
        }
    }

    /** {@code a / b}; NaN when either is not a positive figure. */
    static double ratio(double a, double b) {
        return a > 0 && b > 0 ? a / b : Double.NaN;
    }

    /** The goal's verdict from {@link #rows}: the batched row's throughput ratio against {@link #GOAL_RATIO}; null without that row. */
    static ObjectNode goal(JsonNode comparison) {
        for (JsonNode r : comparison) {
            if (GOAL_SCENARIO.equals(r.path("scenario").asText()) && r.has("throughputRatio")) {
                double ratio = r.path("throughputRatio").asDouble();
                return Json.MAPPER.createObjectNode().put("scenario", GOAL_SCENARIO).put("throughputRatio", ratio)
                        .put("target", GOAL_RATIO).put("met", ratio >= GOAL_RATIO);
            }
        }
        return null;
    }

    /**
     * The setting in one line: nodes, shards, where the clients' sockets went and what the cluster's
     * CPU column sums, from the run's {@code cluster} object.
     */
    static String header(JsonNode cluster) {
        String idle = cluster.has("idleServerCores") ? String.format(Locale.ROOT, "; idle, the servers keep %s cores busy (single node)"
                        + " and %.2f (cluster)", cluster.has("singleIdleServerCores")
                        ? String.format(Locale.ROOT, "%.2f", cluster.path("singleIdleServerCores").asDouble()) : "?",
                cluster.path("idleServerCores").asDouble()) : "";
        return String.format(Locale.ROOT, "cluster vs single node: %d nodes, %d shards x %d replicas; clients on %s; cluster CPU = %s%s",
                cluster.path("nodes").asInt(), cluster.path("shards").asInt(), cluster.path("replicas").asInt(),
                cluster.path("clients").asText("?"), cluster.path("cpuIs").asText("?"), idle);
    }

    /** The comparison as a text table (header line, columns, goal and failover lines), for the end of the run. */
    static String text(JsonNode cluster) {
        StringWriter sw = new StringWriter();
        PrintWriter out = new PrintWriter(sw);
        out.println(header(cluster));
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("SCENARIO", "SINGLE NODE", "CLUSTER", "RATIO", "CPU µs/UNIT SINGLE", "CLUSTER", "RATIO", "JIT % SINGLE",
                "CLUSTER", "P99 ms SINGLE", "CLUSTER"));
        for (JsonNode r : cluster.path("comparison")) {
            String unit = r.path("unit").asText("ops");
            rows.add(List.of(r.path("scenario").asText() + (r.has("inFlight") ? " (" + r.path("inFlight").asInt() + " in flight)" : ""),
                    rate(r, "singleThroughputPerSec", unit), rate(r, "clusterThroughputPerSec", unit), times(r, "throughputRatio"),
                    micros(r, "singleServerCpuUsPerOp"), micros(r, "clusterServerCpuUsPerOp"), times(r, "serverCpuRatio"),
                    percent(r, "singleServerJitShare"), percent(r, "clusterServerJitShare"),
                    millis(r, "singleP99Ms"), millis(r, "clusterP99Ms")));
        }
        Output.table(out, rows);
        String goal = goalLine(cluster.path("goal"));
        if (!goal.isEmpty()) {
            out.println(goal);
        }
        String failover = failoverLine(cluster.path("failover"));
        if (!failover.isEmpty()) {
            out.println(failover);
        }
        out.flush();
        return sw.toString();
    }

    /** "goal: append batched at 0.62 of single-node throughput (≥ 0.50): met"; empty without a goal. */
    static String goalLine(JsonNode goal) {
        if (!goal.has("throughputRatio")) {
            return "";
        }
        return String.format(Locale.ROOT, "goal: %s at %.2f of single-node throughput (target >= %.2f): %s", goal.path("scenario").asText(),
                goal.path("throughputRatio").asDouble(), goal.path("target").asDouble(), goal.path("met").asBoolean() ? "met" : "NOT met");
    }

    /** "failover (3 kills): kill -9 of the leader -> next ack p50 1,234 ms, max 2,345 ms (goal < 3,000 ms: met)"; empty without rounds. */
    static String failoverLine(JsonNode failover) {
        if (!failover.has("p50Ms")) {
            return failover.has("error") ? "failover: not measured: " + failover.path("error").asText() : "";
        }
        return String.format(Locale.ROOT, "failover (%d kill%s): kill -9 of the shard's leader -> next ack p50 %,.0f ms, max %,.0f ms"
                        + " (goal < %,.0f ms: %s)", failover.path("rounds").size(), failover.path("rounds").size() == 1 ? "" : "s",
                failover.path("p50Ms").asDouble(), failover.path("maxMs").asDouble(), failover.path("goalMs").asDouble(),
                failover.path("goalMet").asBoolean() ? "met" : "NOT met");
    }

    static String rate(JsonNode r, String field, String unit) {
        return r.has(field) ? String.format(Locale.ROOT, "%,d %s/s", r.path(field).asLong(), unit) : "—";
    }

    static String times(JsonNode r, String field) {
        return r.has(field) ? String.format(Locale.ROOT, "%.2f", r.path(field).asDouble()) : "—";
    }

    /** A 0..1 share as whole per cent ("12"); "—" when the row lacks it. */
    static String percent(JsonNode r, String field) {
        return r.has(field) ? CpuMeter.percent(r.path(field).asDouble()) : "—";
    }

    static String micros(JsonNode r, String field) {
        return r.has(field) ? CpuMeter.micros(r.path(field).asDouble()) : "—";
    }

    static String millis(JsonNode r, String field) {
        return r.has(field) ? String.format(Locale.ROOT, "%.3f", r.path(field).asDouble()) : "—";
    }
}

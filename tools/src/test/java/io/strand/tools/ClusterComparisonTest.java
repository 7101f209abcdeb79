package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code strand bench --cluster}: the single-node and cluster rows paired by scenario with their
 * ratios and the goal ({@link ClusterComparison}), the failover figure ({@link FailoverProbe#json}),
 * and both columns in the text table, the Markdown table and the {@code --report} page, from canned
 * rows built by {@link BenchReport}.
 */
class ClusterComparisonTest {
    /** A row as BenchReport stores it: {@code count} units in {@code seconds}, server CPU µs per unit (NaN: not read), p99 in ms. */
    private static ObjectNode row(String scenario, String unit, int inFlight, long count, double seconds, double serverMicros, double p99Ms) {
        BenchReport r = new BenchReport(scenario, "fsync");
        r.unit = unit;
        r.inFlight = inFlight;
        r.count = count;
        r.seconds = seconds;
        r.record((long) (p99Ms * 1e6));
        long wall = (long) (seconds * 1e9);
        r.cpu = Double.isNaN(serverMicros) ? new CpuMeter.Used(-1, 1_000_000, wall, "CPU time of a server process (of 3) not readable")
                : new CpuMeter.Used((long) (serverMicros * 1e3 * count), (long) (serverMicros * 1e3 / 4 * count), wall, null);
        return r.json();
    }

    private static ArrayNode single() {
        ArrayNode a = Json.MAPPER.createArrayNode();
        a.add(row("append serial", "ops", 1, 4_000, 2.0, 100, 1.0)); // 2,000 ops/s
        a.add(row("append batched", "entries", 4, 500_000, 5.0, 4, 8.0)); // 100,000 entries/s
        a.add(row("incr contended", "commits", 16, 40_000, 4.0, 50, 5.0)); // 10,000 commits/s
        return a;
    }

    private static ArrayNode cluster() {
        ArrayNode a = Json.MAPPER.createArrayNode();
        a.add(row("append serial", "ops", 1, 1_000, 2.0, 250, 4.0)); // 500 ops/s, 2.5× the CPU
        a.add(row("append batched", "entries", 4, 300_000, 5.0, 10, 20.0)); // 60,000 entries/s
        a.add(row("incr contended", "commits", 16, 16_000, 4.0, Double.NaN, 9.0)); // CPU not read
        a.add(row("cluster only", "ops", 1, 10, 1.0, 5, 1.0));
        return a;
    }

    @Test
    void rowsShouldPairEachClusterRowWithItsSingleNodeRowAndGiveTheRatios() {
        ArrayNode rows = ClusterComparison.rows(single(), cluster());
        assertEquals(4, rows.size());
        JsonNode serial = rows.get(0);
        assertEquals("append serial", serial.path("scenario").asText());
        assertEquals(2_000, serial.path("singleThroughputPerSec").asLong());
        assertEquals(500, serial.path("clusterThroughputPerSec").asLong());
        assertEquals(0.25, serial.path("throughputRatio").asDouble(), 1e-9);
        assertEquals(100, serial.path("singleServerCpuUsPerOp").asDouble(), 1e-9);
        assertEquals(250, serial.path("clusterServerCpuUsPerOp").asDouble(), 1e-9);
        assertEquals(2.5, serial.path("serverCpuRatio").asDouble(), 1e-9);
        assertEquals(1, serial.path("inFlight").asInt());
        assertEquals(0.6, rows.get(1).path("throughputRatio").asDouble(), 1e-9);
        assertEquals("entries", rows.get(1).path("unit").asText());
    }

    @Test
    void rowsShouldCarryEachSidesJitShareAndTheTableShowIt() {
        ArrayNode single = Json.MAPPER.createArrayNode();
        ArrayNode cluster = Json.MAPPER.createArrayNode();
        single.add(withJit(row("append batched", "entries", 4, 500_000, 5.0, 4, 8.0), 0.05));
        cluster.add(withJit(row("append batched", "entries", 4, 300_000, 5.0, 10, 20.0), 0.28));
        JsonNode batched = ClusterComparison.rows(single, cluster).get(0);
        assertEquals(0.05, batched.path("singleServerJitShare").asDouble(), 1e-9);
        assertEquals(0.28, batched.path("clusterServerJitShare").asDouble(), 1e-9);
        assertFalse(batched.has("jitRatio"));
        ObjectNode doc = Json.MAPPER.createObjectNode().put("nodes", 3).put("shards", 8);
        doc.set("comparison", ClusterComparison.rows(single, cluster));
        String text = ClusterComparison.text(doc);
        assertTrue(text.contains("JIT % SINGLE"), text);
        assertTrue(text.matches("(?s).*append batched \\(4 in flight\\).* 5 +28 .*"), text);
        assertFalse(ClusterComparison.rows(single(), cluster()).get(0).has("singleServerJitShare"), "not read: left out");
    }

    private static ObjectNode withJit(ObjectNode row, double share) {
        return row.put("serverJitShare", share);
    }

    @Test
    void rowsShouldLeaveOutARatioWhenEitherSideLacksTheFigure() {
        ArrayNode rows = ClusterComparison.rows(single(), cluster());
        JsonNode incr = rows.get(2);
        assertTrue(incr.has("singleServerCpuUsPerOp"));
        assertFalse(incr.has("clusterServerCpuUsPerOp"), "the cluster's CPU was not read");
        assertFalse(incr.has("serverCpuRatio"));
        assertEquals(0.4, incr.path("throughputRatio").asDouble(), 1e-9);
        JsonNode only = rows.get(3);
        assertFalse(only.has("singleThroughputPerSec"), "no single-node row of that scenario");
        assertFalse(only.has("throughputRatio"));
        assertEquals(10, only.path("clusterThroughputPerSec").asLong());
        assertTrue(Double.isNaN(ClusterComparison.ratio(5, 0)));
    }

    @Test
    void goalShouldBeMetWhenBatchedAppendsReachHalfTheSingleNodeThroughput() {
        ObjectNode goal = ClusterComparison.goal(ClusterComparison.rows(single(), cluster()));
        assertEquals("append batched", goal.path("scenario").asText());
        assertEquals(0.6, goal.path("throughputRatio").asDouble(), 1e-9);
        assertTrue(goal.path("met").asBoolean());

        ArrayNode slow = Json.MAPPER.createArrayNode();
        slow.add(row("append batched", "entries", 4, 240_000, 5.0, 10, 20.0)); // 48,000 entries/s: 0.48
        ObjectNode missed = ClusterComparison.goal(ClusterComparison.rows(single(), slow));
        assertFalse(missed.path("met").asBoolean());
        assertTrue(ClusterComparison.goalLine(missed).endsWith("0.48 of single-node throughput (target >= 0.50): NOT met"),
                ClusterComparison.goalLine(missed));
        assertNull(ClusterComparison.goal(ClusterComparison.rows(single(), Json.MAPPER.createArrayNode())), "no batched row, no verdict");
    }

    @Test
    void failoverJsonShouldGiveTheMedianAndMaxOfKillToAckAndTheGoal() {
        ObjectNode f = FailoverProbe.json(List.of(new FailoverProbe.Round("n1", 3, "n2", 1, 2, 1_450.04, 50, 0),
                new FailoverProbe.Round("n3", 3, "n2", 2, 3, 900, 50, 1), new FailoverProbe.Round("n2", 3, "n1", 3, 4, 3_200, 50, 2)));
        assertEquals(3, f.path("rounds").size());
        assertEquals(1_450.0, f.path("p50Ms").asDouble(), 1e-9);
        assertEquals(3_200.0, f.path("maxMs").asDouble(), 1e-9);
        assertFalse(f.path("goalMet").asBoolean(), "3.2 s is over the 3 s goal");
        assertEquals("n1", f.path("rounds").get(0).path("killed").asText());
        assertEquals(1_450.0, f.path("rounds").get(0).path("killToAckMs").asDouble(), 1e-9);
        assertEquals("failover (3 kills): kill -9 of the shard's leader -> next ack p50 1,450 ms, max 3,200 ms (goal < 3,000 ms: NOT met)",
                ClusterComparison.failoverLine(f));
        assertEquals(2.0, FailoverProbe.percentile(List.of(3.0, 1.0, 2.0, 4.0), 50), 1e-9);
        assertFalse(FailoverProbe.json(List.of()).has("p50Ms"), "no rounds, no figures");
    }

    /** The {@code cluster} object BenchCommand stores beside the single-node rows. */
    static ObjectNode clusterDoc() {
        ArrayNode results = cluster();
        ArrayNode comparison = ClusterComparison.rows(single(), results);
        ObjectNode doc = Json.MAPPER.createObjectNode().put("nodes", 3).put("shards", 8).put("replicas", 3)
                .put("clients", "one node, n2, which led shard 5 (workspace bench) at the start")
                .put("cpuIs", "user+system of the 3 server JVMs summed; client = this JVM")
                .put("idleServerCores", 0.85).put("singleIdleServerCores", 0.02);
        doc.set("results", results);
        doc.set("comparison", comparison);
        doc.set("goal", ClusterComparison.goal(comparison));
        doc.set("failover", FailoverProbe.json(List.of(new FailoverProbe.Round("n2", 5, "n1", 1, 2, 1_234, 50, 0))));
        return doc;
    }

    @Test
    void textShouldShowBothColumnsTheRatiosTheGoalAndTheFailover() {
        String text = ClusterComparison.text(clusterDoc());
        System.out.println(text);
        assertTrue(text.startsWith("cluster vs single node: 3 nodes, 8 shards x 3 replicas; clients on one node, n2, which led shard 5"),
                text);
        assertTrue(text.contains("client = this JVM; idle, the servers keep 0.02 cores busy (single node) and 0.85 (cluster)\n"), text);
        assertTrue(text.matches("(?s).*append serial \\(1 in flight\\) +2,000 ops/s +500 ops/s +0\\.25 +100 +250 +2\\.50 .*"), text);
        assertTrue(text.matches("(?s).*append batched \\(4 in flight\\) +100,000 entries/s +60,000 entries/s +0\\.60 .*"), text);
        assertTrue(text.matches("(?s).*incr contended \\(16 in flight\\) .* +50\\.0 +— +— .*"), text);
        assertTrue(text.contains("goal: append batched at 0.60 of single-node throughput (target >= 0.50): met"), text);
        assertTrue(text.contains("next ack p50 1,234 ms, max 1,234 ms (goal < 3,000 ms: met)"), text);
    }

    @Test
    void markdownAndReportShouldShowTheClusterBesideTheSingleNode() throws Exception {
        ObjectNode run = BenchHtmlReportTest.cannedRun();
        run.set("cluster", clusterDoc());
        String md = BenchMarkdown.render(run);
        System.out.println(md);
        assertTrue(md.contains("**cluster vs single node: 3 nodes, 8 shards x 3 replicas;"), md);
        assertTrue(md.contains("| append serial (1 in flight) | 2,000 ops/s | 500 ops/s | 0.25 | 100 | 250 | 2.50 | "), md);
        assertTrue(md.contains("- goal: append batched at 0.60"), md);
        assertTrue(md.contains("- failover (1 kill): "), md);
        assertTrue(md.contains("The cluster's rows in full (server CPU summed over its 3 nodes)"), md);
        assertTrue(md.contains("| cluster only (1 in flight) | 10 ops/s | 5.00 ("), "a cluster row in full: " + md);

        Path page = Path.of("target", "bench-report", "bench-report-cluster.html");
        BenchHtmlReport.write(run, page);
        String html = Files.readString(page);
        assertTrue(html.contains("<h2>Cluster vs single node"), "the cluster section");
        assertEquals(4, count(html, "class=\"bar cluster\""), "one cluster bar per cluster row");
        assertTrue(html.contains("<td class=\"num\">2,000 ops/s</td><td class=\"num\">500 ops/s</td><td class=\"num\">0.25</td>"
                + "<td class=\"num\">100 · 250</td><td class=\"num\">2.50</td>"), "both columns and the ratios");
        assertTrue(html.contains("<p class=\"verdict met\">goal: append batched at 0.60"), "the goal, met");
        assertTrue(html.contains(">cluster only<"), "the cluster's rows in full");
        assertTrue(html.contains("then a 3-node cluster"), "the run card says what ran");
    }

    private static int count(String s, String part) {
        int n = 0;
        for (int at = s.indexOf(part); at >= 0; at = s.indexOf(part, at + 1)) {
            n++;
        }
        return n;
    }
}

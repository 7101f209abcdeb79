package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /observe/metrics} as Prometheus scrapes it: running totals typed {@code counter}, latencies
 * {@code histogram} with {@code le} buckets (so nodes aggregate), connection and socket meters, and
 * no {@code scope} label on the series.
 */
@Timeout(120)
class MetricsFormatIT {
    @TempDir
    static Path dir;
    static TestServer server;
    static String text;
    /** {@code # TYPE} of each metric family. */
    static final Map<String, String> TYPES = new HashMap<>();

    @BeforeAll
    static void scrape() throws Exception {
        server = TestServer.start(dir, Map.of());
        Http http = server.http;
        assertEquals(200, http.post("/v1/ws/acme/logs/m/entries", "{\"data\":1}").status());
        try (WsClient ws = WsClient.connect(server.wsUrl("acme"))) {
            ws.reply(ws.request("ping", ""), 10_000);
            text = http.get("/observe/metrics").body();
        }
        Files.writeString(Path.of("target", "metrics-sample.txt"), text);
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                TYPES.put(parts[2], parts[3]);
            }
        }
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void runningTotalsShouldBeCounters() {
        for (String name : new String[] {"strand_appends_total", "strand_append_bytes_total", "strand_doc_ops_total",
                "strand_cold_rolls_total", "strand_cold_rolled_entries_total", "strand_cold_roll_failures_total",
                "strand_cold_cache_hits_total", "strand_cold_cache_misses_total", "strand_http_connections_refused_total",
                "strand_http_header_timeouts_total", "strand_http_connections_accepted_total", "strand_sockets_opened_total"}) {
            assertEquals("counter", type(name), name);
        }
    }

    @Test
    void latenciesShouldBeHistogramsWithBuckets() {
        for (String name : new String[] {"strand_append_latency_seconds", "strand_commit_sync_seconds"}) {
            assertEquals("histogram", type(name), name);
            assertTrue(text.contains(name + "_bucket{le=\"0.001\"}") || text.matches("(?s).*" + name + "_bucket\\{[^}]*le=\"0\\.001\".*"),
                    name + " has no 1 ms bucket");
            // the registry is process-wide: other servers in this test JVM may have counted appends too
            assertTrue(text.matches("(?s).*" + name + "_bucket\\{[^}]*le=\"\\+Inf\",?\\} [1-9][0-9]*(\\.0)?\\n.*")
                    || name.equals("strand_commit_sync_seconds"), name + ": the append was not counted");
            assertFalse(text.contains(name + "{quantile="), name + ": per-node quantiles do not aggregate");
        }
    }

    /** Turns per group commit: a histogram of counts (not seconds), the append's group counted. */
    @Test
    void groupSizeShouldBeAHistogramOfTurnsPerGroupCommit() {
        assertEquals("histogram", type("strand_commit_group_size"));
        assertTrue(text.matches("(?s).*\\nstrand_commit_group_size_bucket\\{[^}]*le=\"32\\.0\",?\\} .*"), "no bucket at 32 turns");
        assertTrue(text.matches("(?s).*\\nstrand_commit_group_size_count(\\{[^}]*})? [1-9].*"), "the append's group was not counted");
    }

    @Test
    void connectionGaugesShouldCountOpenConnectionsAndSockets() {
        assertEquals("gauge", type("strand_http_connections"));
        assertEquals("gauge", type("strand_sockets"));
        assertTrue(text.matches("(?s).*\\nstrand_sockets(\\{[^}]*})? 1(\\.0)?\\n.*"), "one socket was open");
        assertTrue(text.matches("(?s).*\\nstrand_sockets_opened_total(\\{[^}]*})? [1-9].*"), "a socket was opened");
        assertTrue(text.matches("(?s).*\\nstrand_http_connections_accepted_total(\\{[^}]*})? [1-9].*"), "connections were accepted");
    }

    /** The process's own CPU time, a running total a remote bench reads CPU per operation from. */
    @Test
    void processCpuShouldBeACounterOfMicrosecondsThatAdvances() throws Exception {
        assertEquals("counter", type("strand_process_cpu_micros_total"));
        long first = processCpuMicros(text);
        for (int i = 0; i < 20; i++) { // the server's work between the scrapes (it runs in this JVM, so any work counts)
            assertEquals(200, server.http.post("/v1/ws/acme/logs/cpu/entries", "{\"data\":" + i + "}").status());
        }
        long second = processCpuMicros(server.http.get("/observe/metrics").body());
        assertTrue(first > 0 && second > first, "process CPU micros " + first + " then " + second);
    }

    private static long processCpuMicros(String prometheus) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^strand_process_cpu_micros_total(\\{[^}]*})? ([0-9.eE+]+)$")
                .matcher(prometheus);
        assertTrue(m.find(), "no strand_process_cpu_micros_total sample");
        return (long) Double.parseDouble(m.group(2));
    }

    @Test
    void seriesShouldCarryNoScopeLabel() {
        for (String line : text.split("\n")) {
            assertFalse(line.contains("scope=\""), line);
        }
    }

    private static String type(String name) {
        String t = TYPES.get(name);
        if (t == null && name.endsWith("_total")) {
            t = TYPES.get(name.substring(0, name.length() - "_total".length()));
        }
        return t;
    }
}

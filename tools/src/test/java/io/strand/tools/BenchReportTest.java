package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@link BenchReport}: the CPU per unit and the disk probe in a row's text line and JSON. */
class BenchReportTest {
    private static BenchReport batched() {
        BenchReport r = new BenchReport("append batched", "fsync");
        r.unit = "entries";
        r.inFlight = 4;
        r.count = 100_000;
        r.seconds = 1.25;
        r.record(1_500_000);
        r.disk = new DiskProbe.Result(Path.of("/tmp/x"), 0.166, 0.5, 2.0);
        return r;
    }

    @Test
    void jsonShouldGiveCpuPerEntryAndCoresWhenBothSidesWereRead() {
        BenchReport r = batched();
        r.cpu = new CpuMeter.Used(970_000_000L, 310_000_000L, 1_250_000_000L, null); // 0.97 s server, 0.31 s client
        ObjectNode o = r.json();
        assertEquals(80_000, o.path("throughputPerSec").asLong());
        assertEquals(9.7, o.path("serverCpuUsPerOp").asDouble(), 1e-9);
        assertEquals(3.1, o.path("clientCpuUsPerOp").asDouble(), 1e-9);
        assertEquals(970, o.path("serverCpuMs").asLong());
        assertEquals(0.78, o.path("serverCores").asDouble(), 1e-9);
        assertEquals(0.25, o.path("clientCores").asDouble(), 1e-9);
        assertEquals(0.166, o.path("diskP50Ms").asDouble(), 1e-9);
        assertFalse(o.has("cpuNote"));
    }

    @Test
    void lineShouldPutCpuPerUnitBesideTheThroughputAndNameTheDiskProbe() {
        BenchReport r = batched();
        r.cpu = new CpuMeter.Used(970_000_000L, 310_000_000L, 1_250_000_000L, null);
        String line = r.line();
        assertTrue(line.contains("80,000 entries/s  cpu/entry server=9.70µs client=3.10µs (cores 0.78+0.25)"), line);
        assertTrue(line.contains("disk p50=0.166ms"), line);
    }

    @Test
    void rowShouldSayHowMuchOfTheServersCpuWasJitWhenItWasRead() {
        BenchReport r = batched();
        r.cpu = new CpuMeter.Used(970_000_000L, 310_000_000L, 1_250_000_000L, null, 120_000_000L); // 0.12 s of 0.97 s in compiler threads
        assertEquals(0.124, r.json().path("serverJitShare").asDouble(), 1e-9);
        assertTrue(r.line().contains("server=9.70µs (JIT 12%) client=3.10µs"), r.line());
        r.cpu = new CpuMeter.Used(970_000_000L, 310_000_000L, 1_250_000_000L, null); // not read: no share, not a 0 %
        assertFalse(r.json().has("serverJitShare"));
        assertFalse(r.line().contains("JIT"), r.line());
    }

    @Test
    void rowShouldSayWhyInsteadOfFiguresWhenTheServerRunsInProcess() {
        BenchReport r = batched();
        r.cpu = new CpuMeter.Used(-1, -1, 1_250_000_000L, CpuMeter.IN_PROCESS);
        ObjectNode o = r.json();
        assertFalse(o.has("serverCpuUsPerOp"));
        assertFalse(o.has("clientCpuUsPerOp"));
        assertEquals(CpuMeter.IN_PROCESS, o.path("cpuNote").asText());
        assertTrue(r.line().contains("server=? client=? (" + CpuMeter.IN_PROCESS + ")"), r.line());
    }

    @Test
    void rowShouldCarryNoCpuFieldsWhenTheScenarioDidNotMeasure() {
        BenchReport r = batched();
        assertFalse(r.json().has("serverCpuUsPerOp"));
        assertFalse(r.line().contains("cpu/"));
    }

    @Test
    void singularShouldNameOneUnit() {
        assertEquals("op", BenchReport.singular("ops"));
        assertEquals("entry", BenchReport.singular("entries"));
        assertEquals("attempt", BenchReport.singular("attempts"));
        assertEquals("commit", BenchReport.singular("commits"));
    }
}

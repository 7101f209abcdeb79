package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** {@link CpuMeter}: the {@code /proc/<pid>/stat} parser on canned lines, the per-unit arithmetic, and this JVM read for real. */
class CpuMeterTest {
    /** A real line's shape (kernel 6.x, 52 fields) with utime 1500 and stime 320, and a comm holding spaces and parentheses. */
    private static final String STAT = "4711 (java (strand) main) S 4690 4711 4690 34817 4711 4194560 51234 0 3 0 1500 320 0 0 20 0 "
            + "57 0 1243296 4133440512 98123 18446744073709551615 1 1 0 0 0 0 0 4096 16796879 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    @Test
    void ticksShouldSumUtimeAndStimeWhenCommHoldsSpacesAndParentheses() {
        assertEquals(1820, CpuMeter.ticks(STAT));
    }

    @Test
    void ticksShouldRefuseALineThatIsNotAProcStatLine() {
        assertThrows(IllegalArgumentException.class, () -> CpuMeter.ticks("no parentheses here 1 2 3"));
        assertThrows(IllegalArgumentException.class, () -> CpuMeter.ticks("4711 (java) S 1 2 3"));
        assertThrows(IllegalArgumentException.class, () -> CpuMeter.ticks(STAT.replace(" 1500 320 ", " 1500 x ")));
    }

    @Test
    void cpuMicrosShouldReadTheServersCounterFromPrometheusText() {
        String text = "# HELP strand_process_cpu_micros_total CPU time\n# TYPE strand_process_cpu_micros_total counter\n"
                + "strand_process_cpu_micros_total 1.2345678E7\nstrand_process_cpu_micros_totalx 5\n";
        assertEquals(12_345_678L, CpuMeter.cpuMicros(text));
        assertEquals(42L, CpuMeter.cpuMicros("strand_process_cpu_micros_total{node=\"n1\"} 42.0\n"));
        assertEquals(-1L, CpuMeter.cpuMicros("strand_appends_total 10\n"), "an older server lists none: unknown, not 0");
        assertEquals(-1L, CpuMeter.cpuMicros("strand_process_cpu_micros_total -1.0\n"), "the JDK could not tell");
    }

    @Test
    void betweenShouldGiveMicrosPerUnitAndCoresWhenBothSidesWereRead() {
        CpuMeter.Sample start = new CpuMeter.Sample(1_000_000_000L, 500_000_000L, 7_000_000_000L);
        CpuMeter.Sample end = new CpuMeter.Sample(3_000_000_000L, 1_000_000_000L, 8_250_000_000L); // 2 s and 0.5 s of CPU in 1.25 s
        CpuMeter.Used used = CpuMeter.between(start, end, "unused");
        assertEquals(2_000_000_000L, used.serverNanos());
        assertEquals(1_250_000_000L, used.wallNanos());
        assertEquals(20.0, used.serverMicrosPer(100_000), 1e-9); // 2 s over 100,000 entries
        assertEquals(5.0, used.clientMicrosPer(100_000), 1e-9);
        assertEquals(1.6, used.serverCores(), 1e-9);
        assertEquals(0.4, used.clientCores(), 1e-9);
        assertNull(used.note());
        assertTrue(Double.isNaN(used.serverMicrosPer(0)), "no units, no figure");
    }

    @Test
    void betweenShouldBeUnknownWithTheNoteWhenAReadingFailed() {
        CpuMeter.Used used = CpuMeter.between(new CpuMeter.Sample(-1, 10, 0), new CpuMeter.Sample(500, 30, 100), "server gone");
        assertFalse(used.serverKnown());
        assertTrue(used.clientKnown());
        assertEquals(20, used.clientNanos());
        assertEquals("server gone", used.note());
        assertTrue(Double.isNaN(used.serverMicrosPer(10)));
    }

    @Test
    void forServerShouldSayInProcessWhenTheServerIsThisJvm() {
        for (long pid : new long[] {ProcessHandle.current().pid(), 0}) {
            CpuMeter meter = CpuMeter.forServer(pid);
            CpuMeter.Used used = meter.since(meter.sample());
            assertFalse(used.serverKnown());
            assertFalse(used.clientKnown(), "the client's figure would include the server's");
            assertEquals(CpuMeter.IN_PROCESS, used.note());
        }
    }

    @Test
    void microsShouldKeepThreeSignificantFigures() {
        assertEquals("1,235", CpuMeter.micros(1234.5));
        assertEquals("240", CpuMeter.micros(240.4));
        assertEquals("45.7", CpuMeter.micros(45.71));
        assertEquals("9.70", CpuMeter.micros(9.7));
        assertEquals("0.412", CpuMeter.micros(0.4123));
        assertEquals("—", CpuMeter.micros(Double.NaN));
        assertEquals(0.412, CpuMeter.rounded(0.41234));
    }

    @Test
    void cpuNanosShouldAgreeWithTheJdkWhenReadingThisJvm() {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "Linux /proc");
        long self = ProcessHandle.current().pid();
        long tick = CpuMeter.nanosPerTick();
        assertEquals(TimeUnit.MILLISECONDS.toNanos(10), tick, "CLK_TCK is 100 on Linux");
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long before = CpuMeter.cpuNanos(self);
        long jdk = os.getProcessCpuTime();
        long handle = ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos();
        long after = CpuMeter.cpuNanos(self);
        assertTrue(before > 0, "a running JVM has used CPU: " + before);
        assertTrue(before <= after, before + " then " + after);
        // the JDK reads the same counters: equal to the tick, up to the CPU used between the readings
        for (long other : new long[] {jdk, handle}) {
            assertTrue(other >= before - 2 * tick && other <= after + 2 * tick, before + " ≤ " + other + " ≤ " + after);
        }
    }

    @Test
    void percentShouldGiveAShareAsWholePerCent() {
        assertEquals("12", CpuMeter.percent(0.124));
        assertEquals("0", CpuMeter.percent(0.004));
        assertEquals("—", CpuMeter.percent(Double.NaN));
    }

    @Test
    void compilerThreadShouldMatchHotSpotsJitThreadsOnly() {
        assertTrue(CpuMeter.compilerThread("812 (C2 CompilerThre) S 1 2 3 4 5 6 7 8 9 10 11 700 12 0 0 20 0"));
        assertTrue(CpuMeter.compilerThread("813 (C1 CompilerThre) S 1 2 3 4 5 6 7 8 9 10 11 30 2 0 0 20 0"));
        assertFalse(CpuMeter.compilerThread("814 (shard6-writer-0) S 1 2 3 4 5 6 7 8 9 10 11 30 2 0 0 20 0"));
        assertFalse(CpuMeter.compilerThread(STAT));
    }

    @Test
    void jitNanosBetweenShouldCountEachThreadsWindowAndNeverGoBelowZero() {
        long tick = CpuMeter.nanosPerTick();
        java.util.Map<String, Long> start = java.util.Map.of("1/10", 500L, "1/11", 40L);
        // 1/10 went on by 30 ticks, 1/11 exited (its window is lost, not negative), 1/12 started in the window
        java.util.Map<String, Long> end = java.util.Map.of("1/10", 530L, "1/12", 7L);
        assertEquals(37 * tick, CpuMeter.jitNanosBetween(start, end));
        assertEquals(-1, CpuMeter.jitNanosBetween(null, end), "not read at the start: unknown, not zero");
        CpuMeter.Used used = CpuMeter.between(new CpuMeter.Sample(0, 0, 0, start), new CpuMeter.Sample(370 * tick, 0, 1, end), null);
        assertEquals(0.1, used.serverJitShare(), 1e-9);
        assertTrue(Double.isNaN(CpuMeter.between(new CpuMeter.Sample(0, 0, 0), new CpuMeter.Sample(10, 0, 1), null).serverJitShare()));
    }

    @Test
    void jitTicksShouldFindThisJvmsCompilerThreads() {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/task")), "Linux /proc");
        long self = ProcessHandle.current().pid();
        java.util.Map<String, Long> ticks = CpuMeter.jitTicks(new long[] {self});
        assertTrue(ticks != null && !ticks.isEmpty(), "a JVM with the JIT on has compiler threads: " + ticks);
        assertTrue(ticks.keySet().stream().allMatch(k -> k.startsWith(self + "/")), ticks.toString());
        assertTrue(ticks.values().stream().allMatch(t -> t >= 0), ticks.toString());
        assertEquals(null, CpuMeter.jitTicks(new long[] {Long.MAX_VALUE}), "no such process: unknown");
    }

    @Test
    void cpuNanosShouldBeUnknownWhenTheProcessHasExited() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(-1, CpuMeter.cpuNanos(p.pid()));
    }
    @Test
    void sumShouldAddEveryProcessOrBeUnknownWhenAnyWasNotRead() {
        assertEquals(600, CpuMeter.sum(new long[] {100, 200, 300}));
        assertEquals(-1, CpuMeter.sum(new long[] {100, -1, 300}), "a partial sum would look cheaper than it was");
        assertEquals(0, CpuMeter.sum(new long[0]));
    }

    @Test
    void forServersShouldSumTheProcessesAndBeUnknownOnceOneIsGone() throws Exception {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "Linux /proc");
        Process a = new ProcessBuilder("sleep", "60").start();
        Process b = new ProcessBuilder("sleep", "60").start();
        try {
            CpuMeter meter = CpuMeter.forServers(java.util.List.of(a.pid(), b.pid()));
            CpuMeter.Sample start = meter.sample();
            assertEquals(CpuMeter.sum(new long[] {CpuMeter.cpuNanos(a.pid()), CpuMeter.cpuNanos(b.pid())}), start.serverNanos(),
                    "a sleeping process uses no CPU between the two readings");
            assertTrue(meter.since(start).serverKnown());
            b.destroyForcibly();
            assertTrue(b.waitFor(30, TimeUnit.SECONDS));
            CpuMeter.Used used = meter.since(start);
            assertFalse(used.serverKnown(), "one of the servers is gone");
            assertEquals("CPU time of a server process (of 2) not readable", used.note());
        } finally {
            a.destroyForcibly();
            b.destroyForcibly();
        }
        CpuMeter inProcess = CpuMeter.forServers(java.util.List.of(ProcessHandle.current().pid()));
        assertEquals(CpuMeter.IN_PROCESS, inProcess.since(inProcess.sample()).note(), "a node in this JVM: no bogus split");
    }
}

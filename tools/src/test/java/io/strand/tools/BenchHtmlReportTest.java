package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * {@code strand bench --report}: a canned run (real {@link BenchReport}s filled from seeded random
 * latencies, a disk probe, this machine) through {@link BenchHtmlReport}, checked as text and
 * screenshotted by headless Chromium into {@code tools/target/bench-report/}.
 */
class BenchHtmlReportTest {
    private static final Path OUT = Path.of("target", "bench-report");

    @Test
    void reportIsOnePageWithEveryScenarioTheMachineAndTheDiskProbe() throws Exception {
        ObjectNode run = cannedRun();
        Path page = OUT.resolve("bench-report.html");
        BenchHtmlReport.write(run, page);
        String html = Files.readString(page);

        for (String scenario : List.of("append serial", "append concurrent", "read pagination", "subscribe replay 100k",
                "CAS contended", "floor debit", "many logs")) {
            assertTrue(html.contains(">" + scenario + "<"), scenario + " is on the page");
        }
        assertTrue(html.contains("durability: fsync"), "the durability mode");
        assertTrue(html.contains("0.140 ms"), "the disk probe's p50");
        assertTrue(html.contains("<dt>cores</dt><dd>" + Runtime.getRuntime().availableProcessors() + "</dd>"), "the cores");
        assertTrue(html.contains("<dt>jdk</dt><dd>") && html.contains(System.getProperty("java.runtime.version")), "the JDK");
        assertTrue(html.contains("<dt>kernel</dt><dd>" + System.getProperty("os.name")), "the kernel");
        assertTrue(html.contains("latencyIs=gap between &lt;entry&gt; frames"), "a scenario's notes, escaped");
        assertFalse(html.contains("<entry>"), "nothing unescaped");
        // Self-contained: no attribute or CSS that loads anything; the only URL is the SVG namespace.
        assertFalse(Pattern.compile("(?i)\\b(src|href)\\s*=|url\\(|@import").matcher(html).find(), "nothing is fetched");
        Matcher urls = Pattern.compile("https?://[^\"'\\s<]+").matcher(html);
        while (urls.find()) {
            assertEquals("http://www.w3.org/2000/svg", urls.group(), "only the SVG namespace");
        }
        // One circle per percentile per scenario with latencies (all seven here), five percentiles.
        assertEquals(7 * 5, count(html, "<circle "), "latency marks");
        assertEquals(7, count(html, "class=\"bar\""), "throughput bars");
        // CPU per unit beside each throughput, in the chart and in the table; the in-process row says why it has none
        assertTrue(html.contains("30,754 ops/s · CPU 45.7 µs</text>"), "server CPU beside the throughput bar");
        assertTrue(html.contains("<td class=\"num\">2.30 · 0.767<br><small>1.41 + 0.47 cores</small></td>"),
                "server and client CPU per entry, and their cores");
        assertTrue(html.contains("<td class=\"notes\">" + BenchHtmlReport.esc(CpuMeter.IN_PROCESS) + "</td>"), "in-process note");
        assertTrue(html.contains("<dt>cpu</dt><dd>user+system from /proc/&lt;pid&gt;/stat in 10.0 ms ticks</dd>"), "the CPU clock");
        assertEquals(7, count(html, "<td class=\"num\">0.166</td><td class=\"num\">20.0 s<br>"), "each row's disk probe");
    }

    @Test
    void markdownShouldGiveEachRowItsThroughputCpuPerUnitAndDiskProbe() {
        String md = BenchMarkdown.render(cannedRun());
        System.out.println(md);
        assertTrue(md.startsWith("2026-12-01T08:14:00Z, durability fsync, "), md);
        assertTrue(md.contains("disk probe at start: one 300-byte DSYNC write p50 0.140 ms, p99 0.610 ms; `strand bench --durability fsync`"), md);
        assertTrue(md.contains("| append serial | 3,444 ops/s | 240 (0.83) | 80.0 (0.28) | "), md);
        assertTrue(md.contains("| read pagination (1 in flight) | 614,500 entries/s | 2.30 (1.41) | 0.767 (0.47) | 0.1"), md);
        assertTrue(md.contains("| many logs (32 in flight) | 1,480 ops/s | n/a: " + CpuMeter.IN_PROCESS + " | n/a: "), md);
        assertEquals(7, count(md, " | 0.166 |\n"), "each row ends with its disk probe");
    }

    @Test
    void headlessChromiumRendersTheReport() throws Exception {
        String chromium = findChromium();
        Assumptions.assumeTrue(chromium != null, "no chromium on PATH (.ci/run installs it)");
        Path page = OUT.resolve("bench-report-screenshot.html").toAbsolutePath();
        BenchHtmlReport.write(cannedRun(), page);
        Path png = OUT.resolve("bench-report.png").toAbsolutePath();
        Files.deleteIfExists(png);
        Path profile = Files.createTempDirectory("strand-chromium-");
        try {
            Process p = new ProcessBuilder(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--user-data-dir=" + profile, "--window-size=1100,1400", "--screenshot=" + png, page.toUri().toString())
                    .redirectErrorStream(true).redirectOutput(OUT.resolve("chromium.log").toFile()).start();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "chromium finished");
            assertEquals(0, p.exitValue(), "chromium's exit status; see target/bench-report/chromium.log");
        } finally {
            BenchCommand.deleteTree(profile);
        }
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(1100, image.getWidth());
        // A blank or error page has a handful of colours; the charts have many.
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 3) {
            for (int x = 0; x < image.getWidth(); x += 3) {
                colours.add(image.getRGB(x, y));
            }
        }
        assertTrue(colours.size() > 50, "the screenshot shows the charts (" + colours.size() + " colours): " + png);
        System.out.println("bench report screenshot: " + png);
    }

    private static String findChromium() {
        for (String name : List.of("chromium", "chromium-browser", "google-chrome")) {
            for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
                if (Files.isExecutable(Path.of(dir, name))) {
                    return Path.of(dir, name).toString();
                }
            }
        }
        return null;
    }

    private static int count(String s, String part) {
        int n = 0;
        for (int at = s.indexOf(part); at >= 0; at = s.indexOf(part, at + 1)) {
            n++;
        }
        return n;
    }

    /** A run as BenchCommand stores it, with latencies drawn from a seeded log-normal per scenario. */
    static ObjectNode cannedRun() {
        long seed = 20261201L;
        System.out.println("BenchHtmlReportTest seed " + seed);
        Random random = new Random(seed);
        ArrayNode results = Json.MAPPER.createArrayNode();
        results.add(scenario(random, "append serial", "ops", 3_444, 0.26, 0, 1, 240));
        results.add(scenario(random, "append concurrent", "ops", 30_754, 0.99, 32, 1, 45.7));
        results.add(scenario(random, "read pagination", "entries", 614_500, 0.15, 1, 100, 2.3));
        ObjectNode replay = scenario(random, "subscribe replay 100k", "entries", 1_444_562, 0.004, 0, 1, 0.8);
        replay.put("latencyIs", "gap between <entry> frames");
        results.add(replay);
        ObjectNode cas = scenario(random, "CAS contended", "commits", 2_950, 4.1, 1, 1, 310);
        cas.put("connections", 16).put("conflicts", 1_234).put("conflictPct", 29.5);
        results.add(cas);
        results.add(scenario(random, "floor debit", "attempts", 5_300, 2.9, 1, 1, 90));
        results.add(scenario(random, "many logs", "ops", 1_480, 21.0, 32, 1, Double.NaN)); // as if the server ran in-process
        ObjectNode run = Json.MAPPER.createObjectNode();
        run.put("startedAt", "2026-12-01T08:14:00Z");
        run.put("command", "strand bench --durability fsync");
        run.put("cpuClock", "user+system from /proc/<pid>/stat in 10.0 ms ticks");
        run.put("durability", "fsync");
        run.put("quick", false);
        run.put("cores", Runtime.getRuntime().availableProcessors());
        run.put("warmupSeconds", 20);
        run.set("machine", BenchCommand.machine());
        run.set("diskProbe", new DiskProbe.Result(Path.of("/tmp/strand-bench-1"), 0.140, 0.61, 3.2).json());
        run.set("results", results);
        return run;
    }

    /** {@code serverMicros}: server CPU per unit (the client takes a third of it); NaN for an in-process server. */
    private static ObjectNode scenario(Random random, String name, String unit, double perSecond, double medianMs, int inFlight,
                                       int unitsPerOp, double serverMicros) {
        BenchReport r = new BenchReport(name, "fsync");
        r.unit = unit;
        r.inFlight = inFlight;
        int ops = 20_000;
        for (int i = 0; i < ops; i++) {
            r.record((long) (medianMs * 1e6 * Math.exp(0.45 * random.nextGaussian())));
        }
        r.count = (long) ops * unitsPerOp;
        r.seconds = r.count / perSecond;
        r.warmupSeconds = 20;
        r.warmupOps = 40_000;
        long wall = (long) (r.seconds * 1e9);
        r.cpu = Double.isNaN(serverMicros) ? new CpuMeter.Used(-1, -1, wall, CpuMeter.IN_PROCESS)
                : new CpuMeter.Used((long) (serverMicros * 1e3 * r.count), (long) (serverMicros * 1e3 / 3 * r.count), wall, null);
        r.disk = new DiskProbe.Result(Path.of("/tmp/strand-bench-1"), 0.166, 0.52, 2.1);
        return r.json();
    }
}

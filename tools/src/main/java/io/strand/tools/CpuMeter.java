package io.strand.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The CPU time (user + system) that the bench server and this client JVM spend in one timed window
 * of {@code strand bench}, so each row can give CPU microseconds per operation beside its
 * throughput: on 2 cores the server's CPU per operation decides the rate, and it moves far less
 * from minute to minute than the rate does. Immutable: thread-safe.
 *
 * <p><b>Source.</b> utime + stime of {@code /proc/<pid>/stat} (fields 14 and 15: every thread of
 * the process, live or exited, not its children) in clock ticks of {@code getconf CLK_TCK} (100 on
 * Linux: 10 ms). Compared on the development VM with {@code ProcessHandle.info().totalCpuDuration()}
 * and, for this JVM, {@code OperatingSystemMXBean.getProcessCpuTime()}: all three gave the same
 * figure to the tick, since the JDK reads the same two fields (or {@code times(2)}) and scales them
 * by the same tick, so neither is finer. Reading {@code /proc} keeps the tick, and with it the
 * resolution, explicit, and reads server and client the same way; where there is no {@code /proc}
 * (macOS) the meter falls back to {@code ProcessHandle}. The kernel truncates utime and stime to
 * whole ticks, so a window's figure is within ±2 ticks (±20 ms): 0.2 % of a 10 s window at one
 * core, 2 % of a 1 s {@code --quick} one.
 *
 * <p><b>JIT.</b> Each window also reads how much of the server's CPU went to its JIT compiler
 * threads ({@code C1 CompilerThre}/{@code C2 CompilerThre} in {@code /proc/<pid>/task/<tid>/stat}),
 * so a row says when its CPU per unit is still partly compilation rather than the steady state: three
 * cluster nodes under {@code append-batched} on this 2-core VM spent 28 % of their CPU in C2 75–95 s into
 * the load and settled only after about 150 s (2026-12-03). A compiler thread that exits within a
 * window takes its time in the window with it, so the share is a lower bound.
 *
 * <p><b>Loopback.</b> The receive side of loopback TCP usually runs in the sending process's
 * system call, so part of what one side sends is charged to it rather than to the receiver: read
 * the two figures as a split of the 2 cores, not as exact costs of each side.
 */
final class CpuMeter {
    /** What a row says instead of CPU figures when the server runs inside this JVM. */
    static final String IN_PROCESS = "server in the bench's own JVM: its CPU cannot be told from the client's";

    /**
     * CPU nanos of both processes and the wall clock, at one instant; -1 where a process's CPU is not
     * known. {@code serverJitTicks}: each server compiler thread's CPU ticks by "pid/tid", null when
     * not known.
     */
    record Sample(long serverNanos, long clientNanos, long wallNanos, Map<String, Long> serverJitTicks) {
        Sample(long serverNanos, long clientNanos, long wallNanos) {
            this(serverNanos, clientNanos, wallNanos, null);
        }
    }

    /**
     * The CPU both sides used over one window of {@code wallNanos}; a side's figure is -1 when it
     * is not known, and {@code note} then says why.
     */
    record Used(long serverNanos, long clientNanos, long wallNanos, String note, long serverJitNanos) {
        Used(long serverNanos, long clientNanos, long wallNanos, String note) {
            this(serverNanos, clientNanos, wallNanos, note, -1);
        }

        boolean serverKnown() {
            return serverNanos >= 0;
        }

        boolean clientKnown() {
            return clientNanos >= 0;
        }

        /** Server CPU microseconds per unit of the row (operation, entry, attempt…); NaN when unknown or no units. */
        double serverMicrosPer(long units) {
            return microsPer(serverNanos, units);
        }

        /** The share (0..1) of the server's CPU that its JIT compiler threads used; NaN when either is unknown. */
        double serverJitShare() {
            return serverJitNanos < 0 || serverNanos <= 0 ? Double.NaN : Math.min(1.0, (double) serverJitNanos / serverNanos);
        }

        double clientMicrosPer(long units) {
            return microsPer(clientNanos, units);
        }

        /** The cores the server kept busy on average over the window. */
        double serverCores() {
            return cores(serverNanos, wallNanos);
        }

        double clientCores() {
            return cores(clientNanos, wallNanos);
        }

        private static double microsPer(long nanos, long units) {
            return nanos < 0 || units <= 0 ? Double.NaN : nanos / 1e3 / units;
        }

        private static double cores(long nanos, long wall) {
            return nanos < 0 || wall <= 0 ? Double.NaN : (double) nanos / wall;
        }
    }

    private final LongSupplier server;
    private final LongSupplier client;
    private final Supplier<Map<String, Long>> serverJit;
    private final String note;

    /** {@code server} and {@code client} return cumulative CPU nanos, or -1 when unknown; {@code note} explains a -1. */
    CpuMeter(LongSupplier server, LongSupplier client, String note) {
        this(server, client, () -> null, note);
    }

    /** As above, with {@code serverJit} giving the server's compiler threads' ticks by "pid/tid" (null when unknown). */
    CpuMeter(LongSupplier server, LongSupplier client, Supplier<Map<String, Long>> serverJit, String note) {
        this.server = server;
        this.client = client;
        this.serverJit = serverJit;
        this.note = note;
    }

    /**
     * A meter for a server in process {@code serverPid} and this JVM as the client. A pid of 0 or
     * less, or this JVM's own, means the server runs in here: both sides are then reported as
     * unknown with {@link #IN_PROCESS}, rather than as a bogus split.
     */
    static CpuMeter forServer(long serverPid) {
        long self = ProcessHandle.current().pid();
        if (serverPid <= 0 || serverPid == self) {
            return new CpuMeter(() -> -1, () -> -1, IN_PROCESS);
        }
        return new CpuMeter(() -> cpuNanos(serverPid), () -> cpuNanos(self), () -> jitTicks(new long[] {serverPid}),
                "CPU time of the server process not readable");
    }

    /**
     * A meter for a server made of several processes (the nodes of a local cluster) and this JVM as
     * the client: the server side is the sum over {@code serverPids}, so a row's CPU per unit is
     * what all of them spent on it together; it is unknown (-1) when any one cannot be read.
     */
    static CpuMeter forServers(java.util.List<Long> serverPids) {
        long self = ProcessHandle.current().pid();
        if (serverPids.isEmpty() || serverPids.contains(self)) {
            return new CpuMeter(() -> -1, () -> -1, IN_PROCESS);
        }
        long[] pids = serverPids.stream().mapToLong(Long::longValue).toArray();
        return new CpuMeter(() -> {
            long[] each = new long[pids.length];
            for (int i = 0; i < pids.length; i++) {
                each[i] = cpuNanos(pids[i]);
            }
            return sum(each);
        }, () -> cpuNanos(self), () -> jitTicks(pids), "CPU time of a server process (of " + pids.length + ") not readable");
    }

    /**
     * A meter for servers this machine cannot see in {@code /proc} (nodes on other machines, {@code
     * strand bench --server/--cluster-nodes}): each one's {@code strand_process_cpu_micros_total} from
     * its {@code GET /observe/metrics} (the JDK's process CPU clock, microseconds), summed; this JVM
     * as the client. The JIT share is unknown. The two scrapes around a window are the server's work
     * too (about a millisecond each), so a window is counted a little high, never low.
     */
    static CpuMeter forRemote(java.util.List<String> baseUrls) {
        long self = ProcessHandle.current().pid();
        java.util.List<String> urls = java.util.List.copyOf(baseUrls);
        return new CpuMeter(() -> {
            long[] each = new long[urls.size()];
            for (int i = 0; i < each.length; i++) {
                long micros = remoteCpuMicros(urls.get(i));
                each[i] = micros < 0 ? -1 : micros * 1_000;
            }
            return sum(each);
        }, () -> cpuNanos(self), "a server's /observe/metrics did not answer or has no strand_process_cpu_micros_total (an older server)");
    }

    private static final java.util.regex.Pattern CPU_MICROS = java.util.regex.Pattern.compile(
            "^strand_process_cpu_micros_total(?:\\{[^}]*})? ([0-9.eE+]+)$", java.util.regex.Pattern.MULTILINE);

    /** A server's CPU micros from its metrics; -1 when it does not answer or lists none. */
    static long remoteCpuMicros(String baseUrl) {
        try {
            return cpuMicros(StrandClient.metrics(baseUrl));
        } catch (CliFailure e) {
            return -1;
        }
    }

    /** {@code strand_process_cpu_micros_total} in one node's Prometheus text; -1 when absent or negative. */
    static long cpuMicros(String prometheus) {
        java.util.regex.Matcher m = CPU_MICROS.matcher(prometheus);
        if (!m.find()) {
            return -1;
        }
        double v = Double.parseDouble(m.group(1));
        return v < 0 ? -1 : (long) v;
    }

    /** The sum of CPU nanos read from several processes; -1 when any of them is -1 (a partial sum would look cheap). */
    static long sum(long[] nanos) {
        long total = 0;
        for (long n : nanos) {
            if (n < 0) {
                return -1;
            }
            total += n;
        }
        return total;
    }

    Sample sample() {
        return new Sample(server.getAsLong(), client.getAsLong(), System.nanoTime(), serverJit.get());
    }

    /**
     * The CPU used over {@code window} while nothing is asked of the server: its floor (heartbeats,
     * timers), which every row's CPU per unit includes in proportion to the row's length.
     */
    Used idle(java.time.Duration window) throws InterruptedException {
        Sample start = sample();
        Thread.sleep(window.toMillis()); // the measured window itself, not a wait for something
        return since(start);
    }

    /** The CPU used since {@code start} (a {@link #sample()} of this meter). */
    Used since(Sample start) {
        return between(start, sample(), note);
    }

    static Used between(Sample start, Sample end, String note) {
        long s = start.serverNanos() < 0 || end.serverNanos() < 0 ? -1 : end.serverNanos() - start.serverNanos();
        long c = start.clientNanos() < 0 || end.clientNanos() < 0 ? -1 : end.clientNanos() - start.clientNanos();
        return new Used(s, c, end.wallNanos() - start.wallNanos(), s < 0 || c < 0 ? note : null,
                jitNanosBetween(start.serverJitTicks(), end.serverJitTicks()));
    }

    /**
     * The compiler threads' CPU between two readings: each thread at the end less its ticks at the start
     * (0 for a thread started since); a thread gone by the end is left out. -1 when either is unknown.
     */
    static long jitNanosBetween(Map<String, Long> start, Map<String, Long> end) {
        if (start == null || end == null) {
            return -1;
        }
        long ticks = 0;
        for (Map.Entry<String, Long> e : end.entrySet()) {
            ticks += Math.max(0, e.getValue() - start.getOrDefault(e.getKey(), 0L));
        }
        return ticks * nanosPerTick();
    }

    // ---------------------------------------------------------------- reading a process

    /** Cumulative user + system CPU nanos of process {@code pid}; -1 when it is gone or cannot be read. */
    static long cpuNanos(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (Files.isReadable(stat)) {
            try {
                return ticks(Files.readString(stat, StandardCharsets.US_ASCII)) * nanosPerTick();
            } catch (IOException | IllegalArgumentException e) {
                return -1; // the process ended, or the line is not what Linux writes
            }
        }
        return ProcessHandle.of(pid).flatMap(p -> p.info().totalCpuDuration()).map(d -> d.toNanos()).orElse(-1L);
    }

    /**
     * The CPU ticks of every JIT compiler thread of the processes {@code pids}, by "pid/tid"; null when
     * a process's threads cannot be listed (it ended, or there is no {@code /proc}). A thread that ends
     * while they are read is skipped.
     */
    static Map<String, Long> jitTicks(long[] pids) {
        Map<String, Long> out = new HashMap<>();
        for (long pid : pids) {
            Path tasks = Path.of("/proc", Long.toString(pid), "task");
            try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
                for (Path t : threads) {
                    try {
                        String line = Files.readString(t.resolve("stat"), StandardCharsets.US_ASCII);
                        if (compilerThread(line)) {
                            out.put(pid + "/" + t.getFileName(), ticks(line));
                        }
                    } catch (IOException | IllegalArgumentException e) {
                        // the thread ended between the listing and the read: its time is not in the window
                    }
                }
            } catch (IOException e) {
                return null;
            }
        }
        return out;
    }

    /** Whether a {@code /proc/<pid>/task/<tid>/stat} line is a HotSpot JIT compiler thread's (comm cut to 15 characters by Linux). */
    static boolean compilerThread(String statLine) {
        int open = statLine.indexOf('(');
        return open >= 0 && (statLine.startsWith("C2 CompilerThre", open + 1) || statLine.startsWith("C1 CompilerThre", open + 1));
    }

    /**
     * utime + stime, in clock ticks, from one {@code /proc/<pid>/stat} line: {@code pid (comm) state
     * ppid …}, where comm may itself hold spaces and parentheses, so fields are counted from the last
     * {@code )}; utime and stime are the 12th and 13th after it.
     */
    static long ticks(String statLine) {
        int close = statLine.lastIndexOf(')');
        if (close < 0 || close + 2 > statLine.length()) {
            throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + statLine);
        }
        String[] f = statLine.substring(close + 2).trim().split(" +");
        if (f.length < 13) {
            throw new IllegalArgumentException("too few fields after comm in a /proc/<pid>/stat line: " + statLine);
        }
        try {
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("utime/stime not numbers in a /proc/<pid>/stat line: " + statLine, e);
        }
    }

    /** Where the figures come from, for the run's header: the file and its tick, or the JDK's reading. */
    static String source() {
        return Files.isReadable(Path.of("/proc/self/stat"))
                ? "user+system from /proc/<pid>/stat in " + nanosPerTick() / 1_000_000.0 + " ms ticks"
                : "ProcessHandle.info().totalCpuDuration()";
    }

    /** The length of one CPU-time tick, from {@code getconf CLK_TCK} (asked once). */
    static long nanosPerTick() {
        return Tick.NANOS;
    }

    private static final class Tick {
        static final long NANOS = TimeUnit.SECONDS.toNanos(1) / clockTicksPerSecond();

        /** {@code getconf CLK_TCK}; 100, what Linux has exported to user space on every architecture, if it cannot be asked. */
        private static long clockTicksPerSecond() {
            try {
                Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    long hz = Long.parseLong(out);
                    if (hz > 0) {
                        return hz;
                    }
                }
            } catch (IOException | NumberFormatException e) {
                // no getconf: Linux's value below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 100;
        }
    }

    // ---------------------------------------------------------------- formatting

    /** Three significant figures, at most three decimals: 240, 45.7, 9.70, 0.412; "—" for NaN. */
    static String micros(double us) {
        if (Double.isNaN(us)) {
            return "—";
        }
        if (us >= 100) {
            return String.format(Locale.ROOT, "%,.0f", us);
        }
        if (us >= 10) {
            return String.format(Locale.ROOT, "%.1f", us);
        }
        if (us >= 1) {
            return String.format(Locale.ROOT, "%.2f", us);
        }
        return String.format(Locale.ROOT, "%.3f", us);
    }

    /** A 0..1 share as whole per cent, "12" (the JIT share in every output); "—" for NaN. */
    static String percent(double share) {
        return Double.isNaN(share) ? "—" : String.format(Locale.ROOT, "%.0f", share * 100);
    }

    /** {@code us} rounded for JSON to three decimals (nanosecond); NaN is left out by the caller. */
    static double rounded(double us) {
        return Math.round(us * 1000) / 1000.0;
    }
}

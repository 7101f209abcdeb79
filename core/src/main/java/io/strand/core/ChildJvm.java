package io.strand.core;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A Java main class in a child JVM (thread-safe: any thread, and a concurrent static registry of the
 * live children), with this JVM's classpath and the Chronicle flags: the one launcher behind every
 * crash test that SIGKILLs a writer or the server (the companion of {@link FailPoints}: a child
 * armed with {@code -Dstrand.failpoint=…} halts with {@value #HALTED}), and behind
 * {@code strand bench}, which loads a server from another process. It lives in core's main sources
 * because the bench (tools, main code) uses it as well as the tests of every module.
 *
 * <p>Thread-safe as far as {@link Process} is: kill, wait and exit value from any thread. The
 * child's output has one reader: either the caller through {@link #stdout()}, or
 * {@link #awaitLine}, which drains it on a virtual thread so the child never blocks on a full pipe.
 */
public final class ChildJvm implements AutoCloseable {
    /** The exit code of a child halted by {@link FailPoints#hit} or killed by SIGKILL (128 + 9). */
    public static final int HALTED = 137;
    private static final int OUTPUT_TAIL_LINES = 40;
    private static final long KILL_WAIT_SECONDS = 30;

    /** Children started and not yet closed, for {@link #dumpThreadsOfLiveChildren}. */
    private static final java.util.Set<ChildJvm> LIVE = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Process process;
    private final BufferedReader stdout;

    private ChildJvm(Process process) {
        this.process = process;
        this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        LIVE.add(this);
        process.onExit().thenRun(() -> LIVE.remove(this)); // an exited child is never dumped
    }

    /**
     * Writes a thread dump of every child still running, virtual threads included ({@code jcmd
     * Thread.dump_to_file}), beside its output copy ({@code <pid>-threads-<millis>.txt} in the
     * {@code strand.test.childLogs} directory, else the temp directory), and says where. For a test
     * whose request to a child timed out: the dump shows what the child was waiting on, which the
     * test's own stack cannot. Never throws; a dump that fails is named with its reason.
     */
    public static String dumpThreadsOfLiveChildren() {
        StringBuilder out = new StringBuilder();
        for (ChildJvm child : LIVE) {
            long pid = child.pid();
            if (!child.alive() || stopped(pid)) {
                continue; // a stopped (SIGSTOP) JVM cannot answer jcmd
            }
            try {
                String logs = System.getProperty("strand.test.childLogs");
                String dir = logs == null || logs.isBlank() ? System.getProperty("java.io.tmpdir") : logs;
                java.nio.file.Files.createDirectories(Path.of(dir));
                Path file = Path.of(dir, pid + "-threads-" + System.currentTimeMillis() + ".txt").toAbsolutePath();
                Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                        String.valueOf(pid), "Thread.dump_to_file", "-format=text", file.toString())
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                boolean done = jcmd.waitFor(10, TimeUnit.SECONDS);
                if (!done) {
                    jcmd.destroyForcibly();
                }
                out.append(out.isEmpty() ? "" : "; ").append("child ").append(pid).append(done && jcmd.exitValue() == 0
                        ? ": threads in " + file : ": no thread dump (jcmd " + (done ? "exit " + jcmd.exitValue() : "timed out") + ")");
            } catch (IOException | RuntimeException e) {
                out.append(out.isEmpty() ? "" : "; ").append("child ").append(pid).append(": no thread dump (").append(e).append(')');
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return out.isEmpty() ? "no child running" : out.toString();
    }

    /** A launch of {@code mainClass}, configured by the builder and started by {@link Builder#start}. */
    public static Builder java(String mainClass) {
        return new Builder(mainClass);
    }

    /** How to start one child; not thread-safe, used by the one thread that launches it. */
    public static final class Builder {
        private final String mainClass;
        private String heap = "512m";
        private boolean fastStart;
        private final List<String> jvmArgs = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private final List<String> launcher = new ArrayList<>();
        private Path output;
        private Path stderr;

        private Builder(String mainClass) {
            this.mainClass = mainClass;
        }

        /** {@code -Xmx} of the child, {@code 512m} unless set; a later {@code -Xmx} in {@link #jvmArgs} wins. */
        public Builder heap(String value) {
            this.heap = value;
            return this;
        }

        /** For a short-lived writer: C1 only and the serial collector, so it starts fast rather than peaks. */
        public Builder fastStart() {
            this.fastStart = true;
            return this;
        }

        /** JVM options after the Chronicle flags, e.g. {@code -Dstrand.failpoint=roll.afterUpload}. */
        public Builder jvmArgs(List<String> values) {
            jvmArgs.addAll(values);
            return this;
        }

        /** Arguments of the main class, appended in order. */
        public Builder args(List<String> values) {
            args.addAll(values);
            return this;
        }

        public Builder args(String... values) {
            return args(Arrays.asList(values));
        }

        /**
         * Runs the java command under {@code command}, e.g. {@code ip netns exec NS} for a test that
         * cuts a child's network; the launcher must exec java, so the child's pid is the JVM's.
         */
        public Builder under(List<String> command) {
            launcher.addAll(command);
            return this;
        }

        /** Stdout and stderr together into {@code file} instead of a pipe. */
        public Builder outputTo(Path file) {
            this.output = file;
            return this;
        }

        /** Stderr into {@code file}; stdout stays a pipe read through {@link #stdout()}. */
        public Builder stderrTo(Path file) {
            this.stderr = file;
            return this;
        }

        /** The command line, for {@link #start} and for messages. */
        public List<String> command() {
            List<String> cmd = new ArrayList<>(launcher);
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.add("-Xmx" + heap);
            cmd.addAll(words(jvmFlags()));
            if (fastStart) {
                cmd.add("-XX:TieredStopAtLevel=1");
                cmd.add("-XX:+UseSerialGC");
            }
            cmd.addAll(jvmArgs);
            cmd.add("-cp");
            cmd.add(classPath());
            cmd.add(mainClass);
            cmd.addAll(args);
            return cmd;
        }

        public ChildJvm start() throws IOException {
            ProcessBuilder pb = new ProcessBuilder(command());
            if (output != null) {
                pb.redirectErrorStream(true).redirectOutput(output.toFile());
            } else if (stderr != null) {
                pb.redirectError(stderr.toFile());
            } else {
                pb.redirectErrorStream(true);
            }
            return new ChildJvm(pb.start());
        }
    }

    /** JVM options written as one string (a property or an environment variable), one per word; none for null or blank. */
    public static List<String> words(String options) {
        return options == null ? List.of() : Arrays.stream(options.trim().split("\\s+")).filter(f -> !f.isBlank()).toList();
    }

    /** The Chronicle flags: from the build (tests) or the launcher (the CLI sets strand.jvmFlags too), else this JVM's own. */
    public static String jvmFlags() {
        String flags = System.getProperty("strand.jvmFlags");
        if (flags != null && !flags.isBlank()) {
            return flags;
        }
        return String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--add-") || a.startsWith("--enable-native") || a.startsWith("--sun-misc")
                        || a.startsWith("-Dchronicle"))
                .toList());
    }

    /** This JVM's classpath without empty entries (an empty entry would add the working directory). */
    private static String classPath() {
        return String.join(File.pathSeparator, Arrays.stream(System.getProperty("java.class.path")
                .split(File.pathSeparator)).filter(e -> !e.isEmpty()).toList());
    }

    public Process process() {
        return process;
    }

    public long pid() {
        return process.pid();
    }

    /** The child's stdout (with stderr unless redirected), for a caller that reads it line by line itself. */
    public BufferedReader stdout() {
        return stdout;
    }

    /**
     * Where the child's whole output is copied when the system property {@code strand.test.childLogs}
     * names a directory (the test build sets {@code target/child-logs}): {@code <pid>.log}, so a
     * failed fault test can be read afterwards; null without the property.
     */
    private java.io.PrintWriter outputCopy() throws IOException {
        String dir = System.getProperty("strand.test.childLogs");
        if (dir == null || dir.isBlank()) {
            return null;
        }
        java.nio.file.Path d = java.nio.file.Path.of(dir);
        java.nio.file.Files.createDirectories(d);
        return new java.io.PrintWriter(java.nio.file.Files.newBufferedWriter(d.resolve(process.pid() + ".log")), true);
    }

    /**
     * Drains the child's output on a virtual thread until it ends and returns the rest of the first
     * line that starts with {@code prefix}. A child that exits first or stays silent for
     * {@code timeout} is killed, and the IOException carries its last output lines.
     */
    public String awaitLine(String prefix, Duration timeout) throws IOException {
        CompletableFuture<String> found = new CompletableFuture<>();
        ArrayDeque<String> tail = new ArrayDeque<>(); // the last lines before the match, to say why it failed
        Thread.ofVirtual().name("child-" + process.pid() + "-output").start(() -> {
            try (java.io.PrintWriter copy = outputCopy()) {
                String line;
                while ((line = stdout.readLine()) != null) {
                    if (copy != null) {
                        copy.println(line);
                    }
                    if (!found.isDone() && line.startsWith(prefix)) {
                        found.complete(line.substring(prefix.length()));
                    }
                    if (!found.isDone()) {
                        synchronized (tail) {
                            if (tail.size() == OUTPUT_TAIL_LINES) {
                                tail.removeFirst();
                            }
                            tail.addLast(line);
                        }
                    }
                }
            } catch (IOException ignored) {
                // the child died
            }
            synchronized (tail) {
                found.completeExceptionally(new IOException("child exited before printing '" + prefix
                        + "'; its last output:\n" + String.join("\n", tail)));
            }
        });
        try {
            return found.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            kill();
            Throwable cause = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
            if (cause instanceof java.util.concurrent.TimeoutException) {
                synchronized (tail) {
                    cause = new IOException("no '" + prefix + "' from the child in " + timeout
                            + "; its last output:\n" + String.join("\n", tail));
                }
            }
            throw cause instanceof IOException io ? io : new IOException(cause.toString(), cause);
        }
    }

    /**
     * SIGKILL, no shutdown hook runs; waits up to 30 s for it to die. Through the process handle, so
     * (unlike {@link Process#destroyForcibly}) our end of the pipe stays open and lines the child
     * wrote before it died can still be read.
     */
    public void kill() {
        process.toHandle().destroyForcibly();
        try {
            process.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGTERM, a clean shutdown; waits up to 30 s and returns the exit code. */
    public int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("child " + process.pid() + " still running 30 s after SIGTERM");
        }
        return process.exitValue();
    }

    /** True when the child exited within {@code timeout}. */
    public boolean waitFor(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public int exitValue() {
        return process.exitValue();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** True when {@code /proc} says the process is stopped (state T); false when it cannot tell. */
    private static boolean stopped(long pid) {
        try {
            String stat = java.nio.file.Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
            int end = stat.lastIndexOf(')');
            return end > 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'T';
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Kills the child if it still runs: a test never leaves a writer behind. */
    @Override
    public void close() {
        LIVE.remove(this);
        if (process.isAlive()) {
            kill();
        }
    }
}

package io.strand.app;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The real server in a child JVM with this JVM's classpath and the Chronicle flags, so crash tests
 * can SIGKILL it and benchmarks can load it from another process.
 */
public final class ServerProcess implements AutoCloseable {
    /** A fresh server starts in 1–3 s; a 2-core box running other builds beside the tests has taken 47 s. */
    private static final long START_TIMEOUT_SECONDS = 120;
    private static final int OUTPUT_TAIL_LINES = 40;
    public final Process process;
    public final String url;

    private ServerProcess(Process process, String url) {
        this.process = process;
        this.url = url;
    }

    public static ServerProcess start(Path data, List<String> extraArgs, List<String> jvmProps) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        for (String flag : jvmFlags().split("\\s+")) {
            if (!flag.isBlank()) {
                cmd.add(flag);
            }
        }
        cmd.addAll(jvmProps);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("io.strand.app.Main");
        cmd.addAll(List.of("--port", "0", "--data", data.toString()));
        cmd.addAll(extraArgs);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> url = new CompletableFuture<>();
        java.util.ArrayDeque<String> tail = new java.util.ArrayDeque<>(); // the last lines, to say why a start failed
        Thread.ofVirtual().start(() -> {
            try {
                String line;
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("strand listening on ")) {
                        url.complete(line.substring("strand listening on ".length()).trim());
                    }
                    if (!url.isDone()) {
                        if (tail.size() == OUTPUT_TAIL_LINES) {
                            tail.removeFirst();
                        }
                        tail.addLast(line);
                    }
                }
            } catch (IOException ignored) {
                // the child died
            }
            url.completeExceptionally(new IOException("child exited before listening; its last output:\n"
                    + String.join("\n", tail)));
        });
        try {
            return new ServerProcess(p, url.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS));
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IOException("child server did not start: " + e.getMessage(), e);
        }
    }

    /** The Chronicle flags: from the build (tests) or the launcher (the CLI sets strand.jvmFlags too). */
    static String jvmFlags() {
        String flags = System.getProperty("strand.jvmFlags");
        if (flags != null && !flags.isBlank()) {
            return flags;
        }
        return String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--add-") || a.startsWith("--enable-native") || a.startsWith("--sun-misc") || a.startsWith("-Dchronicle"))
                .toList());
    }

    /** SIGKILL: no shutdown hook runs. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM: a clean shutdown. */
    public int terminate() throws InterruptedException {
        process.destroy();
        process.waitFor(30, TimeUnit.SECONDS);
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}

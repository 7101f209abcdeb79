package io.strand.app;

import io.strand.core.ChildJvm;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The real server ({@link Main}) in a child JVM on a random port, so crash tests can SIGKILL it and
 * {@code strand bench} can load it from another process. A thin wrapper over core's
 * {@link ChildJvm} that knows the server's arguments and its {@code strand listening on} line;
 * it stays in main sources because the bench (tools) starts its server with it.
 *
 * <p>Thread-safe as {@link ChildJvm} is.
 */
public final class ServerProcess implements AutoCloseable {
    /** A fresh server starts in 1–3 s; a 2-core box running other builds beside the tests has taken 47 s. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final String LISTENING = "strand listening on ";
    public final Process process;
    public final String url;
    private final ChildJvm jvm;

    private ServerProcess(ChildJvm jvm, String url) {
        this.jvm = jvm;
        this.process = jvm.process();
        this.url = url;
    }

    /** Starts the server on {@code data} with {@code extraArgs}, JVM options {@code jvmProps}, and waits until it listens. */
    public static ServerProcess start(Path data, List<String> extraArgs, List<String> jvmProps) throws IOException {
        return start(data, extraArgs, jvmProps, START_TIMEOUT, List.of());
    }

    /**
     * As {@link #start(Path, List, List)}, waiting up to {@code startTimeout} for it to listen (a
     * cluster node opening a store set and a Raft group per shard while its peers start beside it).
     */
    public static ServerProcess start(Path data, List<String> extraArgs, List<String> jvmProps, Duration startTimeout)
            throws IOException {
        return start(data, extraArgs, jvmProps, startTimeout, List.of());
    }

    /** {@link #start(Path, List, List)} with the JVM run under {@code launcher} ({@link ChildJvm.Builder#under}). */
    public static ServerProcess start(Path data, List<String> extraArgs, List<String> jvmProps, List<String> launcher)
            throws IOException {
        return start(data, extraArgs, jvmProps, START_TIMEOUT, launcher);
    }

    /** The general form: a start timeout and a launcher the JVM runs under. */
    public static ServerProcess start(Path data, List<String> extraArgs, List<String> jvmProps, Duration startTimeout,
                                      List<String> launcher) throws IOException {
        ChildJvm jvm = ChildJvm.java(Main.class.getName()).heap("512m").jvmArgs(jvmProps).under(launcher)
                .args("--port", "0", "--data", data.toString()).args(extraArgs).start();
        try {
            return new ServerProcess(jvm, jvm.awaitLine(LISTENING, startTimeout).trim());
        } catch (IOException e) {
            throw new IOException("child server did not start: " + e.getMessage(), e);
        }
    }

    /** SIGKILL: no shutdown hook runs. */
    public void kill() {
        jvm.kill();
    }

    /** SIGTERM: a clean shutdown; the exit code. */
    public int terminate() throws InterruptedException {
        return jvm.terminate();
    }

    @Override
    public void close() {
        jvm.close();
    }
}

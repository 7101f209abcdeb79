package io.strand.app;

import io.strand.app.auth.Authenticator;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.cluster.ClusterAuth;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the server: {@code --port 0 --data DIR …} (the SPEC §10 flags) over {@code STRAND_*}
 * environment variables. An unknown flag is a usage error (exit status 2) that lists the valid ones. The {@code strand serve} command of the CLI calls {@link #serve}.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length == 1 && ("--help".equals(args[0]) || "-h".equals(args[0]))) {
            System.out.println(usage());
            return;
        }
        ServerConfig config;
        try {
            config = ServerConfig.from(settings(args, System.getenv()));
        } catch (IllegalArgumentException e) { // UsageError, and a value ServerConfig refuses
            System.err.println("strand: " + e.getMessage());
            System.err.flush();
            System.exit(2);
            return;
        }
        serve(config);
    }

    /** A command line the server does not understand; the message lists the valid flags. */
    public static final class UsageError extends IllegalArgumentException {
        UsageError(String problem) {
            super(problem + "\n" + usage());
        }
    }

    /**
     * The settings map: {@code env}, overridden by {@code args}. Each {@code --name value} flag is the
     * setting {@code STRAND_NAME} of {@link ServerConfig#keys()}; a flag without a value (last, or
     * followed by another flag) means {@code true}.
     *
     * @throws UsageError for a flag that is no setting, or an argument that is no flag
     */
    public static Map<String, String> settings(String[] args, Map<String, String> env) {
        Map<String, String> values = new HashMap<>(env);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new UsageError("unexpected argument '" + a + "': settings are flags like --port 8080");
            }
            String key = key(a);
            if (key == null) {
                throw new UsageError("unknown flag " + a);
            }
            boolean flag = i + 1 >= args.length || args[i + 1].startsWith("--");
            values.put(key, flag ? "true" : args[++i]);
        }
        return values;
    }

    /** The setting a flag names, null when none: flags are lower case, words joined by '-'. */
    private static String key(String flag) {
        String name = flag.substring(2);
        if (name.isEmpty() || !name.equals(name.toLowerCase(Locale.ROOT)) || name.contains("_")) {
            return null;
        }
        String key = "STRAND_" + name.replace('-', '_').toUpperCase(Locale.ROOT);
        return ServerConfig.keys().contains(key) ? key : null;
    }

    private static String flag(String key) {
        return "--" + key.substring("STRAND_".length()).toLowerCase(Locale.ROOT).replace('_', '-');
    }

    static String usage() {
        StringBuilder sb = new StringBuilder("usage: strand-server [--flag value]…  (each flag also reads from its STRAND_* variable)\nflags:");
        for (String key : ServerConfig.keys()) {
            String def = ServerConfig.DEFAULTS.get(key);
            sb.append("\n  ").append(flag(key)).append(def == null ? "" : " (default " + def + ")");
        }
        return sb.toString();
    }

    /**
     * Has the JDK wait for socket readiness on its platform poller threads ({@code jdk.pollerMode=1}),
     * unless the JVM was started with a {@code -Djdk.pollerMode} of its own. Called before any socket is
     * used: the JDK reads the property once, when the first virtual thread blocks on one.
     *
     * <p>JDK 25's default on Linux (mode 2) runs the pollers as virtual threads that a master platform
     * poller wakes: a request arriving on an idle socket is one more thread hand-off (a carrier woken
     * for the sub-poller, then again for the socket's reader), and on this VM a hand-off's context switch is
     * the largest cost of a small request ({@code perf}: 16 % of the server's samples in {@code futex} on
     * the carriers under {@code strand bench read-pagination}). Measured with {@code ./strand bench
     * --warmup 15 append-serial append-concurrent read-pagination live-tail incr-contended}, mode 1 and
     * the default alternating ({@code docs/measurements.md}, "Single node").
     */
    static void usePlatformPollers() {
        if (System.getProperty("jdk.pollerMode") == null) {
            System.setProperty("jdk.pollerMode", "1");
        }
    }

    /**
     * Starts, prints the bound address (and where the root token is), and blocks until
     * SIGTERM/SIGINT, then shuts down cleanly. Signed tokens unless {@code --auth false}.
     */
    public static void serve(ServerConfig config) throws InterruptedException {
        usePlatformPollers();
        config.logging().install();
        // single node: the data directory's own auth state, opened before the stores as always; a cluster's
        // is in its _system shard, so it is opened over the placement
        Authenticator single = config.auth() && config.cluster() == null ? JwtAuthenticator.open(config.dataDir()) : Authenticator.OPEN;
        StrandServer server = StrandServer.recoveringWith(config, placement -> config.auth() && config.cluster() != null
                ? ClusterAuth.open(config.dataDir(), placement) : single).start();
        Authenticator auth = server.authenticator();
        CountDownLatch stopped = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean closing = new java.util.concurrent.atomic.AtomicBoolean();
        Runnable stop = () -> {
            if (closing.compareAndSet(false, true)) {
                server.close();
            }
            stopped.countDown();
        };
        Runtime.getRuntime().addShutdownHook(new Thread(stop, "strand-shutdown")); // SIGINT, and any other exit
        // SIGTERM is the service manager's stop: close cleanly, then exit 0 (1 when the close failed), not the
        // JVM's 143, which systemd and the like count as a failed stop. The exit still runs every hook.
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), sig -> {
            int status = 0;
            try {
                stop.run();
            } catch (RuntimeException e) {
                System.getLogger("strand").log(System.Logger.Level.ERROR, "stopping on SIGTERM failed: " + e, e);
                status = 1;
            }
            System.exit(status);
        });
        System.out.println("strand listening on " + server.url());
        if (auth instanceof JwtAuthenticator jwt) {
            System.out.println("strand root token: " + jwt.rootTokenFile() + (jwt.keyed() ? ""
                    : " (written once the cluster's signing key is loaded from its _system shard)"));
        } else {
            System.err.println("strand: auth is off (--auth false): every request acts as root");
        }
        System.out.flush();
        stopped.await();
    }
}

package io.strand.app;

import io.strand.app.auth.Authenticator;
import io.strand.app.auth.JwtAuthenticator;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the server: {@code --port 0 --data DIR …} (the SPEC §10 flags) over {@code STRAND_*}
 * environment variables. The {@code strand serve} command of the CLI calls {@link #serve}.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> values = new HashMap<>(System.getenv());
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String key = "STRAND_" + a.substring(2).replace('-', '_').toUpperCase(Locale.ROOT);
            boolean flag = i + 1 >= args.length || args[i + 1].startsWith("--");
            values.put(key, flag ? "true" : args[++i]);
        }
        serve(ServerConfig.from(values));
    }

    /**
     * Starts, prints the bound address (and where the root token is), and blocks until
     * SIGTERM/SIGINT, then shuts down cleanly. Signed tokens unless {@code --auth false}.
     */
    /** Held so the level sticks: JUL keeps loggers weakly. Chronicle's start-up banners are INFO. */
    private static final java.util.logging.Logger CHRONICLE = java.util.logging.Logger.getLogger("net.openhft");

    public static void serve(ServerConfig config) throws InterruptedException {
        CHRONICLE.setLevel(java.util.logging.Level.WARNING);
        Authenticator auth = config.auth() ? JwtAuthenticator.open(config.dataDir()) : Authenticator.OPEN;
        StrandServer server = new StrandServer(config, auth).start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "strand-shutdown"));
        System.out.println("strand listening on " + server.url());
        if (auth instanceof JwtAuthenticator jwt) {
            System.out.println("strand root token: " + jwt.rootTokenFile());
        } else {
            System.err.println("strand: auth is off (--auth false): every request acts as root");
        }
        System.out.flush();
        stopped.await();
    }
}

package io.strand.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Loopback ports for tests that must name a port before a server binds it (a cluster list, say); any thread.
 *
 * <p>The kernel may offer a just-closed port again: seen twice in one cluster list, in the cluster module and
 * again in CI for the app's child nodes. So a port is handed out at most once per JVM.
 */
public final class FreePorts {
    private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

    private FreePorts() {
    }

    /** A port free now and not handed out before in this JVM. */
    public static int next() {
        while (true) {
            try (ServerSocket s = new ServerSocket(0)) {
                if (GIVEN.add(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

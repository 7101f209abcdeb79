package io.strand.core;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Named fault points for fault tests, armed by one system property. {@code -Dstrand.failpoint=roll.afterUpload}
 * halts the JVM (no shutdown hooks, like SIGKILL) the first time {@link #hit} reaches that point;
 * {@code -Dstrand.failpoint=wal.write:error} makes the first {@link #ioError} at that point throw an
 * {@link IOException}, as a failing device would, and the process runs on. Thread-safe: the armed
 * point is read once, and an error point fires once.
 */
public final class FailPoints {
    private static final String ARMED = System.getProperty("strand.failpoint", "");
    private static final String ERROR_SUFFIX = ":error";
    private static final AtomicBoolean ERROR_FIRED = new AtomicBoolean();

    private FailPoints() {
    }

    public static void hit(String name) {
        if (!ARMED.isEmpty() && ARMED.equals(name)) {
            System.err.println("strand: failpoint " + name + " reached, halting");
            System.err.flush();
            Runtime.getRuntime().halt(137);
        }
    }

    /** Throws once, the first time {@code name} is reached, when armed as {@code name:error}. */
    public static void ioError(String name) throws IOException {
        if (!ARMED.isEmpty() && ARMED.equals(name + ERROR_SUFFIX) && ERROR_FIRED.compareAndSet(false, true)) {
            System.err.println("strand: failpoint " + name + " reached, failing it");
            System.err.flush();
            throw new IOException("failpoint " + name);
        }
    }
}

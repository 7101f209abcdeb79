package io.strand.core;

/**
 * Named crash points for fault tests: {@code -Dstrand.failpoint=roll.afterUpload} halts the JVM
 * (no shutdown hooks, like SIGKILL) the first time that point is reached.
 */
public final class FailPoints {
    private static final String ARMED = System.getProperty("strand.failpoint", "");

    private FailPoints() {
    }

    public static void hit(String name) {
        if (!ARMED.isEmpty() && ARMED.equals(name)) {
            System.err.println("strand: failpoint " + name + " reached, halting");
            System.err.flush();
            Runtime.getRuntime().halt(137);
        }
    }
}

package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The JVM options of the servers a bench starts: their heap, the cluster JIT flags the launcher passes
 * on (cluster nodes only), then a profiling run's own {@code STRAND_BENCH_SERVER_OPTS}.
 */
class BenchServerOptionsTest {
    private static final String PROPERTY = "strand.clusterJitFlags";
    private final String before = System.getProperty(PROPERTY);

    @AfterEach
    void restore() {
        if (before == null) {
            System.clearProperty(PROPERTY);
        } else {
            System.setProperty(PROPERTY, before);
        }
    }

    @Test
    void clusterNodesShouldGetTheClusterJitFlagsAndTheSingleNodeServerShouldNot() {
        System.setProperty(PROPERTY, " -XX:CompileThresholdScaling=0.2  -XX:+UseCountedLoopSafepoints ");
        assertEquals(withProfilingOptions("-Xms1g", "-Xmx1g", "-XX:CompileThresholdScaling=0.2", "-XX:+UseCountedLoopSafepoints"),
                BenchCommand.clusterJvmOptions());
        assertEquals(withProfilingOptions("-Xms2g", "-Xmx2g"), BenchCommand.serverJvmOptions());
    }

    @Test
    void aBenchRunOutsideTheLauncherShouldStartItsNodesWithTheirHeapOnly() {
        System.clearProperty(PROPERTY);
        assertEquals(List.of(), BenchCommand.clusterJitFlags());
        assertEquals(withProfilingOptions("-Xms1g", "-Xmx1g"), BenchCommand.clusterJvmOptions());
    }

    private static List<String> withProfilingOptions(String... own) {
        List<String> expected = new ArrayList<>(List.of(own));
        String extra = System.getenv("STRAND_BENCH_SERVER_OPTS"); // a profiling run's own options come last
        if (extra != null && !extra.isBlank()) {
            expected.addAll(List.of(extra.trim().split("\\s+")));
        }
        return expected;
    }
}

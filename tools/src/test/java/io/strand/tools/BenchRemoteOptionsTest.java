package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code strand bench --server} and {@code --cluster-nodes}: the combinations that cannot work are
 * refused before anything is started or written (exit status 2, the reason named).
 */
class BenchRemoteOptionsTest {
    @Test
    void clusterNodesShouldRefuseTheOptionsThatSetUpALocalCluster() {
        assertRefused("is already running", "--cluster-nodes", "http://127.0.0.1:1", "--shards", "4");
        assertRefused("is already running", "--cluster-nodes", "http://127.0.0.1:1", "--cluster", "3");
        assertRefused("only to nodes it started", "--cluster-nodes", "http://127.0.0.1:1", "--failovers", "1");
    }

    @Test
    void remoteServersShouldRefuseTheScenariosThatStartServersOfTheirOwn() {
        assertRefused("does not run against --server or --cluster-nodes", "--server", "http://127.0.0.1:1", "ds-append-serial");
        assertRefused("does not run against --server or --cluster-nodes", "--cluster-nodes", "http://127.0.0.1:1", "roll");
    }

    @Test
    void settingsShouldTakeTheNodeCountFromTheUrls() {
        ClusterBench.Settings s = new ClusterBench.Settings(0, 1, ClusterBench.Client.leader, 0,
                List.of("http://a:1", "http://b:1", "http://c:1"), null);
        assertEquals(3, s.nodes());
        assertTrue(s.running());
        assertThrows(IllegalArgumentException.class,
                () -> new ClusterBench.Settings(0, 1, ClusterBench.Client.leader, 0, List.of(), null));
    }

    @Test
    void aRunsWorkspaceShouldBeAValidWorkspaceNameOfItsStartSecond() {
        String ws = ClusterBench.runWorkspace(Instant.parse("2026-12-07T05:04:03.999Z"));
        assertEquals("bench-20261207-050403", ws);
        assertTrue(ws.matches("[a-z0-9][a-z0-9_-]{0,62}"), "SPEC §2's workspace pattern");
    }

    @Test
    void runningClusterShouldRefuseWhatIsNotANodesBaseUrl() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RunningCluster.of(List.of("127.0.0.1:8080"), null));
        assertTrue(e.getMessage().contains("--cluster-nodes: '127.0.0.1:8080' is not a server's base URL"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RunningCluster.of(List.of("http://127.0.0.1:1"), null));
        assertTrue(e.getMessage().contains("http://127.0.0.1:1 answered GET /v1/cluster with"), e.getMessage());
    }

    private static void assertRefused(String reason, String... options) {
        String[] args = new String[options.length + 1];
        args[0] = "bench";
        System.arraycopy(options, 0, args, 1, options.length);
        // picocli prints a refusal to the err stream of the command that raised it: System.err here
        java.io.PrintStream before = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        int exit;
        try {
            exit = StrandCli.commandLine(args).execute(args);
        } finally {
            System.setErr(before);
        }
        String err = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(2, exit, String.join(" ", args) + ": " + err);
        assertTrue(err.contains(reason), err);
    }
}

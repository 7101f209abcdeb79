package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code ./strand} launcher as a user runs it (after {@code package}, so it does not
 * rebuild): {@code bench} starts its server in a child JVM that takes the Chronicle flags from the
 * {@code strand.jvmFlags} property, so the launcher must pass that property as one argument.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a blocked pipe read ignores interrupts
class LauncherIT {
    @TempDir
    Path out;

    @Test
    void benchShouldStartItsChildServerAndFinishAScenario() throws Exception {
        Path launcher = Path.of("..", "strand").toAbsolutePath().normalize();
        Process p = new ProcessBuilder("bash", launcher.toString(), "bench", "--quick", "--warmup", "0", "cas-serial",
                "--out", out.toString())
                .redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(240, TimeUnit.SECONDS), output);
        assertEquals(0, p.exitValue(), output);
        assertTrue(output.contains("CAS serial"), output);
    }

    /**
     * {@code ./strand serve} makes the server's ahead-of-time cache once (here a short training into a
     * temp file) and starts with it: the JVM says it opened that cache, and the server listens. A second
     * start uses that cache without training again; {@code STRAND_AOT=0} starts without it.
     */
    @Test
    void serveShouldTrainItsAotCacheOnceAndStartWithIt() throws Exception {
        Path cache = out.resolve("server.aot");
        String first = serveUntilListening(cache, "cas-serial", "1");
        assertTrue(first.contains("training the server's start-up cache"), first);
        assertTrue(Files.size(cache) > 1_000_000, "a cache was written: " + first);
        assertTrue(first.contains("Opened AOT cache " + cache), first);

        String second = serveUntilListening(cache, "cas-serial", "1");
        assertFalse(second.contains("training"), second);
        assertTrue(second.contains("Opened AOT cache " + cache), second);

        String without = serveUntilListening(cache, "cas-serial", "0");
        assertFalse(without.contains("training"), without);
        assertFalse(without.contains("Opened AOT cache"), without);
    }

    /**
     * {@code ./strand serve} gives a cluster node (a {@code --cluster} member list) the root pom's
     * cluster JIT flags ({@code strand.clusterJitFlags}) and a single node none of them: the JVM's own
     * list of its command-line flags says which it got. The cluster node here stops at once (its
     * member list does not name it); the JVM printed its flags before that.
     */
    @Test
    void serveShouldGiveTheClusterJitFlagsToAClusterNodeOnly() throws Exception {
        String pom = Files.readString(Path.of("..", "pom.xml"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<strand.clusterJitFlags>(.*)</strand.clusterJitFlags>").matcher(pom);
        assertTrue(m.find(), "the root pom has strand.clusterJitFlags");
        List<String> names = java.util.Arrays.stream(m.group(1).trim().split("\\s+"))
                .map(f -> f.contains("=") ? f.substring(0, f.indexOf('=') + 1) : f).toList(); // the JVM prints 0.2 as 0.200000
        assertFalse(names.isEmpty());

        String single = serveUntilListening(out.resolve("server.aot"), "cas-serial", "0");
        for (String name : names) {
            assertFalse(single.contains(name), name + " is not a single node's: " + single);
        }

        Path launcher = Path.of("..", "strand").toAbsolutePath().normalize();
        ProcessBuilder pb = new ProcessBuilder("bash", launcher.toString(), "serve", "--port", "0", "--data",
                out.resolve("node").toString(), "--node-id", "n9", "--cluster", "n1=127.0.0.1:1").redirectErrorStream(true);
        pb.environment().put("STRAND_AOT", "0");
        pb.environment().put("STRAND_JAVA_OPTS", "-XX:+PrintCommandLineFlags");
        Process p = pb.start();
        String node = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), node);
        assertTrue(p.exitValue() != 0, "a member list without this node is refused: " + node);
        for (String name : names) {
            assertTrue(node.contains(name), name + " among a cluster node's flags: " + node);
        }
    }

    /** A training that fails says so, serves without a cache, and is not tried again until the next build. */
    @Test
    void serveShouldNotRetryAFailedTrainingUntilTheNextBuild() throws Exception {
        Path cache = out.resolve("server.aot");
        String first = serveUntilListening(cache, "no-such-scenario", "1");
        assertTrue(first.contains("the training run failed"), first);
        assertFalse(Files.exists(cache), first);
        assertFalse(first.contains("Opened AOT cache"), first);

        String second = serveUntilListening(cache, "no-such-scenario", "1");
        assertFalse(second.contains("training"), second);
        assertFalse(second.contains("Opened AOT cache"), second);
    }

    /** Starts {@code ./strand serve} on a random port, reads its output up to "listening", then stops it. */
    private String serveUntilListening(Path cache, String training, String aot) throws Exception {
        Path launcher = Path.of("..", "strand").toAbsolutePath().normalize();
        ProcessBuilder pb = new ProcessBuilder("bash", launcher.toString(), "serve", "--port", "0", "--data",
                out.resolve("data").toString(), "--auth", "false").redirectErrorStream(true);
        pb.environment().put("STRAND_AOT", aot);
        pb.environment().put("STRAND_AOT_FILE", cache.toString());
        pb.environment().put("STRAND_AOT_TRAIN", training);
        // after the launcher's -Xlog:aot=off, so it wins; and the JVM prints the flags it was given
        pb.environment().put("STRAND_JAVA_OPTS", "-Xlog:aot=info -XX:+PrintCommandLineFlags");
        Process p = pb.start();
        StringBuilder output = new StringBuilder();
        try (java.io.BufferedReader r = p.inputReader(StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                output.append(line).append('\n');
                if (line.startsWith("strand listening on ")) {
                    break;
                }
            }
        } finally {
            p.toHandle().descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            p.waitFor(60, TimeUnit.SECONDS);
        }
        String said = output.toString();
        assertTrue(said.contains("strand listening on "), said);
        return said;
    }
}

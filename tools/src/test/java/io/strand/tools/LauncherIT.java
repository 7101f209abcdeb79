package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code ./strand} launcher as a user runs it (after {@code package}, so it does not
 * rebuild): {@code bench} starts its server in a child JVM that takes the Chronicle flags from the
 * {@code strand.jvmFlags} property, so the launcher must pass that property as one argument.
 */
@Timeout(300)
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
}

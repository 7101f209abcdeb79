package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The server's own flag parsing: known flags map to their {@code STRAND_*} setting, anything else is a usage error. */
class MainTest {
    @Test
    void knownFlagsShouldMapToTheirSettings() {
        Map<String, String> v = Main.settings(new String[] {"--port", "0", "--data", "/tmp/x", "--s3-path-style", "--hot-max-age", "5m"},
                Map.of("STRAND_HOST", "0.0.0.0"));
        assertEquals("0", v.get("STRAND_PORT"));
        assertEquals("/tmp/x", v.get("STRAND_DATA"));
        assertEquals("true", v.get("STRAND_S3_PATH_STYLE"));
        assertEquals("5m", v.get("STRAND_HOT_MAX_AGE"));
        assertEquals("0.0.0.0", v.get("STRAND_HOST"), "the environment fills what no flag sets");
    }

    @Test
    void everySettingShouldHaveAFlag() {
        for (String key : ServerConfig.keys()) {
            String flag = "--" + key.substring("STRAND_".length()).toLowerCase(java.util.Locale.ROOT).replace('_', '-');
            assertEquals("v", Main.settings(new String[] {flag, "v"}, Map.of()).get(key), flag);
        }
    }

    @Test
    void anUnknownFlagShouldBeAUsageErrorListingTheValidOnes() {
        for (String[] args : List.of(new String[] {"--prot", "8080"}, new String[] {"--data-dir", "/x"}, new String[] {"port", "1"},
                new String[] {"--"}, new String[] {"--PORT", "1"})) {
            Main.UsageError e = assertThrows(Main.UsageError.class, () -> Main.settings(args, Map.of()), String.join(" ", args));
            assertTrue(e.getMessage().contains(args[0]), e.getMessage());
            assertTrue(e.getMessage().contains("--port") && e.getMessage().contains("--data") && e.getMessage().contains("--cold"),
                    "lists the valid flags: " + e.getMessage());
        }
    }

    @Test
    void theServerShouldExitWithStatus2OnAnUnknownFlag() throws IOException, InterruptedException {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "io.strand.app.Main", "--prot", "8080")
                .redirectErrorStream(true).start();
        boolean exited = p.waitFor(60, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly(); // it started serving on the default port, ignoring the flag
        }
        assertTrue(exited, "the server exits instead of starting");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, p.exitValue(), out);
        assertTrue(out.contains("unknown flag --prot"), out);
        assertTrue(!out.contains("strand listening"), out);
    }
}

package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Kills a real roller at each step: a child JVM rolls seqs 11..40 into a directory store with
 * {@code -Dstrand.failpoint=…}, which halts it like SIGKILL at that step. The parent then re-runs
 * the same roll, as the hot tier does after a restart, and checks nothing is lost, duplicated or orphaned.
 */
class RollCrashTest {
    @TempDir
    Path tmp;

    /** The child: {@code RollCrashTest$Child <coldDir> <tmpDir>} rolls 11..40 after the parent's 1..10. */
    public static final class Child {
        public static void main(String[] args) {
            try (ColdStore store = new FileColdStore(Path.of(args[0]))) {
                ColdLog log = new ColdLog(store, "ws1", "crashy", new BlockCache(1 << 20),
                        ColdLogConfig.defaults(Path.of(args[1])).withBlockBytes(1024));
                log.roll(TestEntries.range(11, 40));
            }
            System.exit(0);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"roll.afterUpload", "roll.afterVerify", "roll.afterManifest"})
    @Timeout(30)
    void rollShouldRecoverWhenTheRollerIsKilledAtEachStep(String failpoint) throws Exception {
        Path cold = tmp.resolve("cold");
        Path rollTmp = tmp.resolve("roll-tmp");
        try (ColdStore store = new FileColdStore(cold)) {
            new ColdLog(store, "ws1", "crashy", new BlockCache(1 << 20),
                    ColdLogConfig.defaults(rollTmp).withBlockBytes(1024)).roll(TestEntries.range(1, 10));
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(java, "-Dstrand.failpoint=" + failpoint, "--enable-native-access=ALL-UNNAMED",
                "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp.replace(File.pathSeparator + File.pathSeparator,
                File.pathSeparator), Child.class.getName(), cold.toString(), rollTmp.toString())
                .redirectErrorStream(true).redirectOutput(tmp.resolve("child.log").toFile()).start();
        assertTrue(child.waitFor(25, TimeUnit.SECONDS), "child finished");
        String out = Files.readString(tmp.resolve("child.log"));
        assertEquals(137, child.exitValue(), "halted at the fail point: " + out);
        assertTrue(out.contains("failpoint " + failpoint), out);

        try (ColdStore store = new FileColdStore(cold)) {
            ColdLog log = new ColdLog(store, "ws1", "crashy", new BlockCache(1 << 20),
                    ColdLogConfig.defaults(rollTmp).withBlockBytes(1024));
            long committed = log.lastSeq();
            assertEquals(failpoint.equals("roll.afterManifest") ? 40 : 10, committed);
            // what the hot tier does on restart: roll again what it still holds
            log.roll(TestEntries.range(11, 40));
            assertEquals(40, log.lastSeq());
            assertEquals(List.of(1L, 11L), log.manifest().segments().stream().map(SegmentMeta::firstSeq).toList());
            TestEntries.assertSame(TestEntries.range(1, 40), log.read(1, 100, Long.MAX_VALUE));
            VerifyReport v = log.verify();
            assertTrue(v.ok(), v.toString());
        }
    }
}

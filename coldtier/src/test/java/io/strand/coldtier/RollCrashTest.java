package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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
        ChildJvm child = ChildJvm.java(Child.class.getName()).fastStart()
                .jvmArgs(List.of("-Dstrand.failpoint=" + failpoint))
                .args(cold.toString(), rollTmp.toString()).outputTo(tmp.resolve("child.log")).start();
        try (child) {
            assertTrue(child.waitFor(Duration.ofSeconds(25)), "child finished");
        }
        String out = Files.readString(tmp.resolve("child.log"));
        assertEquals(ChildJvm.HALTED, child.exitValue(), "halted at the fail point: " + out);
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

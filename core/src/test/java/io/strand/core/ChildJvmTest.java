package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ChildJvmTest {
    /** The child: prints its arguments, then {@code READY <pid>}, then waits for stdin to close or a fail point. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            System.out.println("args " + String.join(",", args));
            if (args.length > 0 && args[0].equals("exit")) {
                System.err.println("leaving early");
                System.exit(3);
            }
            System.out.println("READY " + ProcessHandle.current().pid());
            System.out.flush();
            FailPoints.hit("child.ready");
            System.in.read(); // until the parent kills it
        }
    }

    @Test
    void awaitLineShouldReturnTheRestOfTheLineWhenTheChildPrintsIt() throws Exception {
        try (ChildJvm child = ChildJvm.java(Child.class.getName()).fastStart().args("a", "b").start()) {
            assertEquals(String.valueOf(child.pid()), child.awaitLine("READY ", Duration.ofSeconds(30)));
            assertTrue(child.alive());
            child.kill();
            assertFalse(child.alive());
            assertEquals(ChildJvm.HALTED, child.exitValue());
        }
    }

    @Test
    void awaitLineShouldFailWithTheChildsOutputWhenItExitsFirst() throws Exception {
        try (ChildJvm child = ChildJvm.java(Child.class.getName()).fastStart().args("exit").start()) {
            IOException e = assertThrows(IOException.class, () -> child.awaitLine("READY ", Duration.ofSeconds(30)));
            assertTrue(e.getMessage().contains("args exit") && e.getMessage().contains("leaving early"), e.getMessage());
            assertTrue(child.waitFor(Duration.ofSeconds(10)));
            assertEquals(3, child.exitValue());
        }
    }

    @Test
    void startShouldArmTheFailPointWhenGivenAsAJvmArgument() throws Exception {
        try (ChildJvm child = ChildJvm.java(Child.class.getName()).fastStart()
                .jvmArgs(List.of("-Dstrand.failpoint=child.ready")).start()) {
            assertTrue(child.waitFor(Duration.ofSeconds(30)), "the child halted by itself");
            assertEquals(ChildJvm.HALTED, child.exitValue());
            String out = String.join("\n", child.stdout().lines().toList());
            assertTrue(out.contains("READY ") && out.contains("failpoint child.ready reached"), out);
        }
    }

    /** A test whose request to a child timed out learns what the child waited on: its threads, in a file it names. */
    @Test
    void dumpThreadsOfLiveChildrenShouldWriteEachRunningChildsThreadsToAFileItNames() throws Exception {
        try (ChildJvm child = ChildJvm.java(Child.class.getName()).fastStart().start()) {
            child.awaitLine("READY ", Duration.ofSeconds(30));
            String said = ChildJvm.dumpThreadsOfLiveChildren();
            String prefix = "child " + child.pid() + ": threads in ";
            int at = said.indexOf(prefix);
            assertTrue(at >= 0, said);
            int end = said.indexOf(';', at);
            java.nio.file.Path file = java.nio.file.Path.of(said.substring(at + prefix.length(), end < 0 ? said.length() : end));
            String dump = java.nio.file.Files.readString(file);
            assertTrue(dump.contains("ChildJvmTest$Child.main"), "the child's main thread, waiting on stdin: " + dump);
            java.nio.file.Files.delete(file);
            child.close();
            assertFalse(ChildJvm.dumpThreadsOfLiveChildren().contains("child " + child.pid()), "a closed child is not dumped");
        }
    }
}

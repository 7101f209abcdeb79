package net.openhft.chronicle.analytics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.strand.core.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import net.openhft.chronicle.core.analytics.AnalyticsFacade;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stand-in in a child JVM of its own (so no property of this JVM is touched), started with
 * {@code chronicle.analytics.disable=false}: chronicle-core finds the class, loading it turns the flag
 * back on, and a real queue opens and takes an append (its analytics holder initialised on the mute path).
 */
public class AnalyticsTest {

    /** The child: asks chronicle-core what every queue open asks, then opens a queue in {@code args[0]}. */
    public static void main(String[] args) {
        boolean enabled = AnalyticsFacade.isEnabled();
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(args[0]).build();
             ExcerptAppender appender = queue.createAppender()) {
            appender.writeText("x");
        }
        System.out.println("result enabled=" + enabled + " disable=" + System.getProperty(Analytics.DISABLE) + " queue=written");
    }

    @Test
    void chronicleShouldFindTheClassAndStayMuteEvenWhenStartedWithTheFlagOff(@TempDir Path dir) throws Exception {
        try (ChildJvm child = ChildJvm.java(AnalyticsTest.class.getName()).fastStart()
                .jvmArgs(List.of("-D" + Analytics.DISABLE + "=false")).args(dir.resolve("queue").toString()).start()) {
            assertEquals("enabled=false disable=true queue=written", child.awaitLine("result ", Duration.ofSeconds(60)));
        }
    }
}

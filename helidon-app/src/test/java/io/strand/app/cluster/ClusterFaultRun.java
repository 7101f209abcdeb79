package io.strand.app.cluster;

import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.ClusterProbe;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The base of the cluster fault ITs (majority, replace, catch-up, pause, partition): three server
 * nodes × {@value #SHARDS} shards started once per class in a temp dir, the {@link ClusterProbe}
 * that talks to them, and the steps those ITs share. A subclass picks the nodes' JVM options and
 * network by overriding {@link #jvmArgs()} and {@link #net()}; its own {@code @BeforeAll} runs once
 * the nodes are up, its own {@code @AfterAll} before they are killed. Each subclass also carries
 * {@link ReliabilityOnly} (JUnit does not inherit the condition): these runs take minutes and run
 * only with {@code -Preliability}, where each test is one row of the reliability table (its history
 * check's counts, through {@link ClusterProbe#checkHistory(String, List, List, ReliabilityRow)}).
 * Owned by the test thread.
 */
@Tag("reliability")
@ExtendWith(ReliabilityReport.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ClusterFaultRun {
    /** Runs the class only in {@code mvn -B verify -Preliability} (which sets {@code strand.reliability.scale}). */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @EnabledIfSystemProperty(named = "strand.reliability.scale", matches = "[1-9][0-9]*",
            disabledReason = "a long cluster fault run (three server JVMs): mvn -B verify -Preliability")
    @interface ReliabilityOnly {
    }

    static final int SHARDS = 4;
    static final List<String> NODES = List.of("n1", "n2", "n3");
    private ClusterNodes.Net net;
    ClusterNodes nodes;
    ClusterProbe probe;

    /** JVM options of every node; none by default. */
    List<String> jvmArgs() {
        return List.of();
    }

    /** Where the nodes listen and how they are launched; loopback by default. Called once, before any node starts. */
    ClusterNodes.Net net() throws Exception {
        return ClusterNodes.Net.LOOPBACK;
    }

    /** The hidden options that make the leader snapshot every {@code entries} entries and purge its 64 KiB log segments. */
    static List<String> snapshotEvery(int entries) {
        return List.of("-Dstrand.cluster.snapshotEvery=" + entries, "-Dstrand.cluster.snapshotDefer=1",
                "-Dstrand.cluster.segmentBytes=" + (64 << 10));
    }

    @BeforeAll
    final void startNodes(@TempDir Path dir) throws Exception {
        net = net();
        nodes = new ClusterNodes(dir, NODES.size(), SHARDS, ClusterProbe.SMALL_DOC_MAPS, jvmArgs(), net);
        nodes.startAll();
        probe = new ClusterProbe(nodes, SHARDS);
    }

    @AfterAll
    final void stopNodes() throws Exception {
        if (nodes != null) {
            nodes.close();
        }
        if (net instanceof AutoCloseable links) { // after the nodes: they run inside it
            links.close();
        }
    }

    /** Each shard's commit index as node {@code via} reports it. */
    long[] commitIndexes(String via) {
        long[] out = new long[SHARDS];
        for (int k = 0; k < SHARDS; k++) {
            out[k] = probe.commitIndex(via, k);
        }
        return out;
    }

    /** The nodes other than {@code id}, in order. */
    static List<String> othersThan(String id) {
        List<String> others = new ArrayList<>(NODES);
        others.remove(id);
        return others;
    }

    /** Ten appends to {@code ws}'s log through every node (tags {@code before}), each acknowledged. */
    List<ClusterProbe.Acked> appendBefore(String ws) throws InterruptedException {
        return new ArrayList<>(probe.appendMany(NODES, List.of(ws), "log", 10, "before", 100, Duration.ofSeconds(60)));
    }
}

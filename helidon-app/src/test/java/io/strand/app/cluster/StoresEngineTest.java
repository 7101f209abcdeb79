package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.stores.ReplicatedStreams;
import io.strand.app.stores.Stores;
import io.strand.core.Durability;
import io.strand.core.Json;
import io.strand.docstore.DocStore;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.ReplicatedTrims;
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoresEngineTest {
    /** For tests that send no Durable Streams write. */
    private static final ReplicatedStreams NO_STREAMS = new ReplicatedStreams() {
        @Override
        public byte[] apply(Stores stores, byte[] call, long stampedAtMillis) {
            throw new AssertionError("no Durable Streams write expected");
        }

        @Override
        public void beforeSnapshot(Stores stores) {
        }

        @Override
        public void closing(Stores stores) {
        }
    };

    /** A ds command reaches the endpoint with the leader's stamp once every earlier command took effect; its answer is the reply. */
    @Test
    void dsCommandShouldApplyAfterEarlierCommandsWithTheLeadersStamp(@TempDir Path dir) {
        java.util.List<String> seen = new java.util.ArrayList<>();
        StoresEngine e = new StoresEngine(open(dir), () -> { }, new ReplicatedStreams() {
            @Override
            public byte[] apply(Stores stores, byte[] call, long stampedAtMillis) {
                long head = stores.logs().info("w", "chat").orElseThrow().head();
                seen.add(new String(call, StandardCharsets.UTF_8) + "@" + stampedAtMillis + " head " + head);
                return new byte[] {42};
            }

            @Override
            public void beforeSnapshot(Stores stores) {
                seen.add("snapshot");
            }

            @Override
            public void closing(Stores stores) {
                seen.add("closing");
            }
        });
        try {
            for (int n = 1; n <= 3; n++) {
                e.apply(1_000, ShardCommands.append("w", "chat", AppendRequest.of(String.valueOf(n).getBytes(StandardCharsets.UTF_8))));
            }
            byte[] reply = e.apply(2_000, ShardCommands.ds("w", "call".getBytes(StandardCharsets.UTF_8))).join();
            org.junit.jupiter.api.Assertions.assertArrayEquals(new byte[] {42}, ShardCommands.readDs(reply));
            e.snapshotTo(dir.resolve("snap"));
        } catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        } finally {
            e.close();
        }
        assertEquals(java.util.List.of("call@2000 head 3", "snapshot", "closing"), seen);
    }
    private static final ServerConfig CONFIG = ServerConfig.from(Map.of("STRAND_DOC_CAPACITY", "20000"));

    @Test
    void snapshotToShouldLeaveOutTheDocMapAndReopenWithEveryDocAndEntry(@TempDir Path dir) throws Exception {
        Path live = dir.resolve("live");
        Path snapshot = dir.resolve("snapshot");
        Files.createDirectories(snapshot);
        StoresEngine engine = new StoresEngine(open(live), () -> { }, NO_STREAMS);
        try {
            for (int i = 0; i < 3; i++) {
                engine.apply(1_000 + i, ShardCommands.append("w", "chat",
                        AppendRequest.of(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8)))).join();
                engine.apply(1_000 + i, ShardCommands.doc("incr", "w", "counter", Json.parse("{\"path\":\"n\",\"delta\":2}"))).join();
            }
            engine.snapshotTo(snapshot);
        } finally {
            engine.close();
        }
        assertTrue(Files.exists(live.resolve("docs").resolve(DocStore.MAP_FILE)));
        // the map is sized by capacity (173 MB at the default 200,000 docs): rebuilt from docs.snapshot, never copied
        assertFalse(Files.exists(snapshot.resolve("docs").resolve(DocStore.MAP_FILE)), "the map view is rebuilt, not copied");
        assertFalse(Files.exists(snapshot.resolve("docs").resolve(DocStore.CHECKPOINT_FILE)));

        try (Stores reopened = open(snapshot)) {
            assertEquals(6, reopened.docs().get("w", "counter").orElseThrow().value().path("n").asLong());
            assertEquals(3, reopened.logs().info("w", "chat").orElseThrow().entries());
        }
    }

    @Test
    void closeShouldTellTheListenerBeforeTheStoresClose(@TempDir Path dir) {
        Stores stores = open(dir);
        AtomicInteger toldWhileOpen = new AtomicInteger();
        StoresEngine engine = new StoresEngine(stores, () -> {
            // what reads the stores must still be able to, and let go, here
            stores.logs().list("w", null, 10);
            toldWhileOpen.incrementAndGet();
        }, NO_STREAMS);
        engine.close();
        assertEquals(1, toldWhileOpen.get());
    }

    /** Two replicas applying the same trims and policy answer alike and hold the same first, also after a snapshot. */
    @Test
    void trimAndRetentionCommandsShouldAnswerAlikeOnEveryReplicaAndTravelInASnapshot(@TempDir Path dir) throws Exception {
        Path snapshot = Files.createDirectories(dir.resolve("snapshot"));
        StoresEngine a = new StoresEngine(open(dir.resolve("a")), () -> { }, NO_STREAMS);
        StoresEngine b = new StoresEngine(open(dir.resolve("b")), () -> { }, NO_STREAMS);
        try {
            for (StoresEngine e : new StoresEngine[] {a, b}) {
                for (int n = 1; n <= 5; n++) {
                    e.apply(1_000, ShardCommands.append("w", "chat", AppendRequest.of(String.valueOf(n).getBytes(StandardCharsets.UTF_8)))).join();
                }
            }
            for (StoresEngine e : new StoresEngine[] {a, b}) {
                assertEquals(new Retention.Trimmed(3, 5), ShardCommands.readTrimmed(e.apply(1_001, ShardCommands.trim("w", "chat", 3, false)).join()));
                StrandException past = assertThrows(StrandException.class,
                        () -> ShardCommands.readTrimmed(e.apply(1_002, ShardCommands.trim("w", "chat", 7, false)).join()));
                assertEquals(ErrorCode.BAD_REQUEST, past.code());
                assertEquals(5L, ((Number) past.extras().get("head")).longValue());
                StrandException missing = assertThrows(StrandException.class,
                        () -> ShardCommands.readTrimmed(e.apply(1_003, ShardCommands.trim("w", "none", 1, false)).join()));
                assertEquals(ErrorCode.NOT_FOUND, missing.code());
                // the leader's policy trim is clamped to head+1, never refused
                assertEquals(new Retention.Trimmed(6, 5), ShardCommands.readTrimmed(e.apply(1_004, ShardCommands.trim("w", "chat", 9, true)).join()));
                ShardCommands.readEmpty(e.apply(1_005, ShardCommands.retention("w", "chat", new RetentionPolicy(null, 10L, null))).join());
                assertEquals(6, e.stores().logs().info("w", "chat").orElseThrow().first());
            }
            a.snapshotTo(snapshot);
        } finally {
            a.close();
            b.close();
        }
        try (Stores reopened = open(snapshot)) {
            var info = reopened.logs().info("w", "chat").orElseThrow();
            assertEquals(6, info.first());
            assertEquals(10L, info.retention().maxEntries());
        }
    }

    /**
     * A trim applied right after appends it did not wait for goes by every one of them: the appends
     * take effect in apply order (not after an open off the writer) and the trim's bound is the head
     * written in the writer, not the committed head a group publishes at its end (before: 400 "past
     * head+1 (head 1)" here; in a cluster, a restarted replica's first 101 against the others' 111).
     */
    @Test
    void aTrimAppliedRightAfterAppendsToAClosedLogShouldSeeThem(@TempDir Path dir) {
        StoresEngine e = new StoresEngine(open(dir), () -> { }, NO_STREAMS);
        try {
            java.util.List<CompletableFuture<byte[]>> appends = new java.util.ArrayList<>();
            for (int n = 1; n <= 5; n++) {
                appends.add(e.apply(1_000, ShardCommands.append("w", "chat", AppendRequest.of(String.valueOf(n).getBytes(StandardCharsets.UTF_8)))));
            }
            assertEquals(new Retention.Trimmed(6, 5), ShardCommands.readTrimmed(e.apply(1_001, ShardCommands.trim("w", "chat", 6, false)).join()));
            for (int n = 1; n <= 5; n++) {
                assertEquals(n, ShardCommands.readAppend(appends.get(n - 1).join(), "quorum").firstSeq());
            }
        } finally {
            e.close();
        }
    }

    private static Stores open(Path dir) {
        Stores stores = Stores.open("test", CONFIG, dir, Durability.OS, 1, new StrandMetrics(), null);
        stores.startRetention(RetentionPolicy.UNLIMITED, Duration.ofSeconds(30), new ReplicatedTrims() {
            @Override
            public boolean leads() {
                return false;
            }

            @Override
            public CompletableFuture<?> proposeTrim(String ws, String log, long before) {
                throw new AssertionError("a follower proposes no trim");
            }
        });
        return stores;
    }
}

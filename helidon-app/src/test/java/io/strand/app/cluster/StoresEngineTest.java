package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.stores.Stores;
import io.strand.core.Durability;
import io.strand.core.Json;
import io.strand.docstore.DocStore;
import io.strand.logtier.AppendRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoresEngineTest {
    private static final ServerConfig CONFIG = ServerConfig.from(Map.of("STRAND_DOC_CAPACITY", "20000"));

    @Test
    void snapshotToShouldLeaveOutTheDocMapAndReopenWithEveryDocAndEntry(@TempDir Path dir) throws Exception {
        Path live = dir.resolve("live");
        Path snapshot = dir.resolve("snapshot");
        Files.createDirectories(snapshot);
        StoresEngine engine = new StoresEngine(open(live), () -> { });
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
        });
        engine.close();
        assertEquals(1, toldWhileOpen.get());
    }

    private static Stores open(Path dir) {
        return Stores.open("test", CONFIG, dir, Durability.OS, 1, new StrandMetrics(), null);
    }
}

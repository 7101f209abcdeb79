package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.stores.Placement;
import io.strand.app.stores.SingleNode;
import io.strand.app.stores.Stores;
import io.strand.app.stores.WritePath;
import io.strand.core.Durability;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.docstore.DocId;
import io.strand.docstore.DocValue;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SharedSecretTest {
    @TempDir
    Path dir;
    Stores stores;
    SingleNode placement;

    @BeforeEach
    void open() {
        stores = Stores.open("t", ServerConfig.from(Map.of()), dir.resolve("a"), Durability.OS, 1, new StrandMetrics(), null);
        placement = new SingleNode(stores);
    }

    @AfterEach
    void close() {
        stores.close();
    }

    @Test
    void loadShouldCreateTheKeyOnceAndReadTheSameOneAfterwards() {
        SharedSecret.Key first = SharedSecret.load(placement, () -> 1_800_000_000L).orElseThrow();
        assertEquals(32, first.secret().length);
        assertEquals(1_800_000_000L, first.createdAt());
        SharedSecret.Key again = SharedSecret.load(placement, () -> 1_900_000_000L).orElseThrow();
        assertArrayEquals(first.secret(), again.secret());
        assertEquals(first.createdAt(), again.createdAt());
    }

    /** A replica that has not applied the winning proposal yet: its own proposal loses, and it reads the winner's key. */
    @Test
    void aNodeWhoseProposalLosesShouldReadTheWinnersKey() {
        ObjectNode winner = SharedSecret.proposal(1_700_000_000L);
        placement.writes().doc("put", DocId.of("_system", SharedSecret.DOC), winner).join();
        Stores lagging = Stores.open("lag", ServerConfig.from(Map.of()), dir.resolve("b"), Durability.OS, 1, new StrandMetrics(), null);
        AtomicInteger reads = new AtomicInteger();
        Placement behind = new Placement() {
            @Override
            public Stores local(String ws) {
                return reads.getAndIncrement() == 0 ? lagging : stores; // caught up after the barrier
            }

            @Override
            public boolean awaitCaughtUp(String ws) {
                return true;
            }

            @Override
            public WritePath writes() {
                return placement.writes();
            }

            @Override
            public List<Stores> all() {
                return List.of(stores);
            }

            @Override
            public String durableWire() {
                return "os";
            }

            @Override
            public void close() {
            }
        };
        try {
            SharedSecret.Key key = SharedSecret.load(behind, () -> 1_800_000_000L).orElseThrow();
            assertEquals(1_700_000_000L, key.createdAt());
            assertEquals(winner.path("value").path("secret").asText(),
                    java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(key.secret()));
        } finally {
            lagging.close();
        }
    }

    @Test
    void parseShouldCallADamagedKeyCorrupt() {
        ObjectNode v = (ObjectNode) SharedSecret.proposal(1L).get("value");
        v.put("secret", "c2hvcnQ");
        StrandException e = assertThrows(StrandException.class, () -> SharedSecret.parse(new DocValue(3, v)));
        assertEquals(ErrorCode.CORRUPT, e.code());
        assertEquals(ErrorCode.CORRUPT, assertThrows(StrandException.class,
                () -> SharedSecret.parse(new DocValue(1, Json.MAPPER.createObjectNode()))).code());
    }
}

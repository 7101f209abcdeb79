package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The term fence of SPEC §13: two handles on one log in one shared store, as two cluster nodes
 * see it, each writing under the term its {@link WriterTerm} gives. Once a newer leader committed,
 * the deposed leader's commits fail and the stored manifest never goes back.
 */
class ColdLogFenceTest {
    @TempDir
    Path tmp;
    CountingColdStore store;
    ColdLogConfig config;

    @BeforeEach
    void setUp() {
        store = new CountingColdStore(new FileColdStore(tmp.resolve("bucket")));
        config = ColdLogConfig.defaults(tmp.resolve("roll-tmp")).withBlockBytes(1024);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private ColdLog node(AtomicLong term) {
        return new ColdLog(store, "ws1", "orders", new BlockCache(8 << 20), config, term::get);
    }

    private Manifest stored() {
        return new ManifestStore(store).read("ws1/orders/manifest.json", "ws1", "orders").manifest();
    }

    @Test
    void rollShouldFailWithoutOverwritingWhenANewerLeaderCommitted() {
        AtomicLong oldTerm = new AtomicLong(5);
        AtomicLong newTerm = new AtomicLong(6);
        ColdLog deposed = node(oldTerm);
        ColdLog leader = node(newTerm);
        deposed.roll(TestEntries.range(1, 100));
        assertEquals(5, stored().term(), "the first leader stamps its term");
        leader.roll(TestEntries.range(101, 200)); // the new leader of term 6 continues the cold part
        Manifest before = stored();
        assertEquals(6, before.term());

        // the deposed leader still believes it leads in term 5 (a partitioned leader that has not stepped down)
        StrandException e = assertThrows(StrandException.class, () -> deposed.roll(TestEntries.range(201, 300)));
        assertEquals(ErrorCode.VERSION_CONFLICT, e.code(), e.getMessage());
        assertEquals(true, e.extras().get("fenced"));
        assertEquals(6L, ((Number) e.extras().get("manifestTerm")).longValue());
        assertEquals(before, stored(), "the manifest is exactly the newer leader's: nothing overwritten");
        assertEquals(6, leader.refresh().term());
        assertEquals(200, leader.lastSeq());
    }

    @Test
    void compactionAndGarbageCollectionShouldFailWhenANewerLeaderCommitted() {
        AtomicLong oldTerm = new AtomicLong(3);
        ColdLog deposed = node(oldTerm);
        deposed.roll(TestEntries.range(1, 50));
        deposed.roll(TestEntries.range(51, 100));
        ColdLog leader = node(new AtomicLong(4));
        leader.roll(TestEntries.range(101, 150));
        Manifest before = stored();

        StrandException e = assertThrows(StrandException.class, () -> deposed.compact(1 << 20, Duration.ZERO));
        assertEquals(ErrorCode.VERSION_CONFLICT, e.code(), e.getMessage());
        assertEquals(before, stored(), "a deposed compaction leaves the manifest alone");
        assertThrows(StrandException.class, () -> deposed.collectGarbage(Instant.now()));
        assertThrows(StrandException.class, () -> deposed.deleteOrphans(Duration.ZERO));
        assertEquals(before, stored());

        Compactor.Report r = leader.compact(1 << 20, Duration.ZERO); // the leader may
        assertEquals(1, r.segmentsAfter(), r.toString());
        assertEquals(4, stored().term());
    }

    @Test
    void rollShouldUploadNothingWhenThisNodeDoesNotLead() {
        AtomicLong term = new AtomicLong(-1);
        ColdLog follower = node(term);
        StrandException e = assertThrows(StrandException.class, () -> follower.roll(TestEntries.range(1, 100)));
        assertEquals(ErrorCode.UNAVAILABLE, e.code(), e.getMessage());
        assertTrue(store.list("ws1/").isEmpty(), "no segment uploaded and no manifest written: " + store.list("ws1/"));

        term.set(2); // elected: the same handle may write now
        follower.roll(TestEntries.range(1, 100));
        assertEquals(100, stored().lastSeq());
        assertEquals(2, stored().term());
    }

    @Test
    void rollShouldStopBeforeTheManifestWhenTheLeaderStepsDownAfterTheUpload() {
        AtomicLong term = new AtomicLong(7);
        ColdLog leader = new ColdLog(store, "ws1", "orders", new BlockCache(8 << 20), config, () -> {
            // stands for a step-down between the upload (checked first) and the manifest commit (checked last)
            if (!store.list("ws1/orders/seg/").isEmpty()) {
                term.set(-1);
            }
            return term.get();
        });
        assertThrows(StrandException.class, () -> leader.roll(TestEntries.range(1, 100)));
        assertEquals(0, stored().generation(), "the upload may stay as an orphan; no manifest commits it");
    }

    @Test
    void singleNodeManifestShouldCarryNoTermAndStayUnfenced() {
        ColdLog single = new ColdLog(store, "ws1", "orders", new BlockCache(8 << 20), config);
        single.roll(TestEntries.range(1, 10));
        String json = new String(store.get("ws1/orders/manifest.json"), StandardCharsets.UTF_8);
        assertFalse(json.contains("term"), json);
        assertEquals(0, stored().term());

        node(new AtomicLong(9)).roll(TestEntries.range(11, 20));
        single.roll(TestEntries.range(21, 30)); // one writer per store: an offline tool is not fenced
        assertEquals(9, stored().term(), "an unfenced commit keeps the stored term");
        assertEquals(30, stored().lastSeq());
        assertEquals(stored(), Manifest.fromJson(store.get("ws1/orders/manifest.json"), "k"));
    }
}

package io.strand.docstore;

import static io.strand.docstore.TestStores.await;
import static io.strand.docstore.TestStores.failure;
import static io.strand.docstore.TestStores.json;
import static io.strand.docstore.TestStores.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.NullNode;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class DocStoreTest {
    @TempDir
    Path dir;
    Writers writers;
    DocStore store;

    @BeforeEach
    void open() {
        writers = TestStores.writers(dir);
        store = TestStores.open(dir, writers);
    }

    @AfterEach
    void close() {
        TestStores.close(store, writers);
    }

    /** Holds workspace "w"'s writer in a turn until {@code release}; returns once that turn runs. */
    private CompletableFuture<Object> blockWriter(CountDownLatch release) throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        CompletableFuture<Object> blocker = writers.submit("w", commit -> {
            running.countDown();
            release.await();
            return null;
        });
        assertTrue(running.await(10, TimeUnit.SECONDS));
        return blocker;
    }

    private long counter(String doc, String path) {
        return store.get("w", doc).orElseThrow().value().at("/" + path.replace('.', '/')).longValue();
    }

    // ------------------------------------------------------------- get / put

    @Test
    void getShouldReturnEmptyWhenDocMissing() {
        assertTrue(store.get("w", "nothing").isEmpty());
    }

    @Test
    void putShouldCreateAtVersionOneAndBumpVersionOnEachChange() {
        assertEquals(1L, await(store.put("w", "d", obj("{\"a\":1}"), null)));
        assertEquals(2L, await(store.put("w", "d", obj("{\"a\":2}"), 1L)));
        DocValue v = store.get("w", "d").orElseThrow();
        assertEquals(2, v.version());
        assertEquals(json("{\"a\":2}"), v.value());
    }

    @Test
    void putShouldRefuseWithVersionConflictCarryingCurrentWhenExpectVersionDiffers() {
        await(store.put("w", "d", obj("{\"a\":1}"), null));
        StrandException e = failure(store.put("w", "d", obj("{\"a\":9}"), 7L), ErrorCode.VERSION_CONFLICT);
        assertEquals(1L, e.extras().get("version"));
        assertEquals(json("{\"a\":1}"), e.extras().get("value"));
        assertEquals(json("{\"a\":1}"), store.get("w", "d").orElseThrow().value());
    }

    @Test
    void putShouldRefuseWhenExpectVersionZeroAndDocExists() {
        assertEquals(1L, await(store.put("w", "d", obj("{}"), 0L)));
        failure(store.put("w", "d", obj("{}"), 0L), ErrorCode.VERSION_CONFLICT);
    }

    @Test
    void putShouldRefuseWithVersionConflictWhenDocMissingAndVersionExpected() {
        StrandException e = failure(store.put("w", "d", obj("{}"), 3L), ErrorCode.VERSION_CONFLICT);
        assertEquals(0L, e.extras().get("version"));
        assertEquals(NullNode.getInstance(), e.extras().get("value"));
    }

    @Test
    void putShouldRefuseWithTooLargeWhenDocPassesLimit() {
        String big = "x".repeat(DocStoreConfig.DEFAULT_MAX_DOC_BYTES);
        failure(store.put("w", "d", obj("{\"s\":\"" + big + "\"}"), null), ErrorCode.TOO_LARGE);
        assertTrue(store.get("w", "d").isEmpty());
    }

    @Test
    void applyShouldRefuseWithTooLargeWhenResultPassesLimit() {
        String big = "x".repeat(DocStoreConfig.DEFAULT_MAX_DOC_BYTES - 40);
        await(store.put("w", "d", obj("{\"s\":\"" + big + "\"}"), null));
        failure(store.apply("w", "d", List.of(new Op.Set(DocPath.parse("t"), json("\"" + "y".repeat(100) + "\""))),
                null), ErrorCode.TOO_LARGE);
        assertEquals(1, store.get("w", "d").orElseThrow().version());
    }

    @Test
    void writesShouldRefuseInvalidNames() {
        failure(store.put("W/x", "d", obj("{}"), null), ErrorCode.INVALID_NAME);
        failure(store.put("w", "../etc", obj("{}"), null), ErrorCode.INVALID_NAME);
        failure(store.incr("w", "a/b", "n", 1, null, null), ErrorCode.INVALID_NAME);
        assertThrows(StrandException.class, () -> store.get("w", ".."));
    }

    // ------------------------------------------------------------- cas

    @Test
    void casShouldSetNestedPathWhenExpectedValueMatches() {
        await(store.put("w", "d", obj("{\"a\":{\"b\":\"old\"}}"), null));
        DocValue v = await(store.cas("w", "d", "a.b", json("\"old\""), json("\"new\"")));
        assertEquals(2, v.version());
        assertEquals(json("{\"a\":{\"b\":\"new\"}}"), v.value());
    }

    @Test
    void casShouldTreatMissingDocAndPathAsNull() {
        DocValue v = await(store.cas("w", "d", "owner", NullNode.getInstance(), json("\"me\"")));
        assertEquals(1, v.version());
        assertEquals(json("{\"owner\":\"me\"}"), v.value());
        await(store.cas("w", "d", "x.y", null, json("1")));
        assertEquals(json("{\"owner\":\"me\",\"x\":{\"y\":1}}"), store.get("w", "d").orElseThrow().value());
    }

    @Test
    void casShouldRefuseWithConflictCarryingVersionAndCurrentWhenValueDiffers() {
        await(store.put("w", "d", obj("{\"owner\":\"you\"}"), null));
        StrandException e = failure(store.cas("w", "d", "owner", NullNode.getInstance(), json("\"me\"")),
                ErrorCode.CAS_CONFLICT);
        assertEquals(1L, e.extras().get("version"));
        assertEquals(json("\"you\""), e.extras().get("current"));
        assertEquals(1, store.get("w", "d").orElseThrow().version());
    }

    @Test
    void casShouldCompareNumbersByValueAndObjectsRegardlessOfKeyOrder() {
        await(store.put("w", "d", obj("{\"n\":1,\"o\":{\"a\":1,\"b\":[1,2]}}"), null));
        await(store.cas("w", "d", "n", json("1.0"), json("2")));
        await(store.cas("w", "d", "o", json("{\"b\":[1,2.0],\"a\":1}"), json("true")));
        assertEquals(json("{\"n\":2,\"o\":true}"), store.get("w", "d").orElseThrow().value());
    }

    @Test
    void casShouldRefuseWithBadPathWhenPathGoesThroughNonObject() {
        await(store.put("w", "d", obj("{\"a\":5}"), null));
        failure(store.cas("w", "d", "a.b", null, json("1")), ErrorCode.BAD_PATH);
        failure(store.cas("w", "d", "a..b", null, json("1")), ErrorCode.BAD_PATH);
    }

    // ------------------------------------------------------------- incr

    @Test
    void incrShouldTreatMissingDocAndPathAsZero() {
        IncrResult r = await(store.incr("w", "wallet", "balance", 5, null, null));
        assertEquals(new IncrResult(5, 1), r);
        assertEquals(new IncrResult(12, 2), await(store.incr("w", "wallet", "stats.count", 12, null, null)));
        assertEquals(json("{\"balance\":5,\"stats\":{\"count\":12}}"), store.get("w", "wallet").orElseThrow().value());
    }

    @Test
    void incrShouldRefuseWhenDebitWouldCrossFloor() {
        await(store.incr("w", "wallet", "balance", 10, null, null));
        StrandException e = failure(store.incr("w", "wallet", "balance", -11, 0L, null), ErrorCode.FLOOR_VIOLATION);
        assertEquals(10L, e.extras().get("value"));
        assertEquals(new IncrResult(0, 2), await(store.incr("w", "wallet", "balance", -10, 0L, null)));
        assertEquals(1, store.metrics().floorRejections());
    }

    @Test
    void incrShouldRefuseDebitOfMissingCounterBelowFloor() {
        StrandException e = failure(store.incr("w", "wallet", "balance", -1, 0L, null), ErrorCode.FLOOR_VIOLATION);
        assertEquals(0L, e.extras().get("value"));
        assertTrue(store.get("w", "wallet").isEmpty());
    }

    @Test
    void incrShouldRefuseWhenCreditWouldCrossCeiling() {
        await(store.incr("w", "d", "n", 95, null, 100L));
        StrandException e = failure(store.incr("w", "d", "n", 6, null, 100L), ErrorCode.CEILING_VIOLATION);
        assertEquals(95L, e.extras().get("value"));
        assertEquals(100, await(store.incr("w", "d", "n", 5, 0L, 100L)).value());
    }

    @Test
    void incrShouldAllowChangeTowardTheRangeWhenAlreadyOutsideIt() {
        await(store.incr("w", "d", "n", -50, null, null));
        assertEquals(-49, await(store.incr("w", "d", "n", 1, 0L, null)).value());
        assertEquals(-50, await(store.incr("w", "d", "n", -1, null, -100L)).value());
    }

    @Test
    void incrShouldRefuseWithOverflowPastLongRange() {
        await(store.incr("w", "d", "n", Long.MAX_VALUE, null, null));
        StrandException e = failure(store.incr("w", "d", "n", 1, null, null), ErrorCode.OVERFLOW);
        assertEquals(Long.MAX_VALUE, e.extras().get("value"));
        assertEquals(Long.MAX_VALUE, counter("d", "n"));
        assertEquals(-1, await(store.incr("w", "d", "n", Long.MIN_VALUE, null, null)).value());
    }

    @Test
    void incrShouldRefuseWithNotANumberWhenValueIsNotAnInteger() {
        await(store.put("w", "d", obj("{\"s\":\"5\",\"f\":1.5,\"b\":true,\"o\":{},\"big\":123456789012345678901234,"
                + "\"bigExp\":1e30,\"tiny\":1e-2}"), null));
        for (String path : List.of("s", "f", "b", "o", "big", "bigExp", "tiny")) {
            failure(store.incr("w", "d", path, 1, null, null), ErrorCode.NOT_A_NUMBER);
        }
        assertEquals(1, store.get("w", "d").orElseThrow().version());
    }

    /** A whole number spelt with an exponent or a zero fraction (1e2, 100.0) is a number to incr, as its value says. */
    @Test
    void incrShouldTakeAWholeNumberWrittenAsADecimal() {
        await(store.put("w", "d", obj("{\"e\":1e2,\"z\":7.000,\"neg\":-2E1}"), null));
        assertEquals(101, await(store.incr("w", "d", "e", 1, null, null)).value());
        assertEquals(8, await(store.incr("w", "d", "z", 1, null, null)).value());
        assertEquals(-19, await(store.incr("w", "d", "neg", 1, null, null)).value());
        assertEquals(101, counter("d", "e"));
    }

    @Test
    void incrShouldRefuseWithBadPathWhenPathGoesThroughNonObject() {
        await(store.put("w", "d", obj("{\"a\":[1],\"n\":null}"), null));
        failure(store.incr("w", "d", "a.b", 1, null, null), ErrorCode.BAD_PATH);
        failure(store.incr("w", "d", "n.b", 1, null, null), ErrorCode.BAD_PATH);
        failure(store.incr("w", "d", "", 1, null, null), ErrorCode.BAD_PATH);
    }

    @Test
    void incrShouldRefuseFloorAboveCeilingAsBadRequest() {
        failure(store.incr("w", "d", "n", 1, 10L, 5L), ErrorCode.BAD_REQUEST);
    }

    // ------------------------------------------------------------- apply

    @Test
    void applyShouldRunAllOpsInOneVersion() {
        await(store.put("w", "acct", obj("{\"balance\":10,\"tmp\":1,\"state\":\"open\"}"), null));
        List<Op> ops = DocOps.parse(json("""
                [{"op":"incr","path":"balance","delta":-4,"floor":0},
                 {"op":"cas","path":"state","expect":"open","value":"charged"},
                 {"op":"set","path":"last.amount","value":4},
                 {"op":"remove","path":"tmp"}]"""));
        DocValue v = await(store.apply("w", "acct", ops, 1L));
        assertEquals(2, v.version());
        assertEquals(json("{\"balance\":6,\"state\":\"charged\",\"last\":{\"amount\":4}}"), v.value());
        assertEquals(v, store.get("w", "acct").orElseThrow());
    }

    @Test
    void changesQueuedBehindEachOtherShouldEachReturnTheirOwnValue() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Object> blocker = blockWriter(release);
        // queued together, so each later turn starts from the pending value of the one before
        CompletableFuture<DocValue> first = store.apply("w", "d", DocOps.parse(json("[{\"op\":\"set\",\"path\":\"a.b\",\"value\":1}]")), null);
        CompletableFuture<DocValue> second = store.apply("w", "d", DocOps.parse(json("[{\"op\":\"set\",\"path\":\"a.b\",\"value\":2}]")), null);
        CompletableFuture<IncrResult> third = store.incr("w", "d", "a.c", 5, null, null);
        CompletableFuture<DocValue> fourth = store.cas("w", "d", "a.b", json("2"), json("3"));
        release.countDown();
        await(blocker);
        assertEquals(json("{\"a\":{\"b\":1}}"), await(first).value());
        assertEquals(json("{\"a\":{\"b\":2}}"), await(second).value());
        assertEquals(new IncrResult(5, 3), await(third));
        assertEquals(new DocValue(4, json("{\"a\":{\"b\":3,\"c\":5}}")), await(fourth));
        assertEquals(await(fourth), store.get("w", "d").orElseThrow());
    }

    @Test
    void applyShouldChangeNothingAndReportIndexWhenAnOpFails() {
        await(store.put("w", "acct", obj("{\"balance\":3}"), null));
        List<Op> ops = DocOps.parse(json("""
                [{"op":"set","path":"note","value":"x"},
                 {"op":"incr","path":"balance","delta":-4,"floor":0}]"""));
        StrandException e = failure(store.apply("w", "acct", ops, null), ErrorCode.FLOOR_VIOLATION);
        assertEquals(1, e.extras().get("index"));
        assertEquals(3L, e.extras().get("value"));
        assertEquals(new DocValue(1, json("{\"balance\":3}")), store.get("w", "acct").orElseThrow());
    }

    @Test
    void applyShouldRefuseWithVersionConflictBeforeRunningOps() {
        await(store.put("w", "d", obj("{}"), null));
        StrandException e = failure(store.apply("w", "d", List.of(new Op.Remove(DocPath.parse("a"))), 5L),
                ErrorCode.VERSION_CONFLICT);
        assertEquals(1L, e.extras().get("version"));
    }

    @Test
    void applyShouldCreateMissingDocAndRefuseEmptyOps() {
        DocValue v = await(store.apply("w", "d", List.of(new Op.Set(DocPath.parse("a"), json("[1]"))), 0L));
        assertEquals(new DocValue(1, json("{\"a\":[1]}")), v);
        failure(store.apply("w", "d", List.of(), null), ErrorCode.BAD_REQUEST);
    }

    // ------------------------------------------------------------- delete / list

    @Test
    void deleteShouldRemoveDocAndRestartVersionsOnRecreate() {
        await(store.put("w", "d", obj("{}"), null));
        await(store.put("w", "d", obj("{}"), null));
        assertEquals(2L, await(store.delete("w", "d", 2L)));
        assertTrue(store.get("w", "d").isEmpty());
        assertEquals(List.of(), store.list("w", null, 10).docs());
        assertEquals(1L, await(store.put("w", "d", obj("{}"), 0L)));
    }

    @Test
    void deleteShouldReturnNotFoundWhenDocMissing() {
        failure(store.delete("w", "d", null), ErrorCode.NOT_FOUND);
        failure(store.delete("w", "d", 0L), ErrorCode.NOT_FOUND);
        failure(store.delete("w", "d", 1L), ErrorCode.VERSION_CONFLICT);
    }

    @Test
    void deleteShouldRefuseWhenVersionDiffers() {
        await(store.put("w", "d", obj("{\"a\":1}"), null));
        StrandException e = failure(store.delete("w", "d", 2L), ErrorCode.VERSION_CONFLICT);
        assertEquals(json("{\"a\":1}"), e.extras().get("value"));
        assertTrue(store.get("w", "d").isPresent());
    }

    @Test
    void listShouldPageInNameOrderPerWorkspace() {
        for (String d : List.of("c", "a", "e", "b", "d")) {
            await(store.put("w", d, obj("{}"), null));
        }
        await(store.put("other", "zz", obj("{}"), null));
        DocPage first = store.list("w", null, 2);
        assertEquals(new DocPage(List.of("a", "b"), "b"), first);
        assertEquals(new DocPage(List.of("c", "d"), "d"), store.list("w", first.next(), 2));
        assertEquals(new DocPage(List.of("e"), null), store.list("w", "d", 2));
        assertEquals(new DocPage(List.of(), null), store.list("empty", null, 10));
        assertEquals(List.of("zz"), store.list("other", "", 10).docs());
    }

    @Test
    void listShouldRefuseLimitOutsideRange() {
        assertThrows(StrandException.class, () -> store.list("w", null, 0));
        assertThrows(StrandException.class, () -> store.list("w", null, 1001));
    }

    // ------------------------------------------------------------- turns, capacity, metrics

    @Test
    void readsShouldSeeChangesOnlyAfterDurableWhileLaterTurnsInTheBatchSeeThemAtOnce() throws Exception {
        await(store.incr("w", "c", "n", 1, null, null));
        CountDownLatch release1 = new CountDownLatch(1);
        CountDownLatch inSecond = new CountDownLatch(1);
        CountDownLatch release2 = new CountDownLatch(1);
        CompletableFuture<Object> blocker = blockWriter(release1);
        CompletableFuture<IncrResult> incr = store.incr("w", "c", "n", 1, null, null);
        CompletableFuture<Long> seenBySecond = writers.submit("w", commit -> {
            DocStore.Prepared p = store.prepare("w", "c", List.of(new Op.Incr(DocPath.parse("n"), 0, null, null)), null);
            store.abandon(p);
            inSecond.countDown();
            release2.await();
            return p.results().getFirst().longValue();
        });
        release1.countDown();
        await(blocker);
        assertTrue(inSecond.await(10, TimeUnit.SECONDS));
        assertEquals(1, counter("c", "n"), "a reader saw a change before it was durable");
        release2.countDown();
        assertEquals(2, await(incr).value());
        assertEquals(2L, await(seenBySecond), "a later turn in the batch did not see the earlier turn's change");
        assertEquals(2, counter("c", "n"));
    }

    @Test
    void prepareShouldRefuseOffTheWriterThread() {
        assertThrows(IllegalStateException.class, () -> store.prepare("w", "d", List.of(), null));
    }

    @Test
    void writesShouldRefuseWithStorageFullWhenCapacityReached(@TempDir Path small) {
        try (DocStore tiny = new DocStore(TestStores.config(small).withCapacity(3, 16, 64), writers)) {
            for (int i = 0; i < 3; i++) {
                await(tiny.put("w", "d" + i, obj("{}"), null));
            }
            StrandException e = failure(tiny.put("w", "d3", obj("{}"), null), ErrorCode.STORAGE_FULL);
            assertTrue(e.getMessage().contains("3 of 3 docs"), e.getMessage());
            await(tiny.put("w", "d0", obj("{\"a\":1}"), null)); // replacing is fine
            await(tiny.delete("w", "d1", null));
            await(tiny.put("w", "d3", obj("{}"), null));
            // byte budget: 3 × (16 + 64 + 8) = 264 bytes
            failure(tiny.put("w", "d2", obj("{\"s\":\"" + "x".repeat(240) + "\"}"), null), ErrorCode.STORAGE_FULL);
            assertEquals(3, tiny.size());
        }
    }

    @Test
    void writesShouldRefuseWithStorageFullNamingTheDirWhenTheDiskGuardSaysFullAndSucceedOnceFreed(@TempDir Path small) {
        java.util.concurrent.atomic.AtomicLong free = new java.util.concurrent.atomic.AtomicLong(1L << 30);
        io.strand.core.DiskSpace disk = new io.strand.core.DiskSpace(small, 1 << 20, java.time.Duration.ZERO, free::get);
        try (DocStore guarded = new DocStore(TestStores.config(small), writers, disk)) {
            await(guarded.put("w", "d", obj("{\"a\":1}"), null));
            free.set(1 << 20); // at the reserve
            StrandException e = failure(guarded.put("w", "d", obj("{\"a\":2}"), null), ErrorCode.STORAGE_FULL);
            assertTrue(e.getMessage().contains(small.toString()), e.getMessage());
            failure(guarded.incr("w", "n", "/c", 1, null, null), ErrorCode.STORAGE_FULL);
            assertEquals(1, guarded.get("w", "d").orElseThrow().version(), "reads keep working, nothing changed");
            assertTrue(guarded.get("w", "n").isEmpty());
            free.set(1L << 30);
            assertEquals(2L, await(guarded.put("w", "d", obj("{\"a\":2}"), null)), "writes resume without a restart");
        }
    }

    @Test
    void writesShouldFailWithUnavailableAfterClose(@TempDir Path other) {
        DocStore s = new DocStore(TestStores.config(other), writers);
        s.close();
        failure(s.put("w", "d", obj("{}"), null), ErrorCode.UNAVAILABLE);
    }

    @Test
    void secondOpenOfTheSameDirectoryShouldBeRefused() {
        StrandException e = assertThrows(StrandException.class, () -> new DocStore(TestStores.config(dir), writers));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
    }

    @Test
    void metricsShouldCountOpsConflictsAndFloorRejections() {
        await(store.incr("w", "d", "n", 1, null, null));
        failure(store.incr("w", "d", "n", -2, 0L, null), ErrorCode.FLOOR_VIOLATION);
        failure(store.put("w", "d", obj("{}"), 0L), ErrorCode.VERSION_CONFLICT);
        failure(store.cas("w", "d", "n", json("5"), json("6")), ErrorCode.CAS_CONFLICT);
        store.get("w", "d");
        DocMetrics m = store.metrics();
        assertEquals(2, m.ops(DocMetrics.Kind.INCR));
        assertEquals(1, m.ops(DocMetrics.Kind.GET));
        assertEquals(2, m.conflicts());
        assertEquals(1, m.floorRejections());
        assertEquals(1, m.journalRecords());
        assertEquals(1L, m.toMap().get("rejected_floor_violation"));
        assertNull(m.toMap().get("rejected_overflow"));
    }
}

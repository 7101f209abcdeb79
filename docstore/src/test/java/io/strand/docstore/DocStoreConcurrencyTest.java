package io.strand.docstore;

import static io.strand.docstore.TestStores.await;
import static io.strand.docstore.TestStores.json;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.core.Writers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Concurrency claims pinned as forbidden outcomes: a lost update, a debit past the floor, a half-applied apply. */
@Timeout(60)
class DocStoreConcurrencyTest {
    private static final int THREADS = 16;

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

    private static void runThreads(IntConsumer body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    start.await();
                    body.accept(id);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static ErrorCode code(Throwable t) {
        Throwable c = t instanceof CompletionException ? t.getCause() : t;
        return c instanceof StrandException se ? se.code() : null;
    }

    @Test
    void incrShouldCountExactlyWhen16ThreadsIncrementOneKey() throws Exception {
        runThreads(t -> {
            for (int i = 0; i < 1000; i++) {
                store.incr("w", "counter", "n", 1, null, null).join();
            }
        });
        DocValue v = store.get("w", "counter").orElseThrow();
        assertEquals(16_000, v.value().get("n").longValue(), "an increment was lost or doubled");
        assertEquals(16_000, v.version());
    }

    @Test
    void incrShouldLetExactlyTheFundedDebitsThroughWhenRacingAgainstTheFloor() throws Exception {
        await(store.incr("w", "wallet", "balance", 1000, null, null));
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        ConcurrentLinkedQueue<Long> seen = new ConcurrentLinkedQueue<>();
        runThreads(t -> {
            for (int i = 0; i < 2000 / THREADS; i++) {
                try {
                    seen.add(store.incr("w", "wallet", "balance", -1, 0L, null).join().value());
                    ok.incrementAndGet();
                } catch (CompletionException e) {
                    assertEquals(ErrorCode.FLOOR_VIOLATION, code(e), e.getMessage());
                    refused.incrementAndGet();
                }
            }
        });
        assertEquals(1000, ok.get(), "debits that succeeded");
        assertEquals(1000, refused.get(), "debits refused at the floor");
        assertEquals(0, store.get("w", "wallet").orElseThrow().value().get("balance").longValue());
        assertTrue(seen.stream().allMatch(v -> v >= 0), "a debit went below the floor");
        assertEquals(1000, seen.stream().distinct().count(), "two debits saw the same balance");
        assertEquals(1000, store.metrics().floorRejections());
    }

    @Test
    void casRetryLoopShouldCountExactlyFrom16Threads() throws Exception {
        AtomicInteger conflicts = new AtomicInteger();
        runThreads(t -> {
            for (int i = 0; i < 100; i++) {
                while (true) {
                    JsonNode current = store.get("w", "cas").map(v -> v.value().get("n")).orElse(null);
                    long next = current == null ? 1 : current.longValue() + 1;
                    try {
                        store.cas("w", "cas", "n", current, IntNode.valueOf((int) next)).join();
                        break;
                    } catch (CompletionException e) {
                        assertEquals(ErrorCode.CAS_CONFLICT, code(e), e.getMessage());
                        conflicts.incrementAndGet();
                    }
                }
            }
        });
        assertEquals(1600, store.get("w", "cas").orElseThrow().value().get("n").longValue(), "a CAS update was lost");
        assertEquals(conflicts.get(), store.metrics().conflicts());
    }

    @Test
    void applyShouldNeverBeSeenHalfDoneUnderConcurrentTransfers() throws Exception {
        await(store.put("w", "pair", TestStores.obj("{\"a\":500,\"b\":500}"), null));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger reads = new AtomicInteger();
        List<String> torn = new ArrayList<>();
        Thread reader = Thread.ofPlatform().name("pair-reader").start(() -> {
            while (!stop.get()) {
                JsonNode v = store.get("w", "pair").orElseThrow().value();
                if (v.get("a").longValue() + v.get("b").longValue() != 1000) {
                    synchronized (torn) {
                        torn.add(v.toString());
                    }
                }
                reads.incrementAndGet();
            }
        });
        List<Op> aToB = DocOps.parse(json("[{\"op\":\"incr\",\"path\":\"a\",\"delta\":-3,\"floor\":0},"
                + "{\"op\":\"incr\",\"path\":\"b\",\"delta\":3}]"));
        List<Op> bToA = DocOps.parse(json("[{\"op\":\"incr\",\"path\":\"a\",\"delta\":7},"
                + "{\"op\":\"incr\",\"path\":\"b\",\"delta\":-7,\"floor\":0}]"));
        try {
            runThreads(t -> {
                for (int i = 0; i < 100; i++) {
                    try {
                        store.apply("w", "pair", t % 2 == 0 ? aToB : bToA, null).join();
                    } catch (CompletionException e) {
                        assertEquals(ErrorCode.FLOOR_VIOLATION, code(e), e.getMessage());
                    }
                }
            });
        } finally {
            stop.set(true);
            reader.join();
        }
        JsonNode v = store.get("w", "pair").orElseThrow().value();
        assertEquals(1000, v.get("a").longValue() + v.get("b").longValue());
        assertEquals(List.of(), torn, "a reader saw a half-applied transfer");
        assertTrue(reads.get() > 0);
    }
}

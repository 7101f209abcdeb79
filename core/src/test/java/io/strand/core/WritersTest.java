package io.strand.core;

import static io.strand.core.WalFixture.TYPE;
import static io.strand.core.WalFixture.replayAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Group commit: turns, their records and hooks, acks in order, a failed write, and the commit log each mode hands groups to. */
@Timeout(60)
class WritersTest {
    @TempDir
    Path dir;

    /** Groups of many turns from many threads: hooks and acks come in the order the turns ran. */
    @Test
    void acksShouldCompleteInTheOrderTurnsRan() throws Exception {
        List<Integer> ran = new ArrayList<>();
        List<Integer> acked = new ArrayList<>();
        List<CompletableFuture<?>> acks = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { })) {
            List<Thread> clients = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger ids = new java.util.concurrent.atomic.AtomicInteger();
            for (int c = 0; c < 4; c++) {
                clients.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 1000; i++) {
                        int id = ids.incrementAndGet();
                        CompletableFuture<Integer> ack = writers.submit("a", commit -> {
                            ran.add(id); // writer thread only
                            commit.log(TYPE, new byte[] {(byte) id});
                            commit.afterDurable(() -> acked.add(id)); // writer thread, just before the ack
                            return id;
                        });
                        acks.add(ack);
                    }
                }));
            }
            for (Thread t : clients) {
                t.join();
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
            assertEquals(4000, ran.size());
            assertEquals(ran, acked);
        }
    }

    @Test
    void aFailedWriteShouldAnswerOutcomeUnknownAndRefuseEveryLaterWriteWithoutRunningIt() {
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { })) {
            writers.submit("a", c -> {
                c.log(TYPE, new byte[] {1});
                return null;
            }).join();
            assertEquals(java.util.Optional.empty(), writers.failure());
            CompletableFuture<Object> broken = writers.submit("a", c -> {
                c.log(TYPE, new byte[] {2});
                Thread.currentThread().interrupt(); // the write that follows finds its channel closed
                return null;
            });
            CompletionException e = assertThrows(CompletionException.class, broken::join);
            StrandException unknown = (StrandException) e.getCause();
            assertEquals(ErrorCode.OUTCOME_UNKNOWN, unknown.code());
            assertEquals(true, unknown.extras().get("retryable"));
            assertTrue(unknown.getMessage().contains("producerId/producerSeq"), unknown.getMessage());
            java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
            CompletableFuture<Object> later = writers.submit("a", c -> {
                ran.set(true);
                c.log(TYPE, new byte[] {3});
                return null;
            });
            CompletionException refused = assertThrows(CompletionException.class, later::join,
                    "a later group built on the lost one is never acknowledged");
            assertEquals(ErrorCode.UNAVAILABLE, ((StrandException) refused.getCause()).code());
            assertEquals(true, ((StrandException) refused.getCause()).extras().get("retryable"));
            assertFalse(ran.get(), "a refused write never ran, so it changed nothing");
            assertTrue(writers.failure().orElseThrow().startsWith("t-writer-0: the write may or may not have been applied"),
                    writers.failure().orElseThrow());
        }
    }

    /** A turn that throws after logging and registering a hook: neither its record nor its hook survives. */
    @Test
    void aFailedTurnShouldLeaveNeitherRecordsNorHooks() throws IOException {
        List<String> hooks = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { })) {
            CompletableFuture<Object> failed = writers.submit("a", c -> {
                c.log(TYPE, "failed".getBytes(StandardCharsets.UTF_8));
                c.afterDurable(() -> hooks.add("failed"));
                throw new IllegalStateException("refused after its changes were staged");
            });
            CompletableFuture<Object> ok = writers.submit("a", c -> {
                c.log(TYPE, "ok".getBytes(StandardCharsets.UTF_8));
                c.afterDurable(() -> hooks.add("ok"));
                return null;
            });
            assertThrows(CompletionException.class, failed::join);
            ok.join();
        }
        assertEquals(List.of("ok"), hooks);
    }

    @Test
    void aTurnThatFailsShouldLogNothing() {
        Writers writers = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir), n -> { });
        CompletableFuture<Object> bad = writers.submit("a", c -> {
            c.log(TYPE, "half".getBytes(StandardCharsets.UTF_8));
            throw new IllegalStateException("validation failed after logging");
        });
        CompletableFuture<Object> good = writers.submit("a", c -> {
            c.log(TYPE, "whole".getBytes(StandardCharsets.UTF_8));
            return null;
        });
        assertThrows(CompletionException.class, bad::join);
        good.join();
        assertEquals(List.of("whole"), replayAll(dir));
    }

    @Test
    void osModeShouldNeedNoLogAndLogNothing() {
        try (Writers writers = new Writers("t", 1, Durability.OS, 64, null, n -> { })) {
            assertEquals("x", writers.submit("a", c -> {
                assertTrue(!c.logging());
                c.log(TYPE, new byte[] {1});
                return "x";
            }).join());
        }
        assertThrows(IllegalArgumentException.class, () -> new Writers("t", 1, Durability.FSYNC, 64, null, n -> { }));
    }

    /** {@code os} mode logs nothing, but a start still replays what an earlier {@code fsync} run left in its log. */
    @Test
    void osModeShouldStillReplayWhatAnFsyncRunLeft() {
        WriteAheadLog fsyncLog = new WriteAheadLog(dir, 1 << 20);
        Writers crashed = new Writers("t", 1, Durability.FSYNC, 64, fsyncLog, n -> { }); // left open, as a kill leaves it
        crashed.submit("a", c -> {
            c.log(TYPE, "from fsync".getBytes(StandardCharsets.UTF_8));
            return null;
        }).join();
        fsyncLog.awaitSpares();
        List<String> seen = new ArrayList<>();
        try (Writers writers = new Writers("t", 1, Durability.OS, 64, new WriteAheadLog(dir), n -> { })) {
            writers.onReplay(TYPE, payload -> {
                seen.add(StandardCharsets.UTF_8.decode(payload).toString());
                return CompletableFuture.completedFuture(null);
            });
            assertEquals(1, writers.recover());
            writers.submit("a", c -> {
                c.log(TYPE, "from os".getBytes(StandardCharsets.UTF_8)); // not logged
                return null;
            }).join();
        }
        assertEquals(List.of("from fsync"), seen);
        assertEquals(List.of(), replayAll(dir), "os mode logged nothing, and recovery let the fsync run's records go");
    }

    @Test
    void fsyncModeShouldRefuseTheNoneCommitLog() {
        assertThrows(IllegalArgumentException.class, () -> new Writers("t", 1, Durability.FSYNC, 64, CommitLog.none(), n -> { }));
    }

    /** Turns queued while the writer waits on one group all run in the next group, and the observer sees its size. */
    @Test
    void groupSizeObserverShouldSeeEveryTurnQueuedBehindABusyGroupInOneGroup() throws Exception {
        List<Integer> sizes = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (Writers writers = new Writers("t", 1, Durability.FSYNC, 64, new WriteAheadLog(dir), n -> { }, sizes::add)) {
            CompletableFuture<Object> busy = writers.submit("a", c -> {
                started.countDown();
                release.await();
                c.log(TYPE, new byte[] {0});
                return null;
            });
            started.await();
            List<CompletableFuture<Object>> queued = new ArrayList<>();
            for (int i = 1; i <= 10; i++) {
                byte b = (byte) i;
                queued.add(writers.submit("a", c -> {
                    c.log(TYPE, new byte[] {b});
                    return null;
                }));
            }
            release.countDown();
            busy.join();
            CompletableFuture.allOf(queued.toArray(CompletableFuture[]::new)).join();
            // the writer reports a group after completing it and before taking the next: a later group's ack follows both reports
            writers.submit("a", c -> null).join();
            // that later group's own report may still be arriving: read a snapshot, not a view of the live list
            assertEquals(List.of(1, 10), List.copyOf(sizes).subList(0, 2));
        }
    }

    /**
     * A flush registered from a completion callback on the writer runs on the writer once every
     * future of the group is complete, in the order registered; never from a turn (its write is not
     * durable yet), never from another thread.
     */
    @Test
    void aGroupEndFlushShouldRunOnTheWriterAfterEveryFutureOfItsGroup() throws Exception {
        assertFalse(Writers.flushAtGroupEnd(() -> { }), "not a writer thread");
        try (Writers writers = new Writers("t", 1, Durability.OS, 16, null, n -> { })) {
            assertFalse(writers.submit("a", c -> Writers.flushAtGroupEnd(() -> { })).join(), "inside a turn");
            List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
            Held held = Held.on(writers, "a");
            List<CompletableFuture<Boolean>> registered = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                int turn = i;
                registered.add(writers.submit("a", c -> null).thenApply(v -> {
                    events.add("done " + turn);
                    return Writers.flushAtGroupEnd(() -> events.add("flush " + turn + " on " + Thread.currentThread().getName()));
                }));
            }
            held.release();
            for (CompletableFuture<Boolean> f : registered) {
                assertTrue(f.join(), "registered from a callback on the writer");
            }
            // a later group's flush runs after those of the group before, each once; its turn waits
            // behind a held one, so the callback is attached before the writer completes it (a future
            // already complete runs the callback on this thread, which flushAtGroupEnd refuses)
            CountDownLatch laterFlushed = new CountDownLatch(1);
            Held heldLater = Held.on(writers, "a");
            CompletableFuture<Boolean> later = writers.submit("a", c -> null).thenApply(v -> Writers.flushAtGroupEnd(() -> {
                events.add("flush later");
                laterFlushed.countDown();
            }));
            heldLater.release();
            assertTrue(later.join(), "registered from a callback on the writer");
            assertTrue(laterFlushed.await(10, java.util.concurrent.TimeUnit.SECONDS), "the later group's flush ran");
            String writer = "t-writer-0";
            assertEquals(List.of("done 0", "done 1", "done 2", "flush 0 on " + writer, "flush 1 on " + writer,
                    "flush 2 on " + writer, "flush later"), events);
        }
    }

    /** A turn that holds {@code ws}'s writer until released, so turns submitted meanwhile queue behind it. */
    private record Held(CountDownLatch go, CompletableFuture<Void> turn) {
        static Held on(Writers writers, String ws) throws InterruptedException {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<Void> turn = writers.submit(ws, c -> {
                running.countDown();
                go.await();
                return null;
            });
            running.await();
            return new Held(go, turn);
        }

        void release() {
            go.countDown();
            turn.join();
        }
    }
    /**
     * An event loop's host runs the turns it deferred itself, in one group, before it sleeps: the
     * writer thread, parked, is not woken for them, and replies registered with
     * {@link Writers#flushAtGroupEnd} are flushed by the host after the group's last future.
     */
    @Test
    void aLoopHostShouldRunTheTurnsItDeferredItselfAsOneGroup() throws Exception {
        List<Integer> groups = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Writers writers = new Writers("host", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { }, groups::add)) {
            writers.submit("a", c -> null).join();
            awaitParked("host-writer-0");
            Writers.LoopHost host = new Writers.LoopHost();
            host.attach(); // this thread plays the event loop
            List<CompletableFuture<String>> acks = new ArrayList<>();
            List<String> flushedBy = new ArrayList<>();
            host.deferring(100, () -> {
                for (int i = 0; i < 3; i++) {
                    int n = i;
                    CompletableFuture<String> ack = writers.submit("a", c -> {
                        c.log(TYPE, new byte[] {(byte) n});
                        return Thread.currentThread().getName() + "/" + Writers.currentWriter();
                    });
                    ack.thenRun(() -> Writers.flushAtGroupEnd(() -> flushedBy.add(Thread.currentThread().getName())));
                    acks.add(ack);
                }
            });
            assertTrue(host.hasDeferred());
            for (CompletableFuture<String> ack : acks) {
                assertFalse(ack.isDone(), "a deferred turn ran before its host ran it");
            }
            host.runDeferred();
            assertFalse(host.hasDeferred());
            String me = Thread.currentThread().getName();
            for (CompletableFuture<String> ack : acks) {
                assertEquals(me + "/host-writer-0", ack.getNow(null), "ran by the host, holding the writer's turn");
            }
            assertEquals(List.of(me, me, me), flushedBy);
            assertEquals(3, groups.getLast(), "the three deferred turns shared one write");
            assertFalse(Writers.onWriterThread(), "the host let go of the turn");
        }
    }

    /**
     * A host that holds the turn runs up to {@link Writers#LOOP_GROUPS_MAX} groups while turns are
     * queued (here more than one group's worth), and leaves the rest to the writer thread.
     */
    @Test
    void aLoopHostShouldRunAFewGroupsWhileTurnsAreQueuedAndLeaveTheRestToTheWriterThread() {
        List<Integer> groups = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Writers writers = new Writers("few", 1, Durability.FSYNC, 2, new WriteAheadLog(dir), n -> { }, groups::add)) {
            writers.submit("a", c -> null).join();
            awaitParked("few-writer-0");
            groups.clear();
            Writers.LoopHost host = new Writers.LoopHost();
            host.attach(); // this thread plays the event loop
            List<CompletableFuture<String>> acks = new ArrayList<>();
            int turns = 2 * Writers.LOOP_GROUPS_MAX + 1;
            host.deferring(100, () -> {
                for (int i = 0; i < turns; i++) {
                    acks.add(writers.submit("a", c -> Thread.currentThread().getName()));
                }
            });
            host.runDeferred();
            String me = Thread.currentThread().getName();
            for (int i = 0; i < turns; i++) {
                assertEquals(i < 2 * Writers.LOOP_GROUPS_MAX ? me : "few-writer-0", acks.get(i).join(), "turn " + i);
            }
            assertEquals(java.util.Collections.nCopies(Writers.LOOP_GROUPS_MAX, 2), groups.subList(0, Writers.LOOP_GROUPS_MAX));
        }
    }

    /** Requests over {@link Writers.LoopHost#RUN_AT_MOST_BYTES} (big batches) are handed to the writer thread, woken once. */
    @Test
    void aLoopHostShouldHandBigRequestsToTheWriterThread() {
        try (Writers writers = new Writers("big", 1, Durability.FSYNC, 16, new WriteAheadLog(dir), n -> { })) {
            Writers.LoopHost host = new Writers.LoopHost();
            host.attach(); // this thread plays the event loop
            List<CompletableFuture<String>> acks = new ArrayList<>();
            host.deferring(Writers.LoopHost.RUN_AT_MOST_BYTES + 1, () -> {
                for (int i = 0; i < 2; i++) {
                    acks.add(writers.submit("a", c -> {
                        c.log(TYPE, new byte[] {1});
                        return Thread.currentThread().getName();
                    }));
                }
            });
            host.runDeferred();
            for (CompletableFuture<String> ack : acks) {
                assertEquals("big-writer-0", ack.join());
            }
        }
    }

    /**
     * Loop hosts and plain submitters on the same writers at once, seeded: every turn runs exactly
     * once, each submitter's turns for one owner run in the order submitted, and each owner's
     * counter (state owned by whoever holds the turn) is exact.
     */
    @Test
    void loopHostsAndWriterThreadsShouldShareTurnsWithoutLosingOrReorderingAny() throws Exception {
        long seed = System.nanoTime();
        System.out.println("loopHostsAndWriterThreads seed=" + seed);
        String[] owners = {"a", "b", "c"};
        int submitters = 4;
        int each = 3000;
        long[] counters = new long[owners.length]; // each owner's, touched inside turns only
        java.util.Map<String, List<Integer>> seen = new java.util.concurrent.ConcurrentHashMap<>();
        List<CompletableFuture<?>> acks = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Writers writers = new Writers("mix", 2, Durability.FSYNC, 64, new WriteAheadLog(dir), n -> { })) {
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < submitters; s++) {
                int submitter = s;
                boolean isHost = s % 2 == 0;
                java.util.Random random = new java.util.Random(seed + s);
                threads.add(Thread.ofPlatform().start(() -> {
                    Writers.LoopHost host = new Writers.LoopHost();
                    host.attach(); // hosts play the event loop; plain submitters never defer
                    int i = 0;
                    while (i < each) {
                        int burst = 1 + random.nextInt(20);
                        int from = i;
                        int to = Math.min(each, i + burst);
                        Runnable submitBurst = () -> {
                            for (int k = from; k < to; k++) {
                                int o = random.nextInt(owners.length);
                                int n = k;
                                acks.add(writers.submit(owners[o], c -> {
                                    counters[o]++;
                                    seen.computeIfAbsent(submitter + "/" + o, x -> java.util.Collections.synchronizedList(new ArrayList<>())).add(n);
                                    c.log(TYPE, new byte[] {(byte) n});
                                    return null;
                                }));
                            }
                        };
                        if (isHost) {
                            host.deferring(100, submitBurst);
                            host.runDeferred();
                        } else {
                            submitBurst.run();
                        }
                        i = to;
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join(); // the counters' last writes happen before
            long sum = 0;
            for (long c : counters) {
                sum += c;
            }
            assertEquals((long) submitters * each, sum, "seed " + seed);
            for (var e : seen.entrySet()) {
                List<Integer> order = e.getValue();
                for (int k = 1; k < order.size(); k++) {
                    assertTrue(order.get(k - 1) < order.get(k), "seed " + seed + ": " + e.getKey() + " ran out of order at " + k);
                }
            }
        }
    }

    /** Waits (no sleep: the thread's state) until the named writer thread parks with nothing to do. */
    private static void awaitParked(String name) {
        Thread writer = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst().orElseThrow();
        while (writer.getState() != Thread.State.WAITING) {
            Thread.onSpinWait();
        }
    }
}

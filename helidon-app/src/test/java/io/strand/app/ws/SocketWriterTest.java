package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.websocket.WsSession;
import io.strand.core.Durability;
import io.strand.core.Writers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Which thread sends a reply that a writer thread completes: the writer itself, or the socket's reply thread. */
class SocketWriterTest {

    @Test
    void aGroupsRepliesShouldBeSentByItsWriterWhenTheSocketHasRoom() throws Exception {
        // the first turn's group completes alone; the two queued behind it then complete as one group
        assertEquals(List.of("w-writer-0 0", "w-writer-0 1", "w-writer-0 2"), sendersOf(3, () -> true, 0));
    }

    @Test
    void aReplyShouldGoToTheReplyThreadWhenTheSocketMayBeFull() throws Exception {
        assertEquals(List.of("socket-replies 0"), sendersOf(1, () -> false, 0));
    }

    @Test
    void aGroupsRepliesPastTheWritersBurstShouldGoToTheReplyThreadInOrder() throws Exception {
        int pad = SocketWriter.WRITER_BURST_BYTES * 3 / 4; // one reply fits a writer's burst, two do not
        assertEquals(List.of("w-writer-0 0", "socket-replies 1", "socket-replies 2"), sendersOf(3, () -> true, pad));
    }

    /**
     * Writer threads (completing groups) and plain threads queue replies on one socket at once, while
     * the send-buffer probe says yes or no at random: every reply is sent exactly once, and each
     * sender's replies in the order it queued them, whoever holds the queue.
     */
    @Test
    void repliesQueuedFromWritersAndOtherThreadsAtOnceShouldEachGoOutOnceInOrder() throws Exception {
        long seed = System.nanoTime();
        System.out.println("SocketWriterTest seed " + seed);
        java.util.concurrent.atomic.AtomicLong probes = new java.util.concurrent.atomic.AtomicLong(seed);
        RecordingSession session = new RecordingSession();
        // the probe's answers: a fixed sequence per seed (SplittableRandom's mix of a counter)
        SocketWriter out = new SocketWriter(session, () -> new java.util.SplittableRandom(probes.incrementAndGet()).nextBoolean());
        int perSender = 2_000;
        List<String> senders = List.of("ws0", "ws1", "plain0", "plain1");
        try (Writers writers = new Writers("w", 2, Durability.OS, 16, null, nanos -> { })) {
            List<Thread> threads = new ArrayList<>();
            for (String sender : senders) {
                threads.add(Thread.ofPlatform().start(() -> {
                    List<CompletableFuture<Void>> sent = new ArrayList<>();
                    for (int i = 0; i < perSender; i++) {
                        String reply = sender + ":" + i;
                        if (sender.startsWith("ws")) { // each workspace's turns complete on its writer, in order
                            sent.add(writers.submit(sender, commit -> reply).thenAccept(out::sendLater));
                        } else {
                            out.sendLater(reply);
                        }
                    }
                    sent.forEach(CompletableFuture::join);
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            java.util.Map<String, Integer> next = new java.util.HashMap<>();
            for (int n = 0; n < senders.size() * perSender; n++) {
                String got = session.senders.poll(10, TimeUnit.SECONDS);
                assertTrue(got != null, "reply " + n + " of " + senders.size() * perSender + " was sent (seed " + seed + ")");
                String[] parts = got.substring(got.indexOf(' ') + 1).split(":");
                int expected = next.getOrDefault(parts[0], 0);
                assertEquals(expected, Integer.parseInt(parts[1]), parts[0] + "'s replies in order (seed " + seed + ")");
                next.put(parts[0], expected + 1);
            }
            assertEquals(null, session.senders.poll(100, TimeUnit.MILLISECONDS), "nothing sent twice");
        } finally {
            out.markClosed();
        }
    }

    /**
     * Submits {@code turns} turns to one writer while the first is held, so the others queue behind
     * it; each reply ({@code pad} more bytes than its id) goes to one {@link SocketWriter}. Returns,
     * in the order sent, the name of the thread that sent each reply and the reply's number.
     */
    private static List<String> sendersOf(int turns, BooleanSupplier room, int pad) throws Exception {
        RecordingSession session = new RecordingSession();
        SocketWriter out = new SocketWriter(session, room);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        try (Writers writers = new Writers("w", 1, Durability.OS, 16, null, nanos -> { })) {
            for (int i = 0; i < turns; i++) {
                String reply = i + " ".repeat(pad);
                CompletableFuture<String> done = writers.submit("acme", commit -> {
                    running.countDown();
                    held.await(); // only the first turn waits: the latch is open for the rest
                    return reply;
                });
                if (i == 0) {
                    assertTrue(running.await(10, TimeUnit.SECONDS), "the first turn runs");
                }
                done.thenAccept(out::sendLater);
            }
            held.countDown();
            List<String> senders = new ArrayList<>();
            for (int i = 0; i < turns; i++) {
                senders.add(session.senders.poll(10, TimeUnit.SECONDS));
            }
            return senders;
        } finally {
            out.markClosed();
        }
    }

    /** Records the name of each thread that sends a frame, with the frame's first word; sends nothing anywhere. */
    private static final class RecordingSession extends TextOnlySession {
        final BlockingQueue<String> senders = new LinkedBlockingQueue<>();

        @Override
        public WsSession send(String text, boolean last) {
            senders.add(Thread.currentThread().getName() + " " + text.strip());
            return this;
        }
    }
}

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
    void aLoneReplyShouldBeSentByTheWriterWhenTheSocketHasRoom() throws Exception {
        assertEquals(List.of("w-writer-0"), sendersOf(1, () -> true));
    }

    @Test
    void aReplyShouldGoToTheReplyThreadWhenTheSocketMayBeFull() throws Exception {
        assertEquals(List.of("socket-replies"), sendersOf(1, () -> false));
    }

    @Test
    void repliesShouldGoToTheReplyThreadWhenOtherTurnsWaitOrShareTheGroup() throws Exception {
        // the first turn's group completes with two turns queued; those two then complete as one group
        assertEquals(List.of("socket-replies", "socket-replies", "socket-replies"), sendersOf(3, () -> true));
    }

    /**
     * Submits {@code turns} turns to one writer while the first is held, so the others queue behind
     * it; each reply goes to one {@link SocketWriter}. Returns the names of the threads that sent them.
     */
    private static List<String> sendersOf(int turns, BooleanSupplier room) throws Exception {
        RecordingSession session = new RecordingSession();
        SocketWriter out = new SocketWriter(session, room);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        try (Writers writers = new Writers("w", 1, Durability.OS, 16, null, nanos -> { })) {
            for (int i = 0; i < turns; i++) {
                String reply = "{\"id\":" + i + "}";
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

    /** Records the name of each thread that sends a frame; sends nothing anywhere. */
    private static final class RecordingSession extends TextOnlySession {
        final BlockingQueue<String> senders = new LinkedBlockingQueue<>();

        @Override
        public WsSession send(String text, boolean last) {
            senders.add(Thread.currentThread().getName());
            return this;
        }
    }
}

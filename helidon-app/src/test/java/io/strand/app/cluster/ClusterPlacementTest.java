package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The read policy of a cluster node ({@link ClusterPlacement#awaitBarrier}): a replica serves its
 * local copy without a read index only when the shard has no leader; a replica that is merely behind
 * a live leader waits for the barrier or answers 503, never a stale read (found by ClusterIT and
 * ClusterFailoverIT: a node catching up after its start served reads missing acknowledged appends).
 */
class ClusterPlacementTest {
    @Test
    void awaitBarrierShouldBeCurrentWhenTheBarrierCompletesInTime() {
        assertTrue(ClusterPlacement.awaitBarrier(CompletableFuture.completedFuture(null), 50, 500, () -> true, 0));
    }

    @Test
    void awaitBarrierShouldServeTheLocalCopyWhenNoLeaderIsKnown() {
        long start = System.nanoTime();
        assertFalse(ClusterPlacement.awaitBarrier(new CompletableFuture<>(), 50, 5_000, () -> false, 0));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms >= 50 && ms < 5_000, "local after the short wait, not the long one: " + ms + " ms");
    }

    @Test
    void awaitBarrierShouldWaitPastTheShortWaitWhileTheShardHasALeader() {
        CompletableFuture<Void> barrier = new CompletableFuture<>();
        CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS).execute(() -> barrier.complete(null));
        // true only once the barrier completed: the short wait (50 ms) did not turn into a local read
        assertTrue(ClusterPlacement.awaitBarrier(barrier, 50, 10_000, () -> true, 0));
    }

    @Test
    void awaitBarrierShouldAnswerUnavailableWhenALeaderIsKnownAndTheReplicaNeverCatchesUp() {
        StrandException e = assertThrows(StrandException.class,
                () -> ClusterPlacement.awaitBarrier(new CompletableFuture<>(), 50, 200, () -> true, 3));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertEquals(true, e.extras().get("retryable"));
        assertEquals(3, e.extras().get("shard"));
    }

    @Test
    void awaitBarrierShouldAnswerUnavailableWhenTheBarrierFailsWhileALeaderIsKnown() {
        CompletableFuture<Void> failed = CompletableFuture.failedFuture(new IllegalStateException("replica closed"));
        StrandException e = assertThrows(StrandException.class, () -> ClusterPlacement.awaitBarrier(failed, 50, 200, () -> true, 0));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
    }

    @Test
    void awaitBarrierShouldServeTheLocalCopyWhenTheLeaderGoesAwayWhileWaiting() {
        AtomicInteger asked = new AtomicInteger();
        assertFalse(ClusterPlacement.awaitBarrier(new CompletableFuture<>(), 50, 200, () -> asked.incrementAndGet() == 1, 0));
        assertEquals(2, asked.get(), "asked again once the long wait ended");
    }
}

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
 * local copy without a read index only when the shard is down from where it stands (no majority of
 * its replicas reachable); a replica that is merely behind waits for the barrier or answers 503,
 * never a stale read (found by ClusterIT and ClusterFailoverIT: a node catching up after its start,
 * or not fed by its leader, served reads missing acknowledged appends).
 */
class ClusterPlacementTest {
    @Test
    void awaitBarrierShouldBeCurrentWhenTheBarrierCompletesInTime() {
        assertTrue(ClusterPlacement.awaitBarrier(CompletableFuture.completedFuture(null), 50, 500, () -> true, 0));
    }

    @Test
    void awaitBarrierShouldServeTheLocalCopyWhenTheShardIsDown() {
        long start = System.nanoTime();
        assertFalse(ClusterPlacement.awaitBarrier(new CompletableFuture<>(), 50, 5_000, () -> false, 0));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms >= 50 && ms < 5_000, "local after the short wait, not the long one: " + ms + " ms");
    }

    @Test
    void awaitBarrierShouldWaitPastTheShortWaitWhileTheShardIsAlive() {
        CompletableFuture<Void> barrier = new CompletableFuture<>();
        CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS).execute(() -> barrier.complete(null));
        // true only once the barrier completed: the short wait (50 ms) did not turn into a local read
        assertTrue(ClusterPlacement.awaitBarrier(barrier, 50, 10_000, () -> true, 0));
    }

    @Test
    void awaitBarrierShouldAnswerUnavailableWhenTheShardIsAliveAndTheReplicaNeverCatchesUp() {
        StrandException e = assertThrows(StrandException.class,
                () -> ClusterPlacement.awaitBarrier(new CompletableFuture<>(), 50, 200, () -> true, 3));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertEquals(true, e.extras().get("retryable"));
        assertEquals(3, e.extras().get("shard"));
    }

    @Test
    void awaitBarrierShouldAnswerUnavailableWhenTheBarrierFailsWhileTheShardIsAlive() {
        CompletableFuture<Void> failed = CompletableFuture.failedFuture(new IllegalStateException("replica closed"));
        StrandException e = assertThrows(StrandException.class, () -> ClusterPlacement.awaitBarrier(failed, 50, 200, () -> true, 0));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
    }

    @Test
    void awaitBarrierShouldServeTheLocalCopyWhenTheShardGoesDownWhileWaiting() {
        AtomicInteger asked = new AtomicInteger();
        assertFalse(ClusterPlacement.awaitBarrier(new CompletableFuture<>(), 50, 200, () -> asked.incrementAndGet() == 1, 0));
        assertEquals(2, asked.get(), "asked again once the long wait ended");
    }

    @Test
    void awaitBarrierShouldAskAgainWhenABarrierFailsFast() {
        AtomicInteger asked = new AtomicInteger();
        // the first barrier fails at once (the replica has not heard from a leader yet), the second completes
        assertTrue(ClusterPlacement.awaitBarrier(() -> asked.incrementAndGet() == 1
                ? CompletableFuture.failedFuture(new IllegalStateException("no leader yet"))
                : CompletableFuture.completedFuture(null), 1_000, 5_000, () -> false, 0));
        assertEquals(2, asked.get());
    }
}

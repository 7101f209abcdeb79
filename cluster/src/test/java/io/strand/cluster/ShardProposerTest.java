package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.junit.jupiter.api.Test;

/** Which failed sends make the proposer replace its Raft client, and how a send is bounded in time. */
class ShardProposerTest {
    private static final RaftGroupMemberId MEMBER = RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"), RaftGroupId.randomId());

    /**
     * A leader handing leadership over answers "stepping down"; Ratis's async API fails that one future
     * but keeps the client's window, and replacing the client stalled its other requests for 3 s.
     */
    @Test
    void oneRepliesExceptionShouldKeepTheClient() {
        assertFalse(ShardProposer.closesWindow(new LeaderSteppingDownException("n1 is stepping down")));
        assertFalse(ShardProposer.closesWindow(new LeaderNotReadyException(MEMBER)));
        assertFalse(ShardProposer.closesWindow(new StateMachineException("apply failed")));
        assertFalse(ShardProposer.closesWindow(ShardProposer.unwrap(
                new CompletionException(new LeaderSteppingDownException("wrapped as the async API does")))));
    }

    /** The failures after which Ratis has failed the client's whole ordered window. */
    @Test
    void aClosedWindowShouldReplaceTheClient() {
        assertTrue(ShardProposer.closesWindow(new RaftRetryFailureException(null, 3, null, new IOException("gave up"))));
        assertTrue(ShardProposer.closesWindow(new AlreadyClosedException("client closed")));
        assertTrue(ShardProposer.closesWindow(new GroupMismatchException("no such group")));
        assertTrue(ShardProposer.closesWindow(new IllegalStateException("not an IOException")));
        assertTrue(ShardProposer.closesWindow(new IOException("not a RaftException")));
    }

    /**
     * A local proposal that never completes must free its lane after the timeout (else the shard's one
     * in-flight slot is held for good); one that completes must leave no deadline behind on the timer.
     */
    @Test
    void aSendShouldFailAfterItsTimeoutAndACompletedOneShouldLeaveNoDeadline() throws Exception {
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1);
        timers.setRemoveOnCancelPolicy(true);
        try {
            CompletableFuture<String> stuck = ShardProposer.timeOut(timers, new CompletableFuture<>(), 50);
            ExecutionException e = assertThrows(ExecutionException.class, () -> stuck.get(10, TimeUnit.SECONDS));
            assertInstanceOf(TimeoutException.class, e.getCause());

            CompletableFuture<String> answered = ShardProposer.timeOut(timers, new CompletableFuture<>(), 60_000);
            assertEquals(1, timers.getQueue().size());
            answered.complete("reply");
            assertEquals("reply", answered.get());
            assertEquals(0, timers.getQueue().size(), "the deadline of a completed send is cancelled and removed");
        } finally {
            timers.shutdownNow();
        }
    }
}

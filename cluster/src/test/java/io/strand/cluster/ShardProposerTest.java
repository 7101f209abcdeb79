package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
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

/** Which failed sends make the proposer replace its Raft client, how a send is bounded in time, and what one entry carries. */
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

    /** One writer, one command outstanding: its entry goes from its own submit, never after a wait. */
    @Test
    void aLoneWriterShouldNeverWait() throws Exception {
        try (Lane lane = new Lane(Duration.ofSeconds(60))) {
            for (int i = 0; i < 3; i++) {
                CompletableFuture<byte[]> reply = lane.proposer.submit(0, bytes("w" + i));
                FakeLeader.Sent sent = lane.leader.sent.poll(); // sent inline, by the submitting thread
                assertEquals(List.of("w" + i), sent == null ? null : sent.texts());
                sent.commit();
                assertEquals("w" + i, new String(reply.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8));
            }
        }
    }

    /**
     * Four callers, one command each in flight: when the entry in flight commits, the next one waits for
     * as many commands as were outstanding meanwhile (the three queued and the first caller's next),
     * rather than leaving with the three and making the fourth wait a whole round.
     */
    @Test
    void theNextEntryShouldWaitForAsManyCommandsAsWereOutstanding() throws Exception {
        try (Lane lane = new Lane(Duration.ofSeconds(60))) {
            CompletableFuture<byte[]> a = lane.proposer.submit(0, bytes("a"));
            FakeLeader.Sent first = lane.leader.sent.poll();
            assertEquals(List.of("a"), first.texts(), "an idle lane with nothing outstanding before sends at once");
            lane.proposer.submit(0, bytes("b"));
            lane.proposer.submit(0, bytes("c"));
            lane.proposer.submit(0, bytes("d"));
            first.commit();
            a.get(10, TimeUnit.SECONDS);
            assertEquals(null, lane.leader.sent.poll(), "three queued, four were outstanding: the entry waits");
            lane.proposer.submit(0, bytes("a2"));
            FakeLeader.Sent second = lane.leader.sent.poll();
            assertEquals(List.of("b", "c", "d", "a2"), second == null ? null : second.texts(), "the fourth made it go, all four in it");
            assertEquals(2, lane.proposer.entriesProposed(0));
            assertEquals(5, lane.proposer.commandsProposed(0));
        }
    }

    /** A wait ends after the hold when no more commands come: what is queued goes. */
    @Test
    void aWaitShouldEndAfterTheHoldWithWhatIsQueued() throws Exception {
        try (Lane lane = new Lane(Duration.ofSeconds(2))) {
            lane.proposer.submit(0, bytes("a"));
            FakeLeader.Sent first = lane.leader.sent.poll();
            CompletableFuture<byte[]> b = lane.proposer.submit(0, bytes("b"));
            first.commit();
            assertEquals(null, lane.leader.sent.poll(), "one queued, two were outstanding: the entry waits");
            FakeLeader.Sent second = lane.leader.sent.poll(30, TimeUnit.SECONDS);
            assertEquals(List.of("b"), second == null ? null : second.texts(), "sent by the hold's end");
            second.commit();
            assertEquals("b", new String(b.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8));
            lane.proposer.submit(0, bytes("c"));
            assertEquals(List.of("c"), lane.leader.sent.poll().texts(), "the wait learned one: the next goes at once");
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A proposer of one shard whose leader is {@link FakeLeader} in this process, and its timer thread. */
    private static final class Lane implements AutoCloseable {
        final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1);
        final FakeLeader leader = new FakeLeader();
        final ShardProposer proposer;

        Lane(Duration hold) {
            proposer = new ShardProposer(1, leader, timers, Duration.ofSeconds(60), 1, hold);
        }

        @Override
        public void close() {
            timers.shutdownNow();
        }
    }

    /** A local leader that records each proposal and commits it when the test says, each command's reply its own bytes. */
    private static final class FakeLeader implements ShardProposer.Clients {
        final BlockingQueue<Sent> sent = new LinkedBlockingQueue<>();

        record Sent(List<byte[]> commands, CompletableFuture<RaftClientReply> reply) {
            List<String> texts() {
                return commands.stream().map(c -> new String(c, StandardCharsets.UTF_8)).toList();
            }

            void commit() {
                reply.complete(RaftClientReply.newBuilder().setClientId(ClientId.randomId()).setServerId(MEMBER).setCallId(1)
                        .setSuccess(true).setMessage(Message.valueOf(ShardEntry.replies(commands))).build());
            }
        }

        @Override
        public RaftClient get(int shard) {
            throw new UnsupportedOperationException("the leader is local");
        }

        @Override
        public void failed(int shard, RaftClient client) {
        }

        @Override
        public Optional<CompletableFuture<RaftClientReply>> submitLocally(int shard, Message proposal) {
            CompletableFuture<RaftClientReply> reply = new CompletableFuture<>();
            sent.add(new Sent(ShardEntry.decode(ShardEntry.stamp(0, proposal.getContent())).commands(), reply));
            return Optional.of(reply);
        }
    }
}

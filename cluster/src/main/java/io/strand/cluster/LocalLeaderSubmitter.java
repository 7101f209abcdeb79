package io.strand.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.server.RaftServer;

/**
 * Requests of this node to a shard replica of its own that leads (proposals and read indexes), handed
 * to the Raft server in-process instead of through a Ratis client. Thread-safe: any thread submits;
 * the hand-over to Ratis runs on this class's one submitting thread, which it owns.
 *
 * <p>Why: a client's request to its own node costs a gRPC round trip over loopback (protobuf both ways,
 * two socket hops, four thread hand-offs). The requests carry this node's own client id and call ids,
 * and the ids of replied calls ride on the next request so the leader drops them from its retry cache
 * at once, as Ratis's client does. A request here is never retried under the same call id: a failure
 * after Ratis appended it is an unknown outcome for the caller to report.
 */
final class LocalLeaderSubmitter implements AutoCloseable {
    private final RaftServer server;
    /** This node's replica of a shard, if it holds one. */
    private final IntFunction<Optional<RaftServer.Division>> division;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final ConcurrentLinkedQueue<Long> replied = new ConcurrentLinkedQueue<>();
    private final ExecutorService submitter;

    LocalLeaderSubmitter(String nodeId, RaftServer server, IntFunction<Optional<RaftServer.Division>> division) {
        this.server = server;
        this.division = division;
        this.submitter = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "strand-local-submit-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * When this node's replica of {@code shard} is its leader and ready (it has committed an entry of its
     * term): {@code message} submitted to it in-process; empty when another node leads, and the caller
     * uses its client.
     */
    Optional<CompletableFuture<RaftClientReply>> submit(int shard, Message message, RaftClientRequest.Type type) {
        Optional<RaftServer.Division> d = division.apply(shard).filter(x -> x.getInfo().isLeader() && x.getInfo().isLeaderReady());
        if (d.isEmpty()) {
            return Optional.empty();
        }
        List<Long> done = new ArrayList<>();
        for (Long id; done.size() < 1024 && (id = replied.poll()) != null; ) {
            done.add(id);
        }
        long callId = callIds.incrementAndGet();
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(server.getId())
                .setGroupId(d.get().getMemberId().getGroupId()).setCallId(callId).setRepliedCallIds(done)
                .setMessage(message).setType(type).build();
        // Submitted from this class's own thread, never from the caller's: a proposal is often sent from the
        // completion of the previous one, which runs on a Ratis thread (the apply path); re-entering Ratis
        // there (its log queue, its locks) from inside its own apply path can stall the shard. (Submitting
        // from request threads, which are virtual, directly was tried: no difference beyond the noise of
        // hand-driven serial appends on a 3-node cluster, 2026-12-03, so the one path stays.)
        RaftServer.Division leader = d.get();
        CompletableFuture<RaftClientReply> reply = new CompletableFuture<>();
        try {
            submitter.execute(() -> {
                try {
                    submitToDivision(leader, request).whenComplete((r, e) -> {
                        replied.add(callId);
                        if (e != null) {
                            reply.completeExceptionally(e);
                        } else {
                            reply.complete(r);
                        }
                    });
                } catch (IOException | RuntimeException e) {
                    reply.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) { // the node is closing
            reply.completeExceptionally(e);
        }
        return Optional.of(reply);
    }

    /**
     * Hands {@code request} to the division itself on the calling thread. {@code RaftServer}'s own entry
     * point ({@code RaftServerProxy.submitClientRequestAsync}) runs the same call on the division's client
     * executor and blocks the caller until it returns ({@code supplyAsync(…).join()}, there so that gRPC
     * threads never do the work): two thread hand-offs per proposal, which the submitting thread here does
     * not need, since it is this node's own. With {@link ShardProposer#timeOut} it took the leader's
     * context switches per serial append on a 3-node cluster from 45 to 40 ({@code /proc/PID/task/*}/status).
     */
    private CompletableFuture<RaftClientReply> submitToDivision(RaftServer.Division division, RaftClientRequest request)
            throws IOException {
        if (division instanceof RaftClientAsynchronousProtocol direct) {
            return direct.submitClientRequestAsync(request);
        }
        return server.submitClientRequestAsync(request);
    }

    /** Requests submitted in-process since start. */
    long submitted() {
        return callIds.get();
    }

    @Override
    public void close() {
        submitter.shutdownNow();
    }
}

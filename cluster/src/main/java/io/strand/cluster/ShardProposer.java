package io.strand.cluster;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.StateMachineException;

/**
 * Group commit at the proposer: {@link #submit} queues one opaque command for a shard; commands that
 * arrive while earlier entries of the shard are in flight are batched into ONE Raft entry (at most
 * {@link ShardEntry#MAX_COMMANDS} commands and {@link ShardEntry#MAX_BYTES} bytes), up to
 * {@code maxInFlight} entries per shard are in flight at once (pipelining), and each caller's future
 * completes with its own reply. When a lane could send, it first waits up to {@link #HOLD} for as many
 * commands as were outstanding while the last entry was in flight (their callers are sending again).
 * Thread-safe: each shard's queue is guarded by its lane's monitor; Raft sends and completions happen
 * outside it.
 *
 * <p>Futures may complete on the node's timer thread or a Ratis thread: callers must not block in
 * their dependent actions. Every submit completes within the spec's request timeout: with a reply once its entry is
 * committed and applied by the leader, or with {@link StrandException} {@code unavailable} (503,
 * {@code "retryable":true}) when no leader could commit it in time (for example a majority of the
 * shard's replicas is down). A write that timed out may still commit later: retry it with an idempotent
 * key ({@code producerId}/{@code producerSeq}, {@code expectVersion}).
 */
public final class ShardProposer {
    private static final System.Logger LOG = System.getLogger("strand.cluster");
    /**
     * Entries in flight per shard (from this node) before new commands wait to be batched into the next
     * one. One: a Raft entry's cost (a log write and fsync on every replica, a gRPC message to each
     * follower, Ratis's commit-index entry) is paid per entry, not per byte, so fewer, fuller entries
     * are cheaper, and on this 2-core machine CPU decides throughput. Measured with three local nodes
     * warmed up under the same load, 4 HTTP clients appending 100-entry batches to the shard's leader:
     * 4 in flight 141–168 batches/s at 9.7–11.3 ms of the nodes' CPU per batch; 1 in flight 242–282
     * batches/s at 5.9–7.3 ms (hand-driven, not a bench scenario; the bench's own figures are in {@code docs/measurements.md}).
     * Again on 2026-12-06 with the bench, once the nodes' JIT had settled ({@code ./strand bench --cluster 3
     * --failovers 0 --warmup 90 append-batched}, compiler threads 3–7 % of the nodes' CPU): 1 in flight
     * 129,687–158,047 entries/s at 8.1–8.5 µs each (three runs), 2 in flight 98,513 and 138,454 at 13.1
     * and 9.9 µs (each batch then rode an entry of its own).
     */
    public static final int DEFAULT_MAX_IN_FLIGHT = 1;
    /**
     * How long a shard's next entry may wait for as many commands as were outstanding (in flight and
     * queued) while the entry before it was in flight ({@link Lane#takeBatches}). Why: with one entry in
     * flight, when it commits its callers get their replies together and send again, but the first new
     * command found the lane idle and went alone, and the rest waited behind it for a whole Raft round:
     * under 4 clients with a batch in flight each, entries of 1 and 3 batches alternated (2.0 commands
     * per entry, {@code strand bench --cluster}'s {@code commandsPerRaftEntry}), and a Raft entry's cost
     * is paid per entry. Waiting for them (at most this long) filled entries to 3.9 batches. One writer
     * (one command outstanding) never waits; a caller that stops sending costs the next entry one wait.
     * {@code ./strand bench --cluster 3 --failovers 0 --warmup 40 append-serial append-concurrent
     * append-batched}, one sitting (2026-12-06 12:39–12:50, fsync, probes p50 0.023–0.038 ms), without →
     * with a 200 µs wait: batched 113,831 → 185,512 entries/s at 9.38 → 6.08 µs of server CPU each
     * (ratio to the single node 0.28 → 0.43), 32 in flight 17,230 → 26,544 ops/s (15.97 → 31.87
     * commands per entry; 60.9 → 37.3 µs), serial 1,640 → 1,797 ops/s (1 per entry either way). With
     * this constant set to 500 µs, the same command in the next run: batched 148,184 (3.98 per entry),
     * 32 in flight 30,215, serial 1,828.
     * Like MySQL's {@code binlog_group_commit_sync_delay} with its {@code no_delay_count}, but the
     * count is learned from the load rather than set.
     */
    static final Duration HOLD = Duration.of(200, ChronoUnit.MICROS);

    private final Clients clients;
    /** The node's timer thread: deadlines and resends (not the common pool, which blocking work can starve). */
    private final ScheduledExecutorService timers;
    private final Duration timeout;
    private final int maxInFlight;
    private final long holdNanos;
    private final Lane[] lanes;

    /** Where the proposer gets each shard's Raft client, and says when one broke. */
    interface Clients {
        RaftClient get(int shard);

        /**
         * A send on {@code client} failed in a way that closed its ordered sliding window for good
         * ({@link #closesWindow}, e.g. a request ran out of retries), so the next proposal needs a new client.
         */
        void failed(int shard, RaftClient client);

        /**
         * The proposal submitted in-process when this node's replica is the shard's ready leader (no
         * gRPC round trip to itself); empty when it is not. Its reply carries Ratis's exception, if
         * any; a {@code NotLeaderException} there may come after the entry was appended, so it is an
         * unknown outcome (no client retries it under the same call id).
         */
        Optional<CompletableFuture<RaftClientReply>> submitLocally(int shard, Message proposal);
    }

    ShardProposer(int shards, Clients clients, ScheduledExecutorService timers, Duration timeout, int maxInFlight, Duration hold) {
        this.holdNanos = hold.toNanos();
        this.clients = clients;
        this.timers = timers;
        this.timeout = timeout;
        this.maxInFlight = maxInFlight;
        this.lanes = new Lane[shards];
        for (int k = 0; k < shards; k++) {
            lanes[k] = new Lane(k);
        }
    }

    /** Proposes {@code command} to {@code shard}'s group; completes with the engine's reply once committed. */
    public CompletableFuture<byte[]> submit(int shard, byte[] command) {
        if (shard < 0 || shard >= lanes.length) {
            throw new IllegalArgumentException("shard must be 0.." + (lanes.length - 1) + ", not " + shard);
        }
        if (command.length > ShardEntry.MAX_COMMAND_BYTES) {
            return CompletableFuture.failedFuture(StrandException.tooLarge("a shard command is at most "
                    + ShardEntry.MAX_COMMAND_BYTES + " bytes, not " + command.length));
        }
        Pending p = new Pending(command, new CompletableFuture<>());
        failUnavailableAfter(timers, p.reply, shard, timeout, "no commit within " + timeout.toMillis() + " ms");
        lanes[shard].enqueue(p);
        return p.reply;
    }

    /** Raft entries proposed since start (with {@link #commandsProposed()}: the batching factor). */
    public long entriesProposed() {
        return Arrays.stream(lanes).mapToLong(l -> l.entries.get()).sum();
    }

    public long commandsProposed() {
        return Arrays.stream(lanes).mapToLong(l -> l.commands.get()).sum();
    }

    /** Raft entries this node proposed to {@code shard} since start, resends included. */
    public long entriesProposed(int shard) {
        return lanes[shard].entries.get();
    }

    /** Commands (client writes) those entries carried: divided by {@link #entriesProposed(int)}, the batching factor. */
    public long commandsProposed(int shard) {
        return lanes[shard].commands.get();
    }

    /**
     * Fails {@code f} with {@link #unavailable} after {@code timeout} unless it completed first; the timer
     * task is cancelled when {@code f} completes (else one timer wake-up per request, seconds later).
     */
    static void failUnavailableAfter(ScheduledExecutorService timers, CompletableFuture<?> f, int shard, Duration timeout,
                                     String why) {
        failAfter(timers, f, timeout.toMillis(), () -> unavailable(shard, why));
    }

    /**
     * {@code f}, failed with a {@link TimeoutException} after {@code ms} unless it
     * completed first; as {@link CompletableFuture#orTimeout}, but on the node's timer thread. The JDK's
     * {@code orTimeout} schedules on the common pool's delay scheduler, which is woken (a context switch)
     * for every timeout set and again for every one cancelled (with Ratis's client-executor hop,
     * {@link RaftNode}'s {@code submitToDivision}, 45 → 40 context switches on the leader per serial append
     * on a 3-node cluster). A {@code ScheduledThreadPoolExecutor} is woken only when the new deadline is
     * the earliest it holds, and a removed one is not signalled at all.
     */
    static <T> CompletableFuture<T> timeOut(ScheduledExecutorService timers, CompletableFuture<T> f, long ms) {
        return failAfter(timers, f, ms, TimeoutException::new);
    }

    /** Fails {@code f} with {@code why} after {@code ms} unless it completed first; the timer task goes when it does. */
    private static <T> CompletableFuture<T> failAfter(ScheduledExecutorService timers, CompletableFuture<T> f, long ms,
                                                      Supplier<? extends Throwable> why) {
        var deadline = timers.schedule(() -> f.completeExceptionally(why.get()), ms, TimeUnit.MILLISECONDS);
        f.whenComplete((r, e) -> deadline.cancel(false));
        return f;
    }

    static StrandException unavailable(int shard, String why) {
        return new StrandException(ErrorCode.UNAVAILABLE, "shard " + shard + " cannot commit now (" + why
                + "); the write may or may not be applied: retry it, idempotently", Map.of("retryable", true, "outcome", "unknown", "shard", shard));
    }

    private record Pending(byte[] command, CompletableFuture<byte[]> reply) {
    }

    /** One shard's queue and in-flight count. Guarded by its own monitor. */
    private final class Lane {
        private final int shard;
        private final ArrayDeque<Pending> queue = new ArrayDeque<>();
        private int inFlight;
        /** Commands in the entries in flight, and the bytes of those queued. */
        private int inFlightCommands;
        private long queuedBytes;
        /** The most commands outstanding (in flight and queued) since the last entry went: how many the next waits for. */
        private int peak;
        /** The pending end of a hold, or null. */
        private ScheduledFuture<?> holdEnd;
        /** A hold ran out: the next entry goes with what is queued. */
        private boolean holdOver;
        /** Proposals sent on this lane and the commands in them (any thread: atomics). */
        private final AtomicLong entries = new AtomicLong();
        private final AtomicLong commands = new AtomicLong();

        Lane(int shard) {
            this.shard = shard;
        }

        void enqueue(Pending p) {
            List<List<Pending>> batches;
            synchronized (this) {
                queue.add(p);
                queuedBytes += p.command.length;
                peak = Math.max(peak, inFlightCommands + queue.size());
                batches = takeBatches();
            }
            batches.forEach(this::send);
        }

        /** Under the monitor: the batches that may go now, each counted in flight. */
        private List<List<Pending>> takeBatches() {
            List<List<Pending>> out = new ArrayList<>(1);
            while (inFlight < maxInFlight && !queue.isEmpty()) {
                if (holdNanos > 0 && !holdOver && queue.size() < Math.min(peak, ShardEntry.MAX_COMMANDS) && queuedBytes < ShardEntry.MAX_BYTES
                        && holding()) {
                    break; // more are coming: the callers of the last entry are sending again
                }
                holdOver = false;
                if (holdEnd != null) {
                    holdEnd.cancel(false);
                    holdEnd = null;
                }
                List<Pending> batch = new ArrayList<>();
                long bytes = 0;
                while (!queue.isEmpty() && batch.size() < ShardEntry.MAX_COMMANDS) {
                    Pending next = queue.peek();
                    if (!batch.isEmpty() && bytes + next.command.length > ShardEntry.MAX_BYTES) {
                        break;
                    }
                    queue.poll();
                    queuedBytes -= next.command.length;
                    if (!next.reply.isDone()) { // timed out while queued: never proposed
                        batch.add(next);
                        bytes += next.command.length;
                    }
                }
                if (!batch.isEmpty()) {
                    inFlight++;
                    inFlightCommands += batch.size();
                    peak = inFlightCommands + queue.size();
                    out.add(batch);
                }
            }
            return out;
        }

        /** Under the monitor: makes sure a hold's end is scheduled; false when the timer is gone (the node is closing). */
        private boolean holding() {
            if (holdEnd == null) {
                try {
                    holdEnd = timers.schedule(this::endHold, holdNanos, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    return false;
                }
            }
            return true;
        }

        private void endHold() {
            List<List<Pending>> batches;
            synchronized (this) {
                holdEnd = null;
                holdOver = true;
                batches = takeBatches();
            }
            batches.forEach(this::send);
        }

        private void send(List<Pending> batch) {
            entries.incrementAndGet();
            commands.addAndGet(batch.size());
            CompletableFuture<RaftClientReply> sent;
            RaftClient client = null;
            try {
                Message proposal = Message.valueOf(ShardEntry.proposal(batch.stream().map(Pending::command).toList()));
                Optional<CompletableFuture<RaftClientReply>> local = clients.submitLocally(shard, proposal);
                if (local.isPresent()) { // bounded: a stuck local leader must not hold the lane's in-flight slot
                    sent = timeOut(timers, local.get(), timeout.toMillis());
                } else {
                    client = clients.get(shard);
                    sent = client.async().send(proposal);
                }
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            RaftClient used = client;
            sent.whenComplete((reply, error) -> {
                if (error != null && used != null && closesWindow(unwrap(error))) {
                    clients.failed(shard, used);
                }
                Throwable failure = error != null ? unwrap(error) : reply != null && !reply.isSuccess() ? reply.getException() : null;
                if (rejectedBeforeAppend(failure) && batch.stream().anyMatch(p -> !p.reply.isDone())) {
                    // never in the log: the same commands may go again (in flight still counts them)
                    List<Pending> again = batch.stream().filter(p -> !p.reply.isDone()).toList();
                    synchronized (this) {
                        inFlightCommands -= batch.size() - again.size(); // the resend's completion takes off the rest
                    }
                    timers.schedule(() -> send(again), 50, TimeUnit.MILLISECONDS);
                    return;
                }
                try {
                    complete(batch, reply, error);
                } finally {
                    List<List<Pending>> next;
                    synchronized (this) {
                        inFlight--;
                        inFlightCommands -= batch.size();
                        next = takeBatches();
                    }
                    next.forEach(this::send);
                }
            });
        }

        private void complete(List<Pending> batch, RaftClientReply reply, Throwable error) {
            if (error == null && reply != null && reply.isSuccess()) {
                List<byte[]> replies;
                try {
                    replies = ShardEntry.decodeReplies(reply.getMessage().getContent());
                } catch (IllegalArgumentException e) {
                    fail(batch, new StrandException(ErrorCode.INTERNAL, "shard " + shard + ": malformed reply: "
                            + e.getMessage(), Map.of(), e));
                    return;
                }
                if (replies.size() != batch.size()) {
                    fail(batch, new StrandException(ErrorCode.INTERNAL, "shard " + shard + ": " + replies.size()
                            + " replies for " + batch.size() + " commands"));
                    return;
                }
                for (int i = 0; i < batch.size(); i++) {
                    batch.get(i).reply.complete(replies.get(i));
                }
                return;
            }
            Throwable cause = error != null ? unwrap(error) : reply != null ? reply.getException() : null;
            if (cause instanceof StateMachineException sme) {
                // Committed, but the leader's engine failed applying it (or rejected its framing).
                fail(batch, new StrandException(ErrorCode.OUTCOME_UNKNOWN, "shard " + shard + ": the leader could not"
                        + " apply the write: " + sme.getMessage(), Map.of("retryable", true, "shard", shard), sme));
                return;
            }
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": proposal of " + batch.size() + " failed: " + cause);
            fail(batch, unavailable(shard, String.valueOf(cause)));
        }

        private void fail(List<Pending> batch, StrandException e) {
            for (Pending p : batch) {
                p.reply.completeExceptionally(e);
            }
        }
    }

    /**
     * Answers a leader gives in its admission check, before it appends a request to its log (it is
     * stepping down, e.g. handing leadership to a higher-priority replica, or not ready yet): the request
     * is in no log, so it may go again as a new request. Ratis's client hands a stepping-down leader's
     * answer back to the caller instead of retrying. Not {@code NotLeaderException}: a deposed leader
     * also sends it for requests it had already appended, which may still commit; Ratis's client retries
     * those itself under the same call id, which the new leader's retry cache answers once.
     */
    static boolean rejectedBeforeAppend(Throwable t) {
        return t instanceof LeaderSteppingDownException || t instanceof LeaderNotReadyException;
    }

    /**
     * Whether a send that failed with {@code cause} left its client's ordered window closed for good, so
     * the client must be replaced. Ratis fails the whole window ({@code OrderedAsync.failAllAsyncRequests})
     * only when the retry policy gave up ({@link RaftRetryFailureException}), the client is closed, the
     * group is wrong, or the failure is not an {@code IOException} at all; any failure that is not a
     * {@link RaftException} is taken the same way (a needless new client costs little, a broken one kept
     * fails every later write). Every other {@link RaftException}
     * is one reply's answer (a leader stepping down to hand leadership over, the state machine's
     * error) that Ratis's async API turns into an exceptional future; the window is intact, and so are the
     * other requests in flight on it. Replacing the client then cost 3 s: closing it waits that long for
     * its gRPC channel to drain before cancelling those requests, and they held the shard's in-flight
     * slots, so every write of the shard waited (failovers with a leadership transfer measured 3.4–4.1 s).
     */
    static boolean closesWindow(Throwable cause) {
        return !(cause instanceof RaftException) || cause instanceof RaftRetryFailureException
                || cause instanceof AlreadyClosedException || cause instanceof GroupMismatchException;
    }

    static Throwable unwrap(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * A closed-loop load driver, as redis-benchmark runs one from its event loop: keeps
 * {@code inFlight} requests outstanding on each socket by sending the next request from the
 * previous one's reply callback (on the socket's reader thread), so there is no client thread,
 * future or semaphore per request. Each request's latency (send to reply) goes into the histogram
 * of its socket, touched only by that socket's reader thread; {@link Result} merges them.
 *
 * <p>A run stops once {@code operations} operations have completed or at its deadline, whichever
 * comes first (an operation under way at the deadline still finishes). Any reply the
 * {@link Workload} does not accept fails the run: no new requests are sent, and {@link #run}
 * throws once the outstanding ones are back.
 */
final class ClosedLoop {
    /** The requests of a run and how their replies are judged. Called from reader threads: keep shared state atomic. */
    interface Workload {
        String op();

        /** The fields of the first request of operation {@code n} (0-based, each n once per run). */
        String request(long n);

        /**
         * Judges the reply to a request of operation {@code n}: null when the operation is done,
         * else the fields of another request for the same operation (a retry). Throws on a reply
         * the scenario does not expect; by default only {@code ok} replies are accepted.
         */
        default String next(long n, JsonNode reply) {
            requireOk(reply);
            return null;
        }
    }

    /** What a run did: completed operations, requests sent (retries included), wall time and latencies. */
    record Result(long operations, long requests, long nanos, Histogram latency) {
        double seconds() {
            return nanos / 1e9;
        }
    }

    private static final Duration NO_REPLY_LIMIT = Duration.ofMinutes(30);

    private final Workload workload;
    private final long operations;
    private final long deadline;
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicInteger activeLanes = new AtomicInteger();
    private final AtomicLong end = new AtomicLong();
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private ClosedLoop(Workload workload, long operations, long deadline) {
        this.workload = workload;
        this.operations = operations;
        this.deadline = deadline;
    }

    /** {@code operations} operations with {@code inFlight} outstanding on {@code socket}. */
    static Result run(StrandSocket socket, int inFlight, long operations, Workload workload) {
        return run(List.of(socket), inFlight, operations, null, workload);
    }

    /** As many operations as fit in {@code period}, {@code inFlight} outstanding on {@code socket}. */
    static Result runFor(StrandSocket socket, int inFlight, Duration period, Workload workload) {
        return run(List.of(socket), inFlight, Long.MAX_VALUE, period, workload);
    }

    /**
     * {@code inFlight} outstanding on each of {@code sockets}, until {@code operations} have
     * completed in all or {@code period} (when not null) has passed.
     */
    static Result run(List<StrandSocket> sockets, int inFlight, long operations, Duration period, Workload workload) {
        long start = System.nanoTime();
        long deadline = period == null ? Long.MAX_VALUE : start + period.toNanos();
        ClosedLoop loop = new ClosedLoop(workload, operations, deadline);
        List<Histogram> histograms = new ArrayList<>();
        List<Lane> lanes = new ArrayList<>();
        for (StrandSocket s : sockets) {
            Histogram h = new Histogram(BenchReport.HIGHEST_NANOS, 3);
            histograms.add(h);
            for (int i = 0; i < inFlight; i++) {
                lanes.add(loop.new Lane(s, h));
            }
        }
        loop.activeLanes.set(lanes.size());
        for (Lane lane : lanes) {
            lane.startNext(start);
        }
        try {
            loop.done.get(NO_REPLY_LIMIT.toMinutes(), TimeUnit.MINUTES);
        } catch (TimeoutException e) {
            throw new IllegalStateException(workload.op() + ": requests still unanswered after " + NO_REPLY_LIMIT, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (loop.failure.get() != null) {
            throw loop.failure.get();
        }
        Histogram all = new Histogram(BenchReport.HIGHEST_NANOS, 3);
        histograms.forEach(all::add);
        return new Result(loop.completed.get(), loop.requests.get(), loop.end.get() - start, all);
    }

    static JsonNode requireOk(JsonNode reply) {
        if (!reply.path("ok").asBoolean()) {
            throw new IllegalStateException("request failed: " + reply);
        }
        return reply;
    }

    /** One outstanding request at a time; its reply callback sends the lane's next request. */
    private final class Lane implements java.util.function.Consumer<JsonNode> {
        private final StrandSocket socket;
        private final Histogram latency;
        private long op;
        private long sentAt;

        Lane(StrandSocket socket, Histogram latency) {
            this.socket = socket;
            this.latency = latency;
        }

        @Override
        public void accept(JsonNode reply) {
            long now = System.nanoTime();
            latency.recordValue(Math.max(1, Math.min(now - sentAt, BenchReport.HIGHEST_NANOS)));
            String retry;
            try {
                retry = workload.next(op, reply);
            } catch (RuntimeException e) {
                failure.compareAndSet(null, new IllegalStateException(workload.op() + " operation " + op + ": " + e.getMessage(), e));
                finish(now);
                return;
            }
            if (retry != null) {
                if (failure.get() != null) {
                    finish(now);
                } else {
                    send(retry);
                }
                return;
            }
            completed.incrementAndGet();
            startNext(now);
        }

        /** Starts the next operation, or ends the lane when the run is over. */
        void startNext(long now) {
            if (failure.get() != null || now >= deadline) {
                finish(now);
                return;
            }
            long n = started.getAndIncrement();
            if (n >= operations) {
                finish(now);
                return;
            }
            op = n;
            String fields;
            try {
                fields = workload.request(n);
            } catch (RuntimeException e) {
                failure.compareAndSet(null, e);
                finish(now);
                return;
            }
            send(fields);
        }

        private void send(String fields) {
            requests.incrementAndGet();
            sentAt = System.nanoTime();
            socket.send(workload.op(), fields, this);
        }

        private void finish(long now) {
            end.accumulateAndGet(now, Math::max);
            if (activeLanes.decrementAndGet() == 0) {
                done.complete(null);
            }
        }
    }
}

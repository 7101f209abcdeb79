package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.Http;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The write load of {@link ClusterFailoverIT} on one workspace (one shard), from clients homed on
 * every node, each with its own ledger of outcomes. Thread-safe: every ledger is a concurrent
 * collection or an atomic, written by the client threads and read by the test thread.
 *
 * <ul>
 *   <li>Producer appenders (log {@value #PRODUCED}): {@code producerId} {@code p-<home>}, producerSeq
 *       1, 2, 3…; an attempt that fails (5xx, connection refused or reset) is retried with the same
 *       body through another live node until it is acknowledged, so every producerSeq is acked once.</li>
 *   <li>Plain appenders (log {@value #PLAIN}): no producer fields, every fourth request a batch of
 *       three; an attempt that fails is in doubt (it may or may not be in the log) and is not retried.</li>
 *   <li>Doc clients: {@code incr} of {@value #TALLY} by 1, and of {@value #WALLET}'s balance by -1 with
 *       floor 0 (three debits for each top-up of +2, so the floor is hit often, from every node at once).
 *       Every op is recorded before it is sent; its outcome is acked, refused (409 at the floor) or in
 *       doubt (5xx, lost reply). Every eighth op is followed by a read of the balance.</li>
 * </ul>
 * Any other answer (a 4xx that should not happen) is a client failure the test reports.
 */
final class FailoverLoad implements AutoCloseable {
    static final String WS = "busy";
    static final String PRODUCED = "orders";
    static final String PLAIN = "events";
    static final String TALLY = "tally";
    static final String WALLET = "wallet";
    /** Pause between a client's requests: load shaping so 20 loops of history stay cheap to check. */
    private static final long PACE_MILLIS = 25;

    /** One acknowledged entry: where the ack put it, what it holds, and when it was sent and acked. */
    record Ack(String log, long seq, String id) {
    }

    enum Outcome { PENDING, ACKED, REFUSED, IN_DOUBT }

    /** One doc {@code incr}: recorded before it is sent, its outcome set once its answer is known. */
    static final class DocOp {
        final String doc;
        final long delta;
        volatile Outcome outcome = Outcome.PENDING;

        DocOp(String doc, long delta) {
            this.doc = doc;
            this.delta = delta;
        }
    }

    private final ClusterNodes nodes;
    private final Random random;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();
    final ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();
    final Set<String> inDoubtAppends = ConcurrentHashMap.newKeySet();
    final ConcurrentLinkedQueue<DocOp> docOps = new ConcurrentLinkedQueue<>();
    final List<String> failures = new CopyOnWriteArrayList<>();
    /** Floor crossings seen by the clients: an {@code incr} answered, or a read showed, a balance below 0. */
    final AtomicLong floorCrossed = new AtomicLong();
    final AtomicLong requests = new AtomicLong();
    final AtomicLong retries = new AtomicLong();
    final AtomicLong duplicateAnswers = new AtomicLong();
    /** Millis from send to answer of every acknowledged write (and floor refusal). */
    final ConcurrentLinkedQueue<Long> latencyMillis = new ConcurrentLinkedQueue<>();
    private volatile long killedAt = Long.MAX_VALUE;
    private final AtomicLong firstAckAfterKill = new AtomicLong(Long.MAX_VALUE);
    /** Every write answered (or failed) since the last kill, for {@link #timeline}: where a slow failover waited. */
    private final ConcurrentLinkedQueue<Sent> sinceKill = new ConcurrentLinkedQueue<>();

    /** One write attempt: which client sent it to which node, when, and how it ended (status, error code or "no answer"). */
    private record Sent(String client, String node, long sentNanos, long answeredNanos, String outcome) {
    }

    FailoverLoad(ClusterNodes nodes, long seed) {
        this.nodes = nodes;
        this.random = new Random(seed);
    }

    /** Starts one producer appender, one plain appender and one doc client homed on each node. */
    void start(List<String> homes) {
        for (String home : homes) {
            long seed = random.nextLong();
            threads.add(Thread.ofVirtual().name("producer-" + home).start(() -> guard(() -> produce(home, new Random(seed)))));
            threads.add(Thread.ofVirtual().name("plain-" + home).start(() -> guard(() -> plain(home, new Random(seed + 1)))));
            threads.add(Thread.ofVirtual().name("docs-" + home).start(() -> guard(() -> docs(home, new Random(seed + 2)))));
        }
    }

    /** From now on, {@link #failoverNanos} waits for the first ack of a write sent at or after {@code nanos}. */
    void killedAt(long nanos) {
        firstAckAfterKill.set(Long.MAX_VALUE);
        sinceKill.clear();
        killedAt = nanos;
    }

    /**
     * The write attempts of the last failover, one line each, in order of sending: those in flight at the
     * kill and those sent before the first ack after it (ms relative to the kill). Printed for a slow
     * failover, so a run shows which requests the clients were waiting on.
     */
    String timeline() {
        long kill = killedAt;
        long first = firstAckAfterKill.get();
        StringBuilder out = new StringBuilder();
        sinceKill.stream().filter(s -> s.sentNanos <= first).sorted(java.util.Comparator.comparingLong(Sent::sentNanos))
                .forEach(s -> out.append(String.format("  %-12s -> %s  sent %+6d ms  answered %+6d ms  %s%n", s.client, s.node,
                        (s.sentNanos - kill) / 1_000_000, (s.answeredNanos - kill) / 1_000_000, s.outcome)));
        return out.toString();
    }

    private void answered(String node, long sentNanos, Http.Reply reply) {
        long now = System.nanoTime();
        if (now >= killedAt) {
            String outcome = reply == null ? "no answer" : reply.status() == 200 ? "200"
                    : reply.status() + " " + reply.body().substring(0, Math.min(160, reply.body().length()));
            sinceKill.add(new Sent(Thread.currentThread().getName(), node, sentNanos, now, outcome));
        }
    }

    /** Nanos from the kill to the first ack of a write sent after it; -1 if none yet. */
    long failoverNanos() {
        long first = firstAckAfterKill.get();
        return first == Long.MAX_VALUE ? -1 : first - killedAt;
    }

    private void acked(long sentNanos) {
        long now = System.nanoTime();
        latencyMillis.add((now - sentNanos) / 1_000_000);
        if (sentNanos >= killedAt) {
            firstAckAfterKill.accumulateAndGet(now, Math::min);
        }
    }

    long ackedAppends() {
        return acks.size();
    }

    private void guard(Runnable client) {
        try {
            client.run();
        } catch (RuntimeException | Error e) {
            failures.add(Thread.currentThread().getName() + " died: " + e);
        }
    }

    /** The home node while it is up, else another live node; never {@code avoid} when another is up. */
    private String target(String home, String avoid, Random r) {
        List<String> up = nodes.up();
        if (avoid == null && up.contains(home)) {
            return home;
        }
        List<String> others = up.stream().filter(id -> !id.equals(avoid)).toList();
        List<String> from = others.isEmpty() ? up : others;
        return from.isEmpty() ? home : from.get(r.nextInt(from.size()));
    }

    /** One request to {@code id}, sent at {@code sent} (the caller's clock, also its ack latency); null when it could not be answered (node down, connection lost). */
    private Http.Reply post(String id, long sent, String path, String body) {
        String url = nodes.url(id);
        if (url == null) {
            return null;
        }
        requests.incrementAndGet();
        Http.Reply reply;
        try {
            reply = new Http(url, null).post(path, body);
        } catch (IllegalStateException e) {
            reply = null; // connection refused or reset: the outcome is unknown
        }
        answered(id, sent, reply);
        return reply;
    }

    private static boolean inDoubt(Http.Reply r) {
        return r == null || r.status() >= 500;
    }

    private void pace(Random r) {
        try {
            Thread.sleep(PACE_MILLIS + r.nextInt((int) PACE_MILLIS)); // load shaping, not synchronisation
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running.set(false);
        }
    }

    private void produce(String home, Random r) {
        String producer = "p-" + home;
        for (long pseq = 1; running.get(); pseq++) {
            String id = producer + "-" + pseq;
            String body = "{\"data\":{\"id\":\"" + id + "\"},\"producerId\":\"" + producer + "\",\"producerSeq\":" + pseq + "}";
            String avoid = null;
            while (true) {
                String node = target(home, avoid, r);
                long sent = System.nanoTime();
                Http.Reply reply = post(node, sent, "/v1/ws/" + WS + "/logs/" + PRODUCED + "/entries", body);
                if (!inDoubt(reply)) {
                    if (reply.status() != 200) {
                        failures.add(producer + " seq " + pseq + " on " + node + ": " + reply.status() + " " + reply.body());
                        return;
                    }
                    JsonNode j = reply.json();
                    if (j.path("duplicate").asBoolean()) {
                        duplicateAnswers.incrementAndGet();
                    }
                    acks.add(new Ack(PRODUCED, j.get("firstSeq").asLong(), id));
                    acked(sent);
                    break;
                }
                if (!running.get()) {
                    inDoubtAppends.add(id); // stopped with this seq unanswered: it may or may not be in the log
                    return;
                }
                retries.incrementAndGet(); // through another live node, same producer fields
                avoid = node;
            }
            pace(r);
        }
    }

    private void plain(String home, Random r) {
        String avoid = null;
        for (long n = 1; running.get(); n++) {
            int parts = n % 4 == 0 ? 3 : 1;
            String base = "e-" + home + "-" + n;
            List<String> ids = new ArrayList<>();
            StringBuilder body = new StringBuilder("{\"entries\":[");
            for (int k = 0; k < parts; k++) {
                String id = parts == 1 ? base : base + "." + k;
                ids.add(id);
                body.append(k == 0 ? "" : ",").append("{\"data\":{\"id\":\"").append(id).append("\"}}");
            }
            body.append("]}");
            String node = target(home, avoid, r);
            long sent = System.nanoTime();
            Http.Reply reply = post(node, sent, "/v1/ws/" + WS + "/logs/" + PLAIN + "/entries", body.toString());
            if (inDoubt(reply)) {
                inDoubtAppends.addAll(ids); // may or may not be in the log; never retried
                avoid = node;
                continue;
            }
            avoid = null;
            if (reply.status() != 200) {
                failures.add(base + " on " + node + ": " + reply.status() + " " + reply.body());
                return;
            }
            long first = reply.json().get("firstSeq").asLong();
            for (int k = 0; k < parts; k++) {
                acks.add(new Ack(PLAIN, first + k, ids.get(k)));
            }
            acked(sent);
            pace(r);
        }
    }

    private void docs(String home, Random r) {
        String avoid = null;
        for (long n = 1; running.get(); n++) {
            DocOp op = n % 2 == 1 ? new DocOp(TALLY, 1) : new DocOp(WALLET, n % 8 == 0 ? 2 : -1);
            String body = op.doc.equals(TALLY) ? "{\"path\":\"n\",\"delta\":1}"
                    : "{\"path\":\"balance\",\"delta\":" + op.delta + ",\"floor\":0}";
            docOps.add(op);
            String node = target(home, avoid, r);
            long sent = System.nanoTime();
            Http.Reply reply = post(node, sent, "/v1/ws/" + WS + "/docs/" + op.doc + "/incr", body);
            if (inDoubt(reply)) {
                op.outcome = Outcome.IN_DOUBT;
                avoid = node;
                continue;
            }
            avoid = null;
            if (reply.status() == 409 && "floor_violation".equals(reply.errorCode())) {
                op.outcome = Outcome.REFUSED;
                acked(sent);
            } else if (reply.status() == 200) {
                op.outcome = Outcome.ACKED;
                if (op.doc.equals(WALLET) && reply.json().path("value").asLong() < 0) {
                    floorCrossed.incrementAndGet();
                }
                acked(sent);
            } else {
                op.outcome = Outcome.IN_DOUBT;
                failures.add(op.doc + " incr " + op.delta + " on " + node + ": " + reply.status() + " " + reply.body());
                return;
            }
            if (n % 8 == 1) {
                readBalance(target(home, null, r));
            }
            pace(r);
        }
    }

    /** A read of the balance (any node, after its read barrier) must never show it below the floor. */
    private void readBalance(String node) {
        String url = nodes.url(node);
        if (url == null) {
            return;
        }
        try {
            Http.Reply reply = new Http(url, null).get("/v1/ws/" + WS + "/docs/" + WALLET);
            if (reply.status() == 200 && reply.json().path("value").path("balance").asLong() < 0) {
                floorCrossed.incrementAndGet();
            }
        } catch (IllegalStateException e) {
            // the node died under the read: nothing was read
        }
    }

    /** Stops every client after its current request (a producer finishes retrying its current seq). */
    @Override
    public void close() throws InterruptedException {
        running.set(false);
        for (Thread t : threads) {
            t.join();
        }
    }
}

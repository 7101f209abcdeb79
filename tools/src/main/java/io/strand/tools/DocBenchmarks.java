package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The doc scenarios of {@code strand bench}: 16 client connections (one request in flight each,
 * like redis-benchmark's clients) against one key, or a single serial client.
 */
final class DocBenchmarks {
    private static final int CLIENTS = 16;
    private final String wsUrl;
    private final String token;
    private final String durability;
    private final boolean quick;

    DocBenchmarks(String wsUrl, String token, String durability, boolean quick) {
        this.wsUrl = wsUrl;
        this.token = token;
        this.durability = durability;
        this.quick = quick;
    }

    private int scale(int n) {
        return quick ? Math.max(1, n / 10) : n;
    }

    interface Client {
        void run(StrandSocket socket, int client, BenchReport report) throws Exception;
    }

    /** Runs {@code body} on {@code clients} sockets at once; the report's seconds cover all of them. */
    private void parallel(int clients, BenchReport report, Client body) throws Exception {
        List<StrandSocket> sockets = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            sockets.add(new StrandSocket(wsUrl, token));
        }
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        long start = System.nanoTime();
        for (int c = 0; c < clients; c++) {
            int client = c;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    body.run(sockets.get(client), client, report);
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        report.seconds = (System.nanoTime() - start) / 1e9;
        sockets.forEach(StrandSocket::close);
        if (!failures.isEmpty()) {
            throw new IllegalStateException(report.scenario + ": " + failures.getFirst(), failures.getFirst());
        }
    }

    private static JsonNode call(StrandSocket s, String op, String fields, BenchReport r) {
        long t = System.nanoTime();
        JsonNode reply = s.call(op, fields).join();
        synchronized (r) {
            r.record(System.nanoTime() - t);
        }
        return reply;
    }

    BenchReport casSerial() throws Exception {
        BenchReport r = new BenchReport("CAS serial", durability);
        int n = scale(5_000);
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            s.call("doc.put", "\"doc\":\"cas-serial\",\"value\":{\"n\":0}").join();
            long start = System.nanoTime();
            for (long i = 0; i < n; i++) {
                JsonNode reply = call(s, "doc.cas", "\"doc\":\"cas-serial\",\"path\":\"n\",\"expect\":" + i + ",\"value\":" + (i + 1), r);
                if (!reply.path("ok").asBoolean()) {
                    throw new IllegalStateException("serial CAS conflicted: " + reply);
                }
            }
            r.seconds = (System.nanoTime() - start) / 1e9;
            r.count = n;
            r.unit = "commits";
        }
        return r;
    }

    BenchReport casContended() throws Exception {
        BenchReport r = new BenchReport("CAS contended", durability);
        int perClient = scale(300);
        AtomicLong conflicts = new AtomicLong();
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            s.call("doc.put", "\"doc\":\"cas-hot\",\"value\":{\"n\":0}").join();
        }
        parallel(CLIENTS, r, (s, c, rep) -> {
            for (int i = 0; i < perClient; i++) {
                while (true) { // read, compare-and-set, retry on conflict
                    long n = s.call("doc.get", "\"doc\":\"cas-hot\"").join().get("value").get("n").asLong();
                    JsonNode reply = call(s, "doc.cas", "\"doc\":\"cas-hot\",\"path\":\"n\",\"expect\":" + n + ",\"value\":" + (n + 1), rep);
                    if (reply.path("ok").asBoolean()) {
                        break;
                    }
                    conflicts.incrementAndGet();
                }
            }
        });
        long commits = (long) CLIENTS * perClient;
        r.count = commits;
        r.unit = "commits";
        r.extra.put("connections", CLIENTS);
        r.extra.put("conflicts", conflicts.get());
        r.extra.put("conflictPct", Math.round(1000.0 * conflicts.get() / (commits + conflicts.get())) / 10.0);
        verify("cas-hot", "n", commits);
        return r;
    }

    BenchReport incrContended() throws Exception {
        BenchReport r = new BenchReport("incr contended", durability);
        int perClient = scale(2_000);
        AtomicLong failed = new AtomicLong();
        parallel(CLIENTS, r, (s, c, rep) -> {
            for (int i = 0; i < perClient; i++) {
                if (!call(s, "doc.incr", "\"doc\":\"incr-hot\",\"path\":\"n\",\"delta\":1", rep).path("ok").asBoolean()) {
                    failed.incrementAndGet();
                }
            }
        });
        r.count = (long) CLIENTS * perClient;
        r.unit = "commits";
        r.extra.put("connections", CLIENTS);
        r.extra.put("conflicts", failed.get());
        verify("incr-hot", "n", r.count);
        return r;
    }

    BenchReport floorDebit() throws Exception {
        BenchReport r = new BenchReport("floor debit", durability);
        int balance = scale(16_000);
        int perClient = 2 * balance / CLIENTS;
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            s.call("doc.put", "\"doc\":\"wallet\",\"value\":{\"balance\":" + balance + "}").join();
        }
        AtomicLong ok = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        parallel(CLIENTS, r, (s, c, rep) -> {
            for (int i = 0; i < perClient; i++) {
                JsonNode reply = call(s, "doc.incr", "\"doc\":\"wallet\",\"path\":\"balance\",\"delta\":-1,\"floor\":0", rep);
                if (reply.path("ok").asBoolean()) {
                    ok.incrementAndGet();
                } else if ("floor_violation".equals(reply.path("error").path("code").asText())) {
                    refused.incrementAndGet();
                } else {
                    throw new IllegalStateException("unexpected reply " + reply);
                }
            }
        });
        r.count = (long) CLIENTS * perClient;
        r.unit = "attempts";
        r.extra.put("connections", CLIENTS);
        r.extra.put("succeeded", ok.get());
        r.extra.put("refusedAtFloor", refused.get());
        r.extra.put("exact", ok.get() == balance);
        verify("wallet", "balance", 0);
        if (ok.get() != balance) {
            throw new IllegalStateException("floor debit not exact: " + ok.get() + " succeeded for a balance of " + balance);
        }
        return r;
    }

    private void verify(String doc, String field, long expected) {
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            long actual = s.call("doc.get", "\"doc\":\"" + doc + "\"").join().get("value").get(field).asLong();
            if (actual != expected) {
                throw new IllegalStateException(doc + "." + field + " is " + actual + ", expected " + expected);
            }
        }
    }
}

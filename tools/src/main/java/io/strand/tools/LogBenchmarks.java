package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The log scenarios of {@code strand bench}. Each runs against a server in another process over
 * loopback WebSocket (one socket unless said), with 256-byte entry payloads.
 */
final class LogBenchmarks {
    static final String PAYLOAD = "\"" + "x".repeat(254) + "\""; // 256 bytes of serialized JSON
    private final String wsUrl;
    private final String token;
    private final String durability;
    private final long serverPid;
    private final boolean quick;

    LogBenchmarks(String wsUrl, String token, String durability, long serverPid, boolean quick) {
        this.wsUrl = wsUrl;
        this.token = token;
        this.durability = durability;
        this.serverPid = serverPid;
        this.quick = quick;
    }

    /** The doc scenarios against the same server. */
    DocBenchmarks docs() {
        return new DocBenchmarks(wsUrl, token, durability, quick);
    }

    private int scale(int n) {
        return quick ? Math.max(1, n / 10) : n;
    }

    private StrandSocket socket() {
        return new StrandSocket(wsUrl, token);
    }

    private static JsonNode ok(JsonNode reply) {
        if (!reply.path("ok").asBoolean()) {
            throw new IllegalStateException("request failed: " + reply);
        }
        return reply;
    }

    BenchReport appendSerial() {
        BenchReport r = new BenchReport("append serial", durability);
        try (StrandSocket s = socket()) {
            String req = "\"log\":\"serial\",\"data\":" + PAYLOAD;
            for (int i = 0; i < 500; i++) {
                ok(s.call("append", req).join()); // warm-up
            }
            int n = scale(20_000);
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long t = System.nanoTime();
                ok(s.call("append", req).join());
                r.record(System.nanoTime() - t);
            }
            r.seconds = (System.nanoTime() - start) / 1e9;
            r.count = n;
        }
        return r;
    }

    BenchReport appendConcurrent() throws InterruptedException {
        String req = "\"log\":\"concurrent\",\"data\":" + PAYLOAD;
        return inFlight("append concurrent", 32, scale(100_000), i -> req, 1);
    }

    BenchReport appendBatched() throws InterruptedException {
        StringBuilder batch = new StringBuilder("\"entries\":[");
        for (int i = 0; i < 100; i++) {
            batch.append(i == 0 ? "" : ",").append("{\"data\":").append(PAYLOAD).append('}');
        }
        String req = "\"log\":\"batched\"," + batch.append(']');
        BenchReport r = inFlight("append batched", 4, scale(5_000), i -> req, 100);
        r.unit = "entries";
        r.extra.put("batchSize", 100).put("inFlight", 4);
        return r;
    }

    /** {@code depth} requests in flight on one socket; latency per request, throughput in entries. */
    private BenchReport inFlight(String name, int depth, int n, java.util.function.IntFunction<String> request,
                                 int entriesPerRequest) throws InterruptedException {
        BenchReport r = new BenchReport(name, durability);
        r.extra.put("inFlight", depth);
        try (StrandSocket s = socket()) {
            Semaphore window = new Semaphore(depth);
            CountDownLatch done = new CountDownLatch(n);
            AtomicLong failures = new AtomicLong();
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                window.acquire();
                long t = System.nanoTime();
                s.call("append", request.apply(i)).whenComplete((reply, err) -> {
                    if (err != null || !reply.path("ok").asBoolean()) {
                        failures.incrementAndGet();
                    } else {
                        synchronized (r) {
                            r.record(System.nanoTime() - t);
                        }
                    }
                    window.release();
                    done.countDown();
                });
            }
            done.await();
            r.seconds = (System.nanoTime() - start) / 1e9;
            r.count = (long) n * entriesPerRequest;
            if (failures.get() > 0) {
                throw new IllegalStateException(name + ": " + failures.get() + " appends failed");
            }
        }
        return r;
    }

    /** Fills {@code log} with {@code n} entries in batches of 1,000 (not measured). */
    private void preload(StrandSocket s, String log, int n) throws InterruptedException {
        StringBuilder batch = new StringBuilder("\"log\":\"" + log + "\",\"entries\":[");
        for (int i = 0; i < 1000; i++) {
            batch.append(i == 0 ? "" : ",").append("{\"data\":").append(PAYLOAD).append('}');
        }
        String req = batch.append(']').toString();
        Semaphore window = new Semaphore(8);
        CountDownLatch done = new CountDownLatch(n / 1000);
        for (int i = 0; i < n / 1000; i++) {
            window.acquire();
            s.call("append", req).whenComplete((reply, err) -> {
                window.release();
                done.countDown();
            });
        }
        done.await();
    }

    BenchReport readPagination() throws InterruptedException {
        BenchReport r = new BenchReport("read pagination", durability);
        r.unit = "entries";
        int total = scale(100_000);
        try (StrandSocket s = socket()) {
            preload(s, "pages", total);
            long start = System.nanoTime();
            long next = 1;
            long read = 0;
            while (read < total) {
                long t = System.nanoTime();
                JsonNode page = ok(s.call("read", "\"log\":\"pages\",\"from\":" + next + ",\"limit\":100").join());
                r.record(System.nanoTime() - t);
                read += page.get("entries").size();
                next = page.get("next").asLong();
            }
            r.seconds = (System.nanoTime() - start) / 1e9;
            r.count = read;
            r.extra.put("pageSize", 100).put("transport", "websocket read op");
        }
        return r;
    }

    BenchReport subscribeReplay(int entries) throws InterruptedException {
        int total = scale(entries);
        String log = "replay-" + total;
        BenchReport r = new BenchReport("subscribe replay " + (total >= 1_000_000 ? total / 1_000_000 + "M" : total / 1000 + "k"), durability);
        r.unit = "entries";
        try (StrandSocket w = socket()) {
            preload(w, log, total);
        }
        try (StrandSocket s = socket()) {
            AtomicLong received = new AtomicLong();
            CompletableFuture<Long> done = new CompletableFuture<>();
            AtomicLong lastFrame = new AtomicLong(System.nanoTime());
            s.onPush(f -> {
                if ("entries".equals(f.path("type").asText())) {
                    long now = System.nanoTime();
                    r.record(now - lastFrame.getAndSet(now)); // gap between frames
                    if (received.addAndGet(f.get("entries").size()) >= total) {
                        done.complete(now);
                    }
                }
            });
            long start = System.nanoTime();
            lastFrame.set(start);
            ok(s.call("subscribe", "\"log\":\"" + log + "\",\"from\":1").join());
            long end = done.join();
            r.seconds = (end - start) / 1e9;
            r.count = received.get();
            r.extra.put("latencyIs", "gap between entry frames");
        }
        return r;
    }

    BenchReport liveTail() throws InterruptedException {
        BenchReport r = new BenchReport("live-tail delivery", durability);
        int n = scale(10_000);
        try (StrandSocket sub = socket(); StrandSocket w = socket()) {
            ok(w.call("append", "\"log\":\"tail\",\"data\":0").join());
            java.util.concurrent.ConcurrentHashMap<Long, Long> sentAt = new java.util.concurrent.ConcurrentHashMap<>();
            AtomicLong received = new AtomicLong();
            CountDownLatch all = new CountDownLatch(n);
            sub.onPush(f -> {
                if ("entries".equals(f.path("type").asText())) {
                    long now = System.nanoTime();
                    for (JsonNode e : f.get("entries")) {
                        Long t = sentAt.remove(e.get("data").asLong());
                        if (t != null) {
                            synchronized (r) {
                                r.record(now - t);
                            }
                            received.incrementAndGet();
                            all.countDown();
                        }
                    }
                }
            });
            ok(sub.call("subscribe", "\"log\":\"tail\",\"from\":\"latest\"").join());
            long start = System.nanoTime();
            for (long i = 1; i <= n; i++) {
                sentAt.put(i, System.nanoTime());
                ok(w.call("append", "\"log\":\"tail\",\"data\":" + i).join());
            }
            if (!all.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("live tail: only " + received.get() + " of " + n + " delivered");
            }
            r.seconds = (System.nanoTime() - start) / 1e9;
            r.count = n;
            r.extra.put("latencyIs", "append sent -> entry delivered to subscriber");
        }
        return r;
    }

    BenchReport coldLogOpen() {
        BenchReport r = new BenchReport("cold log open", durability);
        int n = scale(2_000);
        try (StrandSocket s = socket()) {
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long t = System.nanoTime();
                ok(s.call("append", "\"log\":\"fresh-" + i + "\",\"data\":" + PAYLOAD).join());
                r.record(System.nanoTime() - t);
            }
            r.seconds = (System.nanoTime() - start) / 1e9;
            r.count = n;
            r.extra.put("latencyIs", "first append to a never-opened log (creates its queue)");
        }
        return r;
    }

    BenchReport manyLogs() throws InterruptedException, IOException {
        int n = scale(100_000);
        BenchReport r = inFlight("many logs", 32, n, i -> "\"log\":\"many-" + i + "\",\"data\":" + PAYLOAD, 1);
        r.extra.put("logs", n);
        if (serverPid > 0) {
            r.extra.put("serverRssMiB", rssMiB(serverPid));
            r.extra.put("serverOpenFiles", openFiles(serverPid));
        }
        return r;
    }

    static long rssMiB(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D+", "")) / 1024;
            }
        }
        return -1;
    }

    static long openFiles(long pid) throws IOException {
        try (var s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return s.count();
        }
    }
}

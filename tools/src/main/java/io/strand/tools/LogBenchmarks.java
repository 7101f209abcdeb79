package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * The log scenarios of {@code strand bench}. Each runs against a server in another process over
 * loopback WebSocket (one socket unless said), with 256-byte entry payloads. Request/reply load is
 * a {@link ClosedLoop} (serial scenarios: one in flight); each scenario first warms up on its own
 * object ({@code …-warmup}; the append rows on a fresh log every {@link Warmup#OBJECT_PERIOD},
 * {@code …-warmup-k}, as their measured run starts on a new one) for the {@link Warmup} period.
 * The server's and this JVM's CPU are read around each timed window ({@link CpuMeter}). Used by one thread at a time.
 */
final class LogBenchmarks {
    static final String PAYLOAD = "\"" + "x".repeat(254) + "\""; // 256 bytes of serialized JSON
    private final String wsUrl;
    private final String token;
    private final String durability;
    private final long serverPid;
    private final boolean quick;
    private final Warmup warmup;
    private final CpuMeter cpu;
    private boolean replayWarmupLoaded;

    /** {@code serverPid}: the server's process; 0 when it runs in this JVM (rows then say so instead of CPU figures). */
    LogBenchmarks(String wsUrl, String token, String durability, long serverPid, boolean quick, Warmup warmup) {
        this(wsUrl, token, durability, serverPid, CpuMeter.forServer(serverPid), quick, warmup);
    }

    /**
     * With the server's CPU read by {@code cpu} (for a cluster: summed over its nodes); {@code serverPid}
     * is the one process whose memory and open files {@code many-logs} reports, 0 for none.
     */
    LogBenchmarks(String wsUrl, String token, String durability, long serverPid, CpuMeter cpu, boolean quick, Warmup warmup) {
        this.wsUrl = wsUrl;
        this.token = token;
        this.durability = durability;
        this.serverPid = serverPid;
        this.quick = quick;
        this.warmup = warmup;
        this.cpu = cpu;
    }

    /** The Durable Streams scenarios against the same server (its HTTP address, from the socket's), streams in workspace {@code bench}. */
    DsBenchmarks ds() {
        String http = wsUrl.replaceFirst("^ws", "http");
        return new DsBenchmarks(http.substring(0, http.indexOf("/v1/ws/")), durability, quick, warmup, cpu);
    }

    /** The doc scenarios against the same server. */
    DocBenchmarks docs() {
        return new DocBenchmarks(wsUrl, token, durability, quick, warmup, cpu);
    }

    private int scale(int n) {
        return quick ? Math.max(1, n / 10) : n;
    }

    private StrandSocket socket() {
        return new StrandSocket(wsUrl, token);
    }

    private static JsonNode ok(JsonNode reply) {
        return ClosedLoop.requireOk(reply);
    }

    /** The same request every time (fields built once). */
    static ClosedLoop.Workload constant(String op, String fields) {
        return numbered(op, n -> fields);
    }

    /** A request built from its operation number. */
    static ClosedLoop.Workload numbered(String op, LongFunction<String> fields) {
        return new ClosedLoop.Workload() {
            @Override
            public String op() {
                return op;
            }

            @Override
            public String request(long n) {
                return fields.apply(n);
            }
        };
    }

    private static String single(String log) {
        return "\"log\":\"" + log + "\",\"data\":" + PAYLOAD;
    }

    private static String batch(String log, int size) {
        StringBuilder b = new StringBuilder("\"log\":\"" + log + "\",\"entries\":[");
        for (int i = 0; i < size; i++) {
            b.append(i == 0 ? "" : ",").append("{\"data\":").append(PAYLOAD).append('}');
        }
        return b.append(']').toString();
    }

    BenchReport appendSerial() {
        return appends("append serial", 1, scale(20_000), 1, log -> single(log), "serial");
    }

    BenchReport appendConcurrent() {
        return appends("append concurrent", 32, scale(300_000), 1, log -> single(log), "concurrent"); // about 10 s, as serial
    }

    BenchReport appendBatched() {
        BenchReport r = appends("append batched", 4, scale(5_000), 100, log -> batch(log, 100), "batched");
        r.unit = "entries";
        r.extra.put("batchSize", 100);
        return r;
    }

    private interface Fields {
        String of(String log);
    }

    /** {@code n} appends of the same request, {@code inFlight} outstanding on one socket; count in entries. */
    private BenchReport appends(String scenario, int inFlight, int n, int entriesPerRequest, Fields fields, String log) {
        BenchReport r = new BenchReport(scenario, durability);
        r.inFlight = inFlight;
        try (StrandSocket s = socket()) {
            r.warmup(warmup.freshLoop(List.of(s), inFlight, k -> constant("append", fields.of(log + "-warmup-" + k))));
            CpuMeter.Sample start = cpu.sample();
            ClosedLoop.Result result = ClosedLoop.run(s, inFlight, n, constant("append", fields.of(log)));
            r.cpu(cpu, start);
            r.add(result, result.operations() * entriesPerRequest);
        }
        return r;
    }

    /** Fills {@code log} with {@code n} entries of {@link #PAYLOAD} in batches of up to 1,000, 8 in flight (not measured). */
    static void preload(StrandSocket s, String log, int n) {
        String full = batch(log, 1000);
        preloadBatches(s, log, n, b -> n - b * 1000 >= 1000 ? full : batch(log, n - (int) b * 1000));
    }

    /**
     * Fills {@code log} with {@code n} entries whose data is {@code payload.apply(seq - 1)}, in
     * batches of up to 1,000, 8 in flight (not measured); a failed append fails the run.
     */
    static void preloadWith(StrandSocket s, String log, int n, LongFunction<String> payload) {
        preloadBatches(s, log, n, b -> {
            int size = (int) Math.min(1000, n - b * 1000);
            StringBuilder req = new StringBuilder("\"log\":\"" + log + "\",\"entries\":[");
            for (int i = 0; i < size; i++) {
                req.append(i == 0 ? "" : ",").append("{\"data\":").append(payload.apply(b * 1000 + i)).append('}');
            }
            return req.append(']').toString();
        });
    }

    private static void preloadBatches(StrandSocket s, String log, int n, LongFunction<String> batchFields) {
        try {
            ClosedLoop.run(s, 8, (n + 999) / 1000, numbered("append", batchFields));
        } catch (IllegalStateException e) {
            throw new IllegalStateException("preload of " + log + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Pages of 100 forward through seqs 1..{@code total} of a log, one read per operation; after the
     * last page it starts again at 1 (a warm-up, and the {@link #PAGE_PASSES} timed passes, read it more
     * than once). Counts entries read.
     */
    static final class Pages implements ClosedLoop.Workload {
        private final String log;
        private final long total;
        private long next = 1;
        final AtomicLong entries = new AtomicLong();

        Pages(String log, long total) {
            this.log = log;
            this.total = total;
        }

        @Override
        public String op() {
            return "read";
        }

        @Override
        public String request(long n) {
            return "\"log\":\"" + log + "\",\"from\":" + next + ",\"limit\":" + Math.min(100, total - next + 1);
        }

        @Override
        public String next(long n, JsonNode reply) {
            JsonNode got = ok(reply).get("entries");
            if (got.isEmpty()) {
                throw new IllegalStateException(log + ": empty page at " + next);
            }
            entries.addAndGet(got.size());
            next = reply.get("next").asLong();
            if (next > total) {
                next = 1;
            }
            return null;
        }
    }

    /**
     * Timed passes of {@code read-pagination} over its log: one pass of 100,000 entries took about
     * 0.16 s, 16 ticks of the 10 ms CPU clock, so its CPU per entry moved ±10 % on rounding alone.
     */
    static final int PAGE_PASSES = 10;

    BenchReport readPagination() {
        BenchReport r = new BenchReport("read pagination", durability);
        r.unit = "entries";
        r.inFlight = 1;
        int total = scale(100_000);
        try (StrandSocket s = socket()) {
            preload(s, "pages", total);
            preload(s, "pages-warmup", total);
            r.warmup(warmup.loop(s, 1, new Pages("pages-warmup", total)));
            Pages pages = new Pages("pages", total);
            CpuMeter.Sample start = cpu.sample();
            ClosedLoop.Result result = ClosedLoop.run(s, 1, PAGE_PASSES * ((total + 99) / 100), pages);
            r.cpu(cpu, start);
            r.add(result, pages.entries.get());
            r.extra.put("pageSize", 100).put("transport", "websocket read op");
        }
        return r;
    }

    /** One replay: entries received and nanos from subscribe to the last entry. */
    record Replay(long entries, long nanos) {
    }

    /**
     * Subscribes to {@code log} from seq 1 as {@code sub}, waits for {@code total} entries, then
     * unsubscribes. Records the gap between entry frames into {@code r} when given. A {@code closed}
     * frame fails the replay.
     */
    static Replay replay(StrandSocket s, String log, long total, String sub, BenchReport r) {
        AtomicLong received = new AtomicLong();
        CompletableFuture<Long> done = new CompletableFuture<>();
        AtomicLong lastFrame = new AtomicLong();
        s.onPush(f -> {
            if (!sub.equals(f.path("sub").asText())) {
                return;
            }
            String type = f.path("type").asText();
            if ("entries".equals(type)) {
                long now = System.nanoTime();
                long gap = now - lastFrame.getAndSet(now);
                if (r != null) {
                    r.record(gap);
                }
                if (received.addAndGet(f.get("entries").size()) >= total) {
                    done.complete(now);
                }
            } else if ("closed".equals(type)) {
                done.completeExceptionally(new IllegalStateException("replay of " + log + " closed: " + f));
            }
        });
        s.closed.thenAccept(code -> done.completeExceptionally(new IllegalStateException("socket closed " + code)));
        long start = System.nanoTime();
        lastFrame.set(start);
        ok(s.call("subscribe", "\"log\":\"" + log + "\",\"from\":1,\"sub\":\"" + sub + "\"").join());
        long end = done.join();
        ok(s.call("unsubscribe", "\"sub\":\"" + sub + "\"").join());
        s.onPush(f -> { });
        return new Replay(received.get(), end - start);
    }

    BenchReport subscribeReplay(int entries) throws Exception {
        int total = scale(entries);
        String log = "replay-" + total;
        int warmTotal = scale(100_000);
        BenchReport r = new BenchReport("subscribe replay " + (total >= 1_000_000 ? total / 1_000_000 + "M" : total / 1000 + "k"), durability);
        r.unit = "entries";
        try (StrandSocket w = socket()) {
            preload(w, log, total);
            if (!replayWarmupLoaded) {
                preload(w, "replay-warmup", warmTotal);
                replayWarmupLoaded = true;
            }
        }
        try (StrandSocket s = socket()) {
            r.warmup(warmup.rounds(round -> {
                replay(s, "replay-warmup", warmTotal, "warm-" + round, null);
                return 1;
            }));
            CpuMeter.Sample start = cpu.sample();
            Replay replay = replay(s, log, total, "measured", r);
            r.cpu(cpu, start);
            r.seconds = replay.nanos() / 1e9;
            r.count = replay.entries();
            r.extra.put("latencyIs", "gap between entry frames").put("warmupLogEntries", warmTotal);
        }
        return r;
    }

    /**
     * Serial appends of numbers to {@code log} while {@code subscriber} follows it as {@code sub}
     * from "latest"; each delivery's latency (append sent to entry received) goes into {@code r}
     * when given. Returns how many were appended; waits until all of them were delivered.
     */
    private static long tail(StrandSocket subscriber, StrandSocket writer, String log, String sub, Warmup period, long n,
                             BenchReport r) throws InterruptedException {
        ConcurrentHashMap<Long, Long> sentAt = new ConcurrentHashMap<>();
        AtomicLong delivered = new AtomicLong();
        subscriber.onPush(f -> {
            if (sub.equals(f.path("sub").asText()) && "entries".equals(f.path("type").asText())) {
                long now = System.nanoTime();
                for (JsonNode e : f.get("entries")) {
                    Long t = sentAt.remove(e.get("data").asLong());
                    if (t != null) {
                        if (r != null) {
                            r.record(now - t);
                        }
                        delivered.incrementAndGet();
                    }
                }
                synchronized (delivered) {
                    delivered.notifyAll();
                }
            }
        });
        ok(subscriber.call("subscribe", "\"log\":\"" + log + "\",\"from\":\"latest\",\"sub\":\"" + sub + "\"").join());
        ClosedLoop.Workload appends = numbered("append", i -> {
            sentAt.put(i + 1, System.nanoTime());
            return "\"log\":\"" + log + "\",\"data\":" + (i + 1);
        });
        long appended = period != null ? period.loop(writer, 1, appends).operations()
                : ClosedLoop.run(writer, 1, n, appends).operations();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        synchronized (delivered) {
            while (delivered.get() < appended) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("live tail of " + log + ": only " + delivered.get() + " of " + appended + " delivered");
                }
                TimeUnit.NANOSECONDS.timedWait(delivered, left);
            }
        }
        ok(subscriber.call("unsubscribe", "\"sub\":\"" + sub + "\"").join());
        subscriber.onPush(f -> { });
        return appended;
    }

    BenchReport liveTail() throws InterruptedException {
        BenchReport r = new BenchReport("live-tail delivery", durability);
        r.inFlight = 1;
        int n = scale(10_000);
        try (StrandSocket sub = socket(); StrandSocket w = socket()) {
            ok(w.call("append", "\"log\":\"tail-warmup\",\"data\":0").join());
            ok(w.call("append", "\"log\":\"tail\",\"data\":0").join());
            long warmStart = System.nanoTime();
            long warmOps = warmup.off() ? 0 : tail(sub, w, "tail-warmup", "warm", warmup, 0, null);
            r.warmup(new Warmup.Done(warmup.off() ? 0 : (System.nanoTime() - warmStart) / 1e9, warmOps));
            CpuMeter.Sample cpuStart = cpu.sample();
            long start = System.nanoTime();
            r.count = tail(sub, w, "tail", "measured", null, n, r);
            r.seconds = (System.nanoTime() - start) / 1e9;
            r.cpu(cpu, cpuStart);
            r.extra.put("latencyIs", "append sent -> entry delivered to subscriber");
        }
        return r;
    }

    BenchReport coldLogOpen() {
        BenchReport r = new BenchReport("cold log open", durability);
        r.inFlight = 1;
        int n = scale(2_000);
        try (StrandSocket s = socket()) {
            r.warmup(warmup.loop(List.of(s), 1, n, numbered("append", i -> single("warm-fresh-" + i))));
            CpuMeter.Sample start = cpu.sample();
            ClosedLoop.Result result = ClosedLoop.run(s, 1, n, numbered("append", i -> single("fresh-" + i)));
            r.cpu(cpu, start);
            r.add(result, result.operations());
            r.extra.put("latencyIs", "first append to a never-opened log (creates its queue)");
        }
        return r;
    }

    BenchReport manyLogs() throws IOException {
        int n = scale(100_000);
        BenchReport r = new BenchReport("many logs", durability);
        r.inFlight = 32;
        try (StrandSocket s = socket()) {
            r.warmup(warmup.loop(List.of(s), 32, n, numbered("append", i -> single("warm-many-" + i))));
            CpuMeter.Sample start = cpu.sample();
            ClosedLoop.Result result = ClosedLoop.run(s, 32, n, numbered("append", i -> single("many-" + i)));
            r.cpu(cpu, start);
            r.add(result, result.operations());
        }
        r.extra.put("logs", n);
        r.extra.put("serverLogs", n + r.warmupOps);
        if (serverPid > 0) {
            String status = ProcessMemory.status(serverPid);
            r.extra.put("serverRssMiB", ProcessMemory.statusMiB(status, "VmRSS"));
            r.extra.put("serverRssAnonMiB", ProcessMemory.statusMiB(status, "RssAnon"));
            r.extra.put("serverRssFileMiB", ProcessMemory.statusMiB(status, "RssFile"));
            r.extra.put("serverMappedQueueFiles", ProcessMemory.mappedQueueFiles(serverPid));
            r.extra.put("serverOpenFiles", ProcessMemory.openFiles(serverPid));
        }
        return r;
    }
}

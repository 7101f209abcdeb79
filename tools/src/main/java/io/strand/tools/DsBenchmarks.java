package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * The Durable Streams scenarios of {@code strand bench}: the same 256-byte JSON payloads as
 * {@link LogBenchmarks}, but over {@code /ds/bench/…} with the JDK's HTTP/1.1 client (keep-alive:
 * it reuses one connection per request in flight), so the protocol's cost beside the native
 * socket is visible. Each scenario warms up on its own stream ({@code …-warmup}) for the
 * {@link Warmup} period; the server's and this JVM's CPU are read around each timed window
 * ({@link CpuMeter}). Used by one thread at a time; the scenarios' own worker threads keep
 * their own histograms, merged after they finish.
 */
final class DsBenchmarks {
    private static final String JSON = "application/json";
    private final String base;
    private final String durability;
    private final boolean quick;
    private final Warmup warmup;
    private final CpuMeter cpu;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    /** {@code serverUrl} is the server's {@code http://host:port}; streams go under workspace {@code bench}. */
    DsBenchmarks(String serverUrl, String durability, boolean quick, Warmup warmup, CpuMeter cpu) {
        this.base = serverUrl + "/ds/bench/";
        this.durability = durability;
        this.quick = quick;
        this.warmup = warmup;
        this.cpu = cpu;
    }

    private int scale(int n) {
        return quick ? Math.max(1, n / 10) : n;
    }

    private static String batch(int size) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < size; i++) {
            b.append(i == 0 ? "" : ",").append(LogBenchmarks.PAYLOAD);
        }
        return b.append(']').toString();
    }

    private HttpResponse<byte[]> send(HttpRequest req, int... expected) {
        try {
            HttpResponse<byte[]> res = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
            for (int e : expected) {
                if (res.statusCode() == e) {
                    return res;
                }
            }
            throw new IllegalStateException(req.method() + " " + req.uri() + " -> " + res.statusCode() + " "
                    + new String(res.body(), java.nio.charset.StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void create(String stream) {
        send(HttpRequest.newBuilder(URI.create(base + stream)).header("Content-Type", JSON)
                .PUT(HttpRequest.BodyPublishers.noBody()).build(), 200, 201);
    }

    private HttpRequest post(String stream, String body) {
        return HttpRequest.newBuilder(URI.create(base + stream)).header("Content-Type", JSON)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    BenchReport appendSerial() throws InterruptedException {
        return appends("ds append serial", 1, scale(20_000), 1, "serial");
    }

    BenchReport appendBatched() throws InterruptedException {
        BenchReport r = appends("ds append batched", 4, scale(5_000), 100, "batched");
        r.unit = "entries";
        r.extra.put("batchSize", 100);
        return r;
    }

    /**
     * {@code n} POSTs of {@code perRequest} messages (one JSON value, or an array of them, which JSON
     * mode stores as that many messages), from {@code inFlight} threads each with one request
     * outstanding; counts entries.
     */
    private BenchReport appends(String scenario, int inFlight, int n, int perRequest, String stream) throws InterruptedException {
        BenchReport r = new BenchReport(scenario, durability);
        r.inFlight = inFlight;
        String body = perRequest == 1 ? LogBenchmarks.PAYLOAD : batch(perRequest);
        create(stream + "-warmup");
        create(stream);
        if (!warmup.off()) {
            Loop warm = loop(inFlight, Long.MAX_VALUE, System.nanoTime() + warmup.period.toNanos(), post(stream + "-warmup", body));
            r.warmup(new Warmup.Done(warm.nanos / 1e9, warm.operations));
        }
        CpuMeter.Sample start = cpu.sample();
        Loop run = loop(inFlight, n, Long.MAX_VALUE, post(stream, body));
        r.cpu(cpu, start);
        r.latency.add(run.latency);
        r.seconds = run.nanos / 1e9;
        r.count = run.operations * perRequest;
        r.extra.put("transport", "HTTP/1.1 keep-alive POST");
        return r;
    }

    /** What {@link #loop} did: completed requests, wall time, merged latencies. */
    private record Loop(long operations, long nanos, Histogram latency) {
    }

    /** {@code inFlight} threads sending {@code req} one at a time until {@code operations} are done or the deadline passes. */
    private Loop loop(int inFlight, long operations, long deadlineNanos, HttpRequest req) throws InterruptedException {
        AtomicLong started = new AtomicLong();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        List<Histogram> histograms = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < inFlight; t++) {
            Histogram h = new Histogram(BenchReport.HIGHEST_NANOS, 3);
            histograms.add(h);
            threads.add(Thread.ofPlatform().name("ds-bench-" + t).start(() -> {
                try {
                    while (failure.get() == null && started.getAndIncrement() < operations && System.nanoTime() < deadlineNanos) {
                        long t0 = System.nanoTime();
                        send(req, 204, 200);
                        h.recordValue(Math.max(1, Math.min(System.nanoTime() - t0, BenchReport.HIGHEST_NANOS)));
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        long nanos = System.nanoTime() - start;
        if (failure.get() != null) {
            throw failure.get();
        }
        Histogram all = new Histogram(BenchReport.HIGHEST_NANOS, 3);
        histograms.forEach(all::add);
        return new Loop(all.getTotalCount(), nanos, all);
    }

    /** Fills {@code stream} with {@code n} payloads, 1,000 per POST (not measured). */
    private void preload(String stream, int n) {
        create(stream);
        for (int done = 0; done < n; done += 1000) {
            send(post(stream, batch(Math.min(1000, n - done))), 204, 200);
        }
    }

    /** One catch-up read of a whole stream: GETs from the start until up-to-date. */
    private record CatchUp(long requests, long bytes, long nanos) {
    }

    private CatchUp catchUp(String stream, Histogram latency) {
        String offset = "-1";
        long requests = 0;
        long bytes = 0;
        long start = System.nanoTime();
        while (true) {
            long t0 = System.nanoTime();
            HttpResponse<byte[]> res = send(HttpRequest.newBuilder(URI.create(base + stream + "?offset=" + offset)).GET().build(), 200);
            if (latency != null) {
                latency.recordValue(Math.max(1, System.nanoTime() - t0));
            }
            requests++;
            bytes += res.body().length;
            offset = res.headers().firstValue("Stream-Next-Offset").orElseThrow();
            if (res.headers().firstValue("Stream-Up-To-Date").isPresent()) {
                return new CatchUp(requests, bytes, System.nanoTime() - start);
            }
        }
    }

    BenchReport catchUpRead() throws Exception {
        BenchReport r = new BenchReport("ds catch-up read", durability);
        r.unit = "entries";
        r.inFlight = 1;
        int total = scale(100_000);
        preload("catchup", total);
        preload("catchup-warmup", total);
        r.warmup(warmup.rounds(round -> catchUp("catchup-warmup", null).requests()));
        CpuMeter.Sample start = cpu.sample();
        CatchUp c = catchUp("catchup", r.latency);
        r.cpu(cpu, start);
        r.seconds = c.nanos() / 1e9;
        r.count = total;
        r.extra.put("MBps", Math.round(c.bytes() / 1e6 / r.seconds * 10) / 10.0).put("bytes", c.bytes())
                .put("requests", c.requests()).put("latencyIs", "one GET (a chunk of the stream)");
        return r;
    }

    /**
     * Serial POSTs of numbers to {@code stream} while an SSE reader follows it from "now"; each
     * delivery's latency (POST sent to its SSE data event parsed) goes into {@code latency} when
     * given. Runs {@code n} appends, or until {@code deadlineNanos}; returns the appends, once all
     * of them were delivered.
     */
    private long sseTail(String stream, long n, long deadlineNanos, Histogram latency) throws InterruptedException {
        create(stream);
        ConcurrentHashMap<Long, Long> sentAt = new ConcurrentHashMap<>();
        AtomicLong delivered = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch listening = new CountDownLatch(1);
        AtomicReference<Stream<String>> lines = new AtomicReference<>();
        Thread reader = Thread.ofPlatform().name("ds-bench-sse").start(() -> {
            String offset = "now";
            try {
                while (!Thread.currentThread().isInterrupted()) { // the server ends an SSE response after 60 s: resume
                    HttpResponse<Stream<String>> res = http.send(HttpRequest.newBuilder(
                            URI.create(base + stream + "?live=sse&offset=" + offset)).GET().build(), HttpResponse.BodyHandlers.ofLines());
                    if (res.statusCode() != 200) {
                        throw new IllegalStateException("SSE " + stream + " -> " + res.statusCode());
                    }
                    lines.set(res.body());
                    String event = null;
                    StringBuilder data = new StringBuilder();
                    for (String line : (Iterable<String>) res.body()::iterator) {
                        if (line.startsWith("event:")) {
                            event = line.substring(6).trim();
                        } else if (line.startsWith("data:")) {
                            data.append(data.isEmpty() ? "" : "\n").append(line.substring(5));
                        } else if (line.isEmpty() && event != null) {
                            JsonNode payload = Json.MAPPER.readTree(data.toString());
                            if (event.equals("data")) {
                                long now = System.nanoTime();
                                for (JsonNode item : payload) {
                                    Long t = sentAt.remove(item.asLong());
                                    if (t != null && latency != null) {
                                        latency.recordValue(Math.max(1, Math.min(now - t, BenchReport.HIGHEST_NANOS)));
                                    }
                                }
                                synchronized (delivered) {
                                    delivered.addAndGet(payload.size());
                                    delivered.notifyAll();
                                }
                            } else if (event.equals("control")) {
                                offset = payload.get("streamNextOffset").asText();
                                listening.countDown();
                            }
                            event = null;
                            data.setLength(0);
                        }
                    }
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
                listening.countDown();
                synchronized (delivered) {
                    delivered.notifyAll();
                }
            }
        });
        try {
            if (!listening.await(30, TimeUnit.SECONDS) || failure.get() != null) {
                throw new IllegalStateException("SSE reader of " + stream + " did not start", failure.get());
            }
            long appended = 0;
            while (appended < n && System.nanoTime() < deadlineNanos) {
                long value = appended + 1;
                sentAt.put(value, System.nanoTime());
                send(post(stream, Long.toString(value)), 204, 200);
                appended++;
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            synchronized (delivered) {
                while (delivered.get() < appended && failure.get() == null) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new IllegalStateException("SSE tail of " + stream + ": only " + delivered.get() + " of " + appended + " delivered");
                    }
                    TimeUnit.NANOSECONDS.timedWait(delivered, left);
                }
            }
            if (failure.get() != null) {
                throw new IllegalStateException("SSE reader of " + stream + " failed", failure.get());
            }
            return appended;
        } finally {
            reader.interrupt();
            Stream<String> open = lines.get();
            if (open != null) {
                open.close(); // ends the reader's blocking read
            }
            reader.join(TimeUnit.SECONDS.toMillis(10));
        }
    }

    BenchReport sseLiveTail() throws InterruptedException {
        BenchReport r = new BenchReport("ds SSE live-tail", durability);
        r.inFlight = 1;
        int n = scale(10_000);
        if (!warmup.off()) {
            long start = System.nanoTime();
            long ops = sseTail("tail-warmup", Long.MAX_VALUE, start + warmup.period.toNanos(), null);
            r.warmup(new Warmup.Done((System.nanoTime() - start) / 1e9, ops));
        }
        CpuMeter.Sample cpuStart = cpu.sample();
        long start = System.nanoTime();
        r.count = sseTail("tail", n, Long.MAX_VALUE, r.latency);
        r.seconds = (System.nanoTime() - start) / 1e9;
        r.cpu(cpu, cpuStart);
        r.extra.put("latencyIs", "POST sent -> SSE data event parsed by the follower");
        return r;
    }
}

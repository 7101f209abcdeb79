package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ServerProcess;
import io.strand.core.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Random;

/**
 * The cold-tier scenarios of {@code strand bench}: paging and replaying entries that live only in
 * the cold store, and the throughput of a roll and of a compaction. They run against their own
 * server in a child process (its own temp data dir, local-directory cold store, one-second hot
 * files) so that rolled entries really leave the hot tier and the hot scenarios are unaffected.
 *
 * <p>"Cold" is checked, not assumed: after a roll, {@code hotStoredFirst} from {@code GET …/cold}
 * must lie past every preloaded entry. The block cache (64 MiB, node-wide) is reported as measured:
 * read scenarios give the hits and misses of their timed pass; the first pass after a roll starts
 * with no block of the log cached (rolling does not fill the cache), a second pass shows the warm
 * figure next to it. Each scenario first warms up on logs of its own ({@code …-warmup}, made cold
 * the same way): what the warm-up leaves in the cache are their blocks, not the measured log's.
 * The CPU of this server's process and of this JVM is read around each timed window
 * ({@link CpuMeter}). Used by one thread at a time.
 */
final class ColdBenchmarks implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String durability;
    private final boolean quick;
    private final Warmup warmup;
    private final String[] randomPayloads;
    private Path data;
    private ServerProcess server;
    private CpuMeter meter;

    ColdBenchmarks(String durability, boolean quick, Warmup warmup) {
        this.durability = durability;
        this.quick = quick;
        this.warmup = warmup;
        Random random = new Random(42);
        randomPayloads = new String[4096]; // 256 bytes of JSON each, incompressible: roll and compaction move real bytes
        for (int i = 0; i < randomPayloads.length; i++) {
            byte[] b = new byte[189];
            random.nextBytes(b);
            randomPayloads[i] = "\"" + Base64.getEncoder().encodeToString(b) + "\"";
        }
    }

    private int scale(int n) {
        return quick ? Math.max(1, n / 10) : n;
    }

    private String url() throws IOException {
        if (server == null) {
            data = Files.createTempDirectory("strand-bench-cold-");
            server = ServerProcess.start(data, List.of("--durability", durability, "--auth", "false",
                    "--hot-roll-cycle", "secondly"), List.of("-Xmx2g"));
            meter = CpuMeter.forServer(server.process.pid());
        }
        return server.url;
    }

    // ---------------------------------------------------------------- scenarios

    BenchReport readPagination() throws Exception {
        BenchReport r = new BenchReport("cold read pagination", durability);
        r.unit = "entries";
        r.inFlight = 1;
        int total = scale(100_000);
        String log = "cold-pages";
        try (StrandSocket s = socket()) {
            LogBenchmarks.preload(s, log, total);
            LogBenchmarks.preload(s, log + "-warmup", total);
            makeCold(log, total);
            makeCold(log + "-warmup", total);
            r.warmup(warmup.loop(s, 1, new LogBenchmarks.Pages(log + "-warmup", total)));
            Pass cold = pages(s, log, total, r);
            Pass warm = pages(s, log, total, null);
            r.extra.put("pageSize", 100).put("transport", "websocket read op")
                    .put("cacheHits", cold.hits).put("cacheMisses", cold.misses)
                    .put("warmEntriesPerSec", Math.round(warm.entries / warm.seconds))
                    .put("warmCacheHits", warm.hits).put("warmCacheMisses", warm.misses);
        }
        return r;
    }

    BenchReport replay() throws Exception {
        BenchReport r = new BenchReport("cold replay", durability);
        r.unit = "entries";
        int total = scale(100_000);
        String log = "cold-replay";
        try (StrandSocket w = socket()) {
            LogBenchmarks.preload(w, log, total);
            LogBenchmarks.preload(w, log + "-warmup", total);
        }
        makeCold(log, total);
        makeCold(log + "-warmup", total);
        try (StrandSocket s = socket()) {
            r.warmup(warmup.rounds(round -> {
                LogBenchmarks.replay(s, log + "-warmup", total, "warm-" + round, null);
                return 1;
            }));
        }
        JsonNode before = status(log).path("node");
        try (StrandSocket s = socket()) {
            CpuMeter.Sample start = cpu().sample();
            LogBenchmarks.Replay replay = LogBenchmarks.replay(s, log, total, "measured", r);
            r.cpu(cpu(), start);
            r.seconds = replay.nanos() / 1e9;
            r.count = replay.entries();
        }
        JsonNode after = status(log).path("node");
        r.extra.put("latencyIs", "gap between entry frames")
                .put("cacheHits", after.path("cacheHits").asLong() - before.path("cacheHits").asLong())
                .put("cacheMisses", after.path("cacheMisses").asLong() - before.path("cacheMisses").asLong());
        return r;
    }

    BenchReport roll() throws Exception {
        BenchReport r = new BenchReport("roll", durability);
        r.unit = "entries";
        r.inFlight = 1;
        int total = scale(200_000);
        r.warmup(warmup.rounds(round -> {
            preloadRandom("roll-warmup-" + round, total);
            http("POST", "/v1/ws/bench/logs/roll-warmup-" + round + "/cold/roll", "");
            return 1;
        }));
        String log = "roll";
        preloadRandom(log, total);
        long rawBytes = http("GET", "/v1/ws/bench/logs/" + log, null).path("bytes").asLong();
        CpuMeter.Sample cpuStart = cpu().sample();
        long start = System.nanoTime();
        JsonNode rolled = http("POST", "/v1/ws/bench/logs/" + log + "/cold/roll", "");
        long nanos = System.nanoTime() - start;
        r.cpu(cpu(), cpuStart);
        r.record(nanos);
        JsonNode s = status(log);
        r.seconds = nanos / 1e9;
        r.count = rolled.path("rolledEntries").asLong();
        r.extra.put("rawMiB", mib(rawBytes)).put("storedMiB", mib(s.path("bytes").asLong()))
                .put("rawMiBPerSec", mib(rawBytes / r.seconds)).put("storedMiBPerSec", mib(s.path("bytes").asLong() / r.seconds))
                .put("segments", s.path("segments").asInt())
                .put("payload", "256 B random base64 per entry").put("latencyIs", "one POST cold/roll of every hot entry")
                .put("warmupIs", "rounds of preload + roll on logs roll-warmup-N");
        return r;
    }

    BenchReport compact() throws Exception {
        BenchReport r = new BenchReport("compact", durability);
        r.unit = "entries";
        r.inFlight = 1;
        r.warmup(warmup.rounds(round -> {
            String warm = "compact-warmup-" + round;
            coldSegments(warm);
            http("POST", "/v1/ws/bench/logs/" + warm + "/cold/compact", "{\"targetBytes\":1073741824,\"graceSeconds\":0}");
            return 1;
        }));
        String log = "compact";
        coldSegments(log);
        JsonNode before = status(log);
        long storedBefore = before.path("bytes").asLong();
        CpuMeter.Sample cpuStart = cpu().sample();
        long start = System.nanoTime();
        JsonNode report = http("POST", "/v1/ws/bench/logs/" + log + "/cold/compact", "{\"targetBytes\":1073741824,\"graceSeconds\":0}");
        long nanos = System.nanoTime() - start;
        r.cpu(cpu(), cpuStart);
        r.record(nanos);
        r.seconds = nanos / 1e9;
        r.count = before.path("entries").asLong();
        JsonNode verify = http("GET", "/v1/ws/bench/logs/" + log + "/cold/verify", null);
        if (!verify.path("ok").asBoolean()) {
            throw new IllegalStateException("compact: verify failed afterwards: " + verify);
        }
        r.extra.put("segmentsBefore", report.path("segmentsBefore").asInt()).put("segmentsAfter", report.path("segmentsAfter").asInt())
                .put("storedMiB", mib(storedBefore)).put("storedMiBPerSec", mib(storedBefore / r.seconds))
                .put("payload", "256 B random base64 per entry")
                .put("latencyIs", "one POST cold/compact (read, verify, merge, upload, commit, delete with no grace)")
                .put("warmupIs", "rounds of build segments + compact on logs compact-warmup-N");
        return r;
    }

    /** Builds {@code log}'s cold history as {@code scale(100)} segments of 2,000 random entries (one roll each). */
    private void coldSegments(String log) throws Exception {
        int segments = scale(100);
        int perSegment = 2_000;
        try (StrandSocket s = socket()) {
            for (int i = 0; i < segments; i++) {
                int base = i * perSegment;
                LogBenchmarks.preloadWith(s, log, perSegment, k -> randomPayloads[(int) ((base + k) % randomPayloads.length)]);
                http("POST", "/v1/ws/bench/logs/" + log + "/cold/roll", "");
            }
        }
    }

    private void preloadRandom(String log, int total) throws IOException {
        try (StrandSocket s = socket()) {
            LogBenchmarks.preloadWith(s, log, total, i -> randomPayloads[(int) (i % randomPayloads.length)]);
        }
    }

    // ---------------------------------------------------------------- helpers

    private record Pass(long entries, double seconds, long hits, long misses) {
    }

    /** Pages of 100 over seqs 1..total through the WebSocket read op, one in flight; latencies and time into {@code r} when given. */
    private Pass pages(StrandSocket s, String log, int total, BenchReport r) throws Exception {
        JsonNode before = status(log).path("node");
        LogBenchmarks.Pages pages = new LogBenchmarks.Pages(log, total);
        CpuMeter.Sample start = cpu().sample();
        ClosedLoop.Result result = ClosedLoop.run(s, 1, (total + 99) / 100, pages);
        if (r != null) {
            r.cpu(cpu(), start);
            r.add(result, pages.entries.get());
        }
        JsonNode after = status(log).path("node");
        return new Pass(pages.entries.get(), result.seconds(), after.path("cacheHits").asLong() - before.path("cacheHits").asLong(),
                after.path("cacheMisses").asLong() - before.path("cacheMisses").asLong());
    }

    /**
     * Rolls everything and makes sure seqs 1..{@code n} are gone from the hot files: one more entry
     * in a later one-second cycle, then {@code POST cold/roll}, which drops every older hot file.
     */
    private void makeCold(String log, long n) throws Exception {
        for (int attempt = 0; attempt < 5; attempt++) {
            Thread.sleep(1_100 - System.currentTimeMillis() % 1_000); // into the next second: a new hot file
            http("POST", "/v1/ws/bench/logs/" + log + "/entries", "{\"data\":\"marker\"}");
            http("POST", "/v1/ws/bench/logs/" + log + "/cold/roll", "");
            if (status(log).path("hotStoredFirst").asLong() > n) {
                return;
            }
        }
        throw new IllegalStateException(log + ": rolled entries stayed in the hot files: " + status(log));
    }

    private JsonNode status(String log) throws Exception {
        return http("GET", "/v1/ws/bench/logs/" + log + "/cold", null);
    }

    private JsonNode http(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url() + path)).timeout(Duration.ofMinutes(10))
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException(method + " " + path + ": HTTP " + r.statusCode() + " " + r.body());
        }
        return Json.parse(r.body());
    }

    private static double mib(double bytes) {
        return Math.round(bytes / 1048576.0 * 10) / 10.0;
    }

    /** The CPU meter of this server's process (started first if need be). */
    private CpuMeter cpu() throws IOException {
        url();
        return meter;
    }

    private StrandSocket socket() throws IOException {
        return new StrandSocket(url().replace("http://", "ws://") + "/v1/ws/bench/socket", null);
    }

    @Override
    public void close() throws Exception {
        if (server != null) {
            server.close();
            BenchCommand.deleteTree(data);
        }
    }
}

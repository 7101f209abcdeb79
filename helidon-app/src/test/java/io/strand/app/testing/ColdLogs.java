package io.strand.app.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.coldtier.S3ProxyFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What the cold-tier ITs share: entries whose data names their own seq ({@code {"n":seq}}), so a
 * read can check content as well as order; dense forward and backward reads; waiting on a
 * condition with a deadline; and server settings for a file or an S3 (s3proxy) cold store.
 */
public final class ColdLogs {
    private ColdLogs() {
    }

    /** Settings that make rolled entries leave the hot files at once (one-second cycles) past {@code hotMaxEntries}. */
    public static Map<String, String> settings(long hotMaxEntries) {
        Map<String, String> env = new HashMap<>();
        env.put("STRAND_HOT_MAX_ENTRIES", String.valueOf(hotMaxEntries));
        env.put("STRAND_HOT_ROLL_CYCLE", "secondly");
        return env;
    }

    /**
     * The server's S3 client finds credentials through the SDK's default chain; its first link is
     * the {@code aws.accessKeyId}/{@code aws.secretAccessKey} system properties, which this sets to
     * the fixture's keys (a child server would get the same as {@code -D} flags).
     */
    public static void useFixtureCredentials() {
        System.setProperty("aws.accessKeyId", S3ProxyFixture.ACCESS_KEY);
        System.setProperty("aws.secretAccessKey", S3ProxyFixture.SECRET_KEY);
    }

    /** Starts a transient s3proxy holding bucket {@code cold}, its keys set for a server started in this JVM. */
    public static S3ProxyFixture startS3() {
        useFixtureCredentials();
        return S3ProxyFixture.startTransient("cold");
    }

    /** Adds the settings for {@code s3://bucket/prefix} on the fixture. */
    public static Map<String, String> withS3(Map<String, String> env, S3ProxyFixture s3, String bucket, String prefix) {
        env.put("STRAND_COLD", "s3://" + bucket + "/" + prefix);
        env.put("STRAND_S3_ENDPOINT", s3.endpoint().toString());
        env.put("STRAND_S3_REGION", "us-east-1");
        env.put("STRAND_S3_PATH_STYLE", "true");
        return env;
    }

    /** The manifest of {@code ws/log} as stored now in a {@code file:} cold directory {@code shared} (generation 0 when none). */
    public static io.strand.coldtier.Manifest storedManifest(Path shared, String ws, String log) {
        Path file = shared.resolve(ws).resolve(log).resolve("manifest.json");
        try {
            return io.strand.coldtier.Manifest.fromJson(java.nio.file.Files.readAllBytes(file), file.toString());
        } catch (java.nio.file.NoSuchFileException e) {
            return io.strand.coldtier.Manifest.empty(ws, log);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String logPath(String ws, String log) {
        return "/v1/ws/" + ws + "/logs/" + log;
    }

    /** A batch body of {@code n} entries {@code {"n":from}}, {@code {"n":from+1}}, … */
    public static String batch(long from, int n) {
        StringBuilder sb = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"data\":{\"n\":").append(from + i).append("}}");
        }
        return sb.append("]}").toString();
    }

    /** The {@code "entries"} array of {@code n} entries whose data is the string of {@code chars} times 'x' (large batches). */
    public static String stringEntries(int n, int chars) {
        String data = "x".repeat(chars);
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"data\":\"").append(data).append("\"}");
        }
        return sb.append(']').toString();
    }

    /**
     * A batch body of {@code n} entries {@code {"p":producer,"b":seq,"i":i}} sent by {@code producer} as its
     * {@code producerSeq} {@code seq}, so a retry after a 503 (outcome unknown) lands once.
     */
    public static String producerBatch(String producer, long seq, int n) {
        StringBuilder sb = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"data\":{\"p\":\"").append(producer).append("\",\"b\":").append(seq)
                    .append(",\"i\":").append(i).append("}}");
        }
        return sb.append("],\"producerId\":\"").append(producer).append("\",\"producerSeq\":").append(seq).append('}').toString();
    }

    /** Appends {@code n} entries that must land at seqs {@code from..from+n-1}. */
    public static void append(Http http, String ws, String log, long from, int n) {
        Http.Reply r = http.post(logPath(ws, log) + "/entries", batch(from, n));
        assertEquals(200, r.status(), r.body());
        assertEquals(from, r.json().get("firstSeq").asLong(), "appended at the expected seq");
    }

    /** Checks one entry: its data names its seq. */
    public static void checkEntry(long expectedSeq, JsonNode e, String when) {
        assertEquals(expectedSeq, e.get("seq").asLong(), when + ": seq order");
        assertEquals(expectedSeq, e.get("data").get("n").asLong(), when + ": content of seq " + expectedSeq);
    }

    /** Forward pages of {@code limit} from seq 1: exactly 1..head, each once, in order, with their content. Returns head. */
    public static long readAllForward(Http http, String ws, String log, int limit, String when) {
        long next = 1;
        long expect = 1;
        long head = -1;
        while (true) {
            Http.Reply r = http.get(logPath(ws, log) + "/entries?from=" + next + "&limit=" + limit);
            assertEquals(200, r.status(), when + ": " + r.body());
            JsonNode page = r.json();
            head = page.get("head").asLong();
            if (page.get("entries").isEmpty()) {
                break;
            }
            for (JsonNode e : page.get("entries")) {
                checkEntry(expect++, e, when);
            }
            next = page.get("next").asLong();
        }
        assertEquals(head, expect - 1, when + ": forward pages end at the head");
        return head;
    }

    /** Backward pages from the end down to seq 1: exactly head..1, each once. Returns the count. */
    public static long readAllBackward(Http http, String ws, String log, int limit, long head, String when) {
        String before = "end";
        long expectTop = head;
        long count = 0;
        while (true) {
            Http.Reply r = http.get(logPath(ws, log) + "/entries?before=" + before + "&limit=" + limit);
            assertEquals(200, r.status(), when + ": " + r.body());
            JsonNode page = r.json();
            JsonNode entries = page.get("entries");
            if (entries.isEmpty()) {
                break;
            }
            long expect = expectTop - entries.size() + 1;
            for (JsonNode e : entries) {
                checkEntry(expect++, e, when + " (backward)");
            }
            count += entries.size();
            expectTop -= entries.size();
            long prev = page.get("prev").asLong();
            if (prev <= 1) {
                break;
            }
            before = String.valueOf(prev);
        }
        assertEquals(0, expectTop, when + ": backward pages reach seq 1");
        return count;
    }

    /** Polls {@code condition} every 50 ms until it holds or {@code timeout} passes (then fails naming {@code what}). */
    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }

    public static JsonNode info(Http http, String ws, String log) {
        Http.Reply r = http.get(logPath(ws, log));
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    public static JsonNode coldStatus(Http http, String ws, String log) {
        Http.Reply r = http.get(logPath(ws, log) + "/cold");
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    public static JsonNode verify(Http http, String ws, String log) {
        Http.Reply r = http.get(logPath(ws, log) + "/cold/verify");
        assertEquals(200, r.status(), r.body());
        return r.json();
    }
}

package io.strand.app.ds;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.stores.Stores;
import io.strand.core.Durability;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster replicas of the Durable Streams state: the same calls at the same stamps give the same
 * answers, rows and entries on every replica, and a replica rebuilt from a snapshot of another's
 * directory decides a sliding-TTL expiry as the others do.
 */
class DsStatesTest {
    private static final ServerConfig CONFIG = ServerConfig.from(Map.of("STRAND_DOC_CAPACITY", "20000"));

    private static Stores open(Path dir) {
        return Stores.open("test", CONFIG, dir, Durability.OS, 1, new StrandMetrics(), null);
    }

    private static DsCall call(String method, String path, String body, String... headers) {
        Map<String, String> h = new LinkedHashMap<>();
        for (int i = 0; i < headers.length; i += 2) {
            h.put(headers[i].toLowerCase(java.util.Locale.ROOT), headers[i + 1]);
        }
        DsCall c = new DsCall(method, "w", path, "http://n1/ds/w/" + path, "ds-" + path.replace('/', '-'), h,
                body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8));
        return DsCall.read(c.bytes()); // as a replica gets it
    }

    /** Every file under {@code dir/ds}, by relative name. */
    private static Map<String, String> rows(Path dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        Path root = dir.resolve("ds");
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                out.put(root.relativize(f).toString(), Files.readString(f));
            }
        }
        return out;
    }

    @Test
    void replicasApplyingTheSameCallsShouldAnswerAlikeAndHoldTheSameRows(@TempDir Path dir) throws IOException {
        List<DsCall> calls = List.of(
                call("PUT", "chat", null, "Content-Type", "application/json", "Stream-TTL", "60"),
                call("POST", "chat", "[{\"a\":1},{\"a\":2}]", "Content-Type", "application/json", "Producer-Id", "p",
                        "Producer-Epoch", "0", "Producer-Seq", "0"),
                call("POST", "chat", "{\"a\":1}", "Content-Type", "application/json", "Producer-Id", "p",
                        "Producer-Epoch", "0", "Producer-Seq", "0"), // a retry: 204
                call("POST", "chat", "{\"a\":3}", "Content-Type", "application/json", "Producer-Id", "p",
                        "Producer-Epoch", "0", "Producer-Seq", "2"), // a gap: 409
                call("POST", "chat", "{}", "Content-Type", "text/plain"), // another content type: 409
                call("PUT", "fork", null, "Stream-Forked-From", "chat", "Stream-Fork-Offset", "0000000000000001_0000000000000000"),
                call("WAKE", "chat", "{\"wake\":1}"), // a pull-wake event
                call("POST", "chat", null, "Stream-Closed", "true"),
                call("POST", "chat", "{\"a\":4}", "Content-Type", "application/json"), // closed: 409
                call("PUT", "brief", "x", "Content-Type", "text/plain", "Stream-TTL", "1"),
                call("TOUCH", "chat", null),
                call("EXPIRE", "brief", null),
                call("DELETE", "fork", null));
        long[] stamps = {1_000, 1_100, 1_200, 1_300, 1_400, 1_500, 1_550, 1_600, 1_700, 1_800, 30_000, 30_100, 30_200};
        int[] statuses = {201, 200, 204, 409, 409, 201, 204, 204, 409, 201, 204, 204, 204};
        List<Path> dirs = List.of(dir.resolve("a"), dir.resolve("b"));
        List<List<String>> answers = new ArrayList<>();
        try (DsStates states = new DsStates(true, Duration.ofMillis(500))) {
            for (Path d : dirs) {
                try (Stores stores = open(d)) {
                    List<String> got = new ArrayList<>();
                    for (int i = 0; i < calls.size(); i++) {
                        DsAnswer a = DsAnswer.read(states.apply(stores, calls.get(i).bytes(), stamps[i]));
                        assertEquals(statuses[i], statusOf(a), calls.get(i).method() + " " + calls.get(i).path());
                        got.add(java.util.Arrays.toString(a.bytes()));
                    }
                    assertEquals(List.of(), states.of(stores).expired(30_200), "brief was expired at the leader's stamp");
                    assertEquals(3, stores.logs().info("w", "ds-chat").orElseThrow().head());
                    assertEquals(1_100, stores.logs().readForward("w", "ds-chat", 1, 10).entries().getFirst().ts(), "entries carry the stamp");
                    states.closing(stores);
                    answers.add(got);
                }
            }
        }
        assertEquals(answers.get(0), answers.get(1));
        assertEquals(rows(dirs.get(0)), rows(dirs.get(1)));
    }

    /**
     * A GET's extension of a sliding TTL lives in memory until a snapshot: the snapshot must carry
     * it, or a replica rebuilt from it would expire a stream the others keep.
     */
    @Test
    void aReplicaRebuiltFromASnapshotShouldDecideASlidingExpiryAsTheOthers(@TempDir Path dir) throws IOException {
        Path a = dir.resolve("a");
        Path c = dir.resolve("c");
        try (DsStates states = new DsStates(true, Duration.ofMillis(500)); Stores storesA = open(a)) {
            assertEquals(201, statusOf(DsAnswer.read(states.apply(storesA,
                    call("PUT", "s", null, "Content-Type", "text/plain", "Stream-TTL", "10").bytes(), 1_000))));
            assertEquals(204, statusOf(DsAnswer.read(states.apply(storesA, call("TOUCH", "s", null).bytes(), 8_000))));
            states.beforeSnapshot(storesA);
            copy(a, c);
            try (Stores storesC = open(c)) {
                for (Stores s : List.of(storesA, storesC)) { // touched at 8 s with a 10 s TTL: alive at 15 s
                    states.apply(s, call("EXPIRE", "s", null).bytes(), 15_000);
                    org.junit.jupiter.api.Assertions.assertNotNull(states.of(s).registry.find("w", "s"), s.dir() + " keeps the stream");
                }
                states.closing(storesC);
            }
            states.closing(storesA);
        }
    }

    private static int statusOf(DsAnswer a) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(a.bytes());
        return b.getShort() & 0xffff;
    }

    /** A copy of a store directory as a snapshot holds it (the doc store left out: no stream uses it). */
    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path rel = from.relativize(f);
                if (rel.toString().startsWith("docs")) {
                    continue;
                }
                Path t = to.resolve(rel.toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    try {
                        Files.copy(f, t);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            }
        }
    }

    @Test
    void aCallShouldReadBackAsWritten() {
        DsCall c = call("POST", "a/b", "{\"x\":1}", "Content-Type", "application/json", "Producer-Id", "p");
        DsCall back = DsCall.read(c.bytes());
        assertEquals(c.headers(), back.headers());
        assertEquals(c.location(), back.location());
        assertArrayEquals(c.body(), back.body());
    }
}

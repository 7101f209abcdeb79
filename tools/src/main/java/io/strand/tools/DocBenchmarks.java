package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The doc scenarios of {@code strand bench}: 16 client connections with one request in flight
 * each (like redis-benchmark's clients) against one key, or a single serial client. Load is a
 * {@link ClosedLoop}; each scenario first warms up on its own docs ({@code …-warmup-k}: the CAS rows
 * and incr contended on a fresh doc every {@link Warmup#OBJECT_PERIOD}, as their measured run starts
 * on a new one). The CPU
 * figures of a row ({@link CpuMeter}) are per counted unit: per attempt for the debit rows, per
 * commit for the others (CAS contended also gives them per attempt, conflicts included).
 */
final class DocBenchmarks {
    private static final int CLIENTS = 16;
    private final String wsUrl;
    private final String token;
    private final String durability;
    private final boolean quick;
    private final Warmup warmup;
    private final CpuMeter cpu;

    DocBenchmarks(String wsUrl, String token, String durability, boolean quick, Warmup warmup, CpuMeter cpu) {
        this.wsUrl = wsUrl;
        this.token = token;
        this.durability = durability;
        this.quick = quick;
        this.warmup = warmup;
        this.cpu = cpu;
    }

    private int scale(int n) {
        return quick ? Math.max(1, n / 10) : n;
    }

    /** Sockets of one many-connection run, all read by one {@link SocketLoop}; closing closes both. */
    private record Connections(SocketLoop loop, List<StrandSocket> sockets) implements AutoCloseable {
        @Override
        public void close() {
            sockets.forEach(StrandSocket::close);
            loop.close();
        }
    }

    private Connections connect(int clients) {
        SocketLoop loop = new SocketLoop();
        List<StrandSocket> sockets = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            sockets.add(new StrandSocket(wsUrl, token, loop));
        }
        return new Connections(loop, sockets);
    }

    private void put(String doc, String value) {
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            ClosedLoop.requireOk(s.call("doc.put", "\"doc\":\"" + doc + "\",\"value\":" + value).join());
        }
    }

    /**
     * {@code doc.cas} of {@code n} from its expected value to one more. The first request of an
     * operation expects the highest value seen so far; a {@code cas_conflict} retries with the
     * {@code current} value the error carries (SPEC §5). Thread-safe (shared by every lane).
     */
    private static final class Cas implements ClosedLoop.Workload {
        private final String doc;
        private final boolean retry;
        final AtomicLong seen = new AtomicLong();
        final AtomicLong conflicts = new AtomicLong();

        Cas(String doc, boolean retry) {
            this.doc = doc;
            this.retry = retry;
        }

        @Override
        public String op() {
            return "doc.cas";
        }

        @Override
        public String request(long n) {
            return fields(seen.get());
        }

        private String fields(long expect) {
            return "\"doc\":\"" + doc + "\",\"path\":\"n\",\"expect\":" + expect + ",\"value\":" + (expect + 1);
        }

        @Override
        public String next(long n, JsonNode reply) {
            if (reply.path("ok").asBoolean()) {
                seen.accumulateAndGet(reply.path("value").path("n").asLong(), Math::max);
                return null;
            }
            JsonNode error = reply.path("error");
            if (!retry || !"cas_conflict".equals(error.path("code").asText()) || !error.path("current").canConvertToLong()) {
                throw new IllegalStateException("CAS failed: " + reply);
            }
            conflicts.incrementAndGet();
            long current = error.path("current").asLong();
            seen.accumulateAndGet(current, Math::max);
            return fields(current);
        }
    }

    /** A CAS workload on doc {@code doc}, put at {@code {"n":0}} first: each warm-up object of the CAS rows. */
    private Cas freshCas(String doc, boolean retry) {
        put(doc, "{\"n\":0}");
        return new Cas(doc, retry);
    }

    BenchReport casSerial() {
        BenchReport r = new BenchReport("CAS serial", durability);
        r.inFlight = 1;
        r.unit = "commits";
        int n = scale(5_000);
        put("cas-serial", "{\"n\":0}");
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            r.warmup(warmup.freshLoop(List.of(s), 1, k -> freshCas("cas-serial-warmup-" + k, false)));
            CpuMeter.Sample start = cpu.sample();
            r.add(ClosedLoop.run(s, 1, n, new Cas("cas-serial", false)), n); // a conflict fails the run
            r.cpu(cpu, start);
        }
        verify("cas-serial", "n", n);
        return r;
    }

    BenchReport casContended() {
        BenchReport r = new BenchReport("CAS contended", durability);
        r.inFlight = CLIENTS;
        r.unit = "commits";
        long commits = (long) CLIENTS * scale(300);
        put("cas-hot", "{\"n\":0}");
        Cas cas = new Cas("cas-hot", true);
        try (Connections connections = connect(CLIENTS)) {
            List<StrandSocket> sockets = connections.sockets();
            r.warmup(warmup.freshLoop(sockets, 1, k -> freshCas("cas-hot-warmup-" + k, true)));
            CpuMeter.Sample start = cpu.sample();
            r.add(ClosedLoop.run(sockets, 1, commits, null, cas), commits);
            r.cpu(cpu, start);
        }
        long conflicts = cas.conflicts.get();
        if (r.cpu.serverKnown()) {
            r.extra.put("serverCpuUsPerAttempt", CpuMeter.rounded(r.cpu.serverMicrosPer(commits + conflicts)));
        }
        r.extra.put("connections", CLIENTS);
        r.extra.put("conflicts", conflicts);
        r.extra.put("conflictPct", Math.round(1000.0 * conflicts / (commits + conflicts)) / 10.0);
        r.extra.put("latencyIs", "one doc.cas round trip, conflicted attempts included; a retry expects the error's current value");
        verify("cas-hot", "n", commits);
        return r;
    }

    BenchReport incrContended() {
        BenchReport r = new BenchReport("incr contended", durability);
        r.inFlight = CLIENTS;
        r.unit = "commits";
        long n = (long) CLIENTS * scale(10_000); // about 10 s: a 2 s run moved ±20 % with the disk's minute-to-minute flush latency
        try (Connections connections = connect(CLIENTS)) {
            List<StrandSocket> sockets = connections.sockets();
            r.warmup(warmup.freshLoop(sockets, 1,
                    k -> LogBenchmarks.constant("doc.incr", "\"doc\":\"incr-hot-warmup-" + k + "\",\"path\":\"n\",\"delta\":1")));
            CpuMeter.Sample start = cpu.sample();
            r.add(ClosedLoop.run(sockets, 1, n, null,
                    LogBenchmarks.constant("doc.incr", "\"doc\":\"incr-hot\",\"path\":\"n\",\"delta\":1")), n);
            r.cpu(cpu, start);
        }
        r.extra.put("connections", CLIENTS);
        verify("incr-hot", "n", n);
        return r;
    }

    /**
     * Debits of 1 with floor 0, as a {@code doc.incr} or as a {@code txn} that also appends one
     * {@code charge} entry: an ok or a {@code floor_violation} is expected, anything else fails the run.
     */
    private static final class Debit implements ClosedLoop.Workload {
        private final String op;
        private final String fields;
        final AtomicLong succeeded = new AtomicLong();
        final AtomicLong refused = new AtomicLong();

        private Debit(String op, String fields) {
            this.op = op;
            this.fields = fields;
        }

        /** {@code floor-debit}: one incr with floor 0. */
        static Debit incr(String doc) {
            return new Debit("doc.incr", "\"doc\":\"" + doc + "\",\"path\":\"balance\",\"delta\":-1,\"floor\":0");
        }

        /** {@code txn-debit}: the same debit and, with it, one charge entry appended to {@code log}. */
        static Debit txn(String doc, String log) {
            return new Debit("txn", "\"docs\":{\"" + doc + "\":{\"ops\":[{\"op\":\"incr\",\"path\":\"balance\",\"delta\":-1,\"floor\":0}]}},"
                    + "\"append\":[{\"log\":\"" + log + "\",\"data\":{\"charge\":1}}]");
        }

        @Override
        public String op() {
            return op;
        }

        @Override
        public String request(long n) {
            return fields;
        }

        @Override
        public String next(long n, JsonNode reply) {
            if (reply.path("ok").asBoolean()) {
                succeeded.incrementAndGet();
            } else if ("floor_violation".equals(reply.path("error").path("code").asText())) {
                refused.incrementAndGet();
            } else {
                throw new IllegalStateException("unexpected reply " + reply);
            }
            return null;
        }
    }

    BenchReport floorDebit() throws Exception {
        BenchReport r = new BenchReport("floor debit", durability);
        r.inFlight = CLIENTS;
        r.unit = "attempts";
        int balance = scale(80_000); // 160,000 attempts, about 7 s (see incrContended)
        long attempts = 2L * balance;
        Debit debit = Debit.incr("wallet");
        try (Connections connections = connect(CLIENTS)) {
            List<StrandSocket> sockets = connections.sockets();
            r.warmup(warmup.rounds(round -> { // each round spends a fresh balance, as the run does
                String wallet = "wallet-warmup-" + round;
                put(wallet, "{\"balance\":" + balance + "}");
                return ClosedLoop.run(sockets, 1, attempts, null, Debit.incr(wallet)).operations();
            }));
            put("wallet", "{\"balance\":" + balance + "}");
            CpuMeter.Sample start = cpu.sample();
            r.add(ClosedLoop.run(sockets, 1, attempts, null, debit), attempts);
            r.cpu(cpu, start);
        }
        r.extra.put("connections", CLIENTS);
        r.extra.put("succeeded", debit.succeeded.get());
        r.extra.put("refusedAtFloor", debit.refused.get());
        r.extra.put("exact", debit.succeeded.get() == balance);
        verify("wallet", "balance", 0);
        if (debit.succeeded.get() != balance) {
            throw new IllegalStateException("floor debit not exact: " + debit.succeeded.get() + " succeeded for a balance of " + balance);
        }
        return r;
    }

    /** {@code floor-debit} as a txn that also appends a charge entry per successful debit; checks both counts. */
    BenchReport txnDebit() throws Exception {
        BenchReport r = new BenchReport("txn debit", durability);
        r.inFlight = CLIENTS;
        r.unit = "attempts";
        int balance = scale(40_000); // 80,000 attempts
        long attempts = 2L * balance;
        Debit debit = Debit.txn("txn-wallet", "txn-charges");
        try (Connections connections = connect(CLIENTS)) {
            List<StrandSocket> sockets = connections.sockets();
            r.warmup(warmup.rounds(round -> {
                String wallet = "txn-wallet-warmup-" + round;
                put(wallet, "{\"balance\":" + balance + "}");
                return ClosedLoop.run(sockets, 1, attempts, null, Debit.txn(wallet, "txn-charges-warmup-" + round)).operations();
            }));
            put("txn-wallet", "{\"balance\":" + balance + "}");
            CpuMeter.Sample start = cpu.sample();
            r.add(ClosedLoop.run(sockets, 1, attempts, null, debit), attempts);
            r.cpu(cpu, start);
        }
        r.extra.put("connections", CLIENTS);
        r.extra.put("succeeded", debit.succeeded.get());
        r.extra.put("refusedAtFloor", debit.refused.get());
        long charges;
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            charges = ClosedLoop.requireOk(s.call("read", "\"log\":\"txn-charges\",\"before\":\"end\",\"limit\":1").join())
                    .get("head").asLong();
        }
        r.extra.put("chargeEntries", charges);
        r.extra.put("exact", debit.succeeded.get() == balance && charges == balance);
        r.extra.put("latencyIs", "one txn round trip: a floor-0 debit and, when it succeeds, one charge entry, one durable write");
        verify("txn-wallet", "balance", 0);
        if (debit.succeeded.get() != balance || charges != balance) {
            throw new IllegalStateException("txn debit not exact: " + debit.succeeded.get() + " succeeded, " + charges
                    + " charge entries, for a balance of " + balance);
        }
        return r;
    }

    private void verify(String doc, String field, long expected) {
        try (StrandSocket s = new StrandSocket(wsUrl, token)) {
            long actual = ClosedLoop.requireOk(s.call("doc.get", "\"doc\":\"" + doc + "\"").join()).get("value").get(field).asLong();
            if (actual != expected) {
                throw new IllegalStateException(doc + "." + field + " is " + actual + ", expected " + expected);
            }
        }
    }
}

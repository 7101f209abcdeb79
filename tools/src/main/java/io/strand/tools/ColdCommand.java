package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ServerConfig;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code strand cold status|roll|compact|verify}: the cold tier of one log, through the server's
 * admin endpoints ({@code /v1/ws/{ws}/logs/{log}/cold…}). Human output by default, the server's JSON
 * with {@code --json}; while a long request runs, an elapsed-time line on the terminal (stderr, only
 * when there is a console). Exit codes: 0 ok, 1 a failure or any verify problem, 2 usage.
 */
@Command(name = "cold", mixinStandardHelpOptions = true,
        description = "Inspect and maintain one log's cold tier: status, roll, compact, verify.",
        subcommands = {ColdCommand.Status.class, ColdCommand.Roll.class, ColdCommand.Compact.class,
                ColdCommand.Verify.class, CommandLine.HelpCommand.class},
        footer = {"", "Examples:", "  strand cold status --log chat", "  strand cold verify --log chat"})
final class ColdCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "choose one of: status, roll, compact, verify");
    }

    /**
     * Which server and log, as the other client commands take them: {@code --url}/{@code STRAND_URL},
     * {@code --token}/{@code STRAND_TOKEN} (else {@code DATA/root.token} when present),
     * {@code -w}/{@code STRAND_WS}, {@code --log}, {@code --json}. A picocli mixin.
     */
    static final class Target {
        @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
        CommandLine.Model.CommandSpec command;

        @Mixin
        ClientOptions client;

        @Option(names = "--log", required = true, description = "The log.")
        String log;

        boolean json() {
            return client.json;
        }

        PrintWriter out() {
            return client.out();
        }

        String path(String suffix) {
            return client.wsPath() + "/logs/" + StrandClient.segment(log) + "/cold" + suffix;
        }

        String name() {
            return client.ws + "/" + log;
        }

        /** Verify and compaction of a big log take a while: no 60 s request timeout here. */
        private StrandClient http() {
            return new StrandClient(client.url, client.token(), Duration.ofHours(1));
        }

        JsonNode get(String suffix) {
            return http().get(path(suffix));
        }

        JsonNode post(String suffix, JsonNode body) {
            return http().post(path(suffix), body);
        }

        JsonNode delete(String suffix) {
            return http().delete(path(suffix));
        }

        /** Runs one request, showing elapsed time on an interactive terminal meanwhile. */
        <T> T withProgress(String what, Supplier<T> work) {
            if (System.console() == null) {
                return work.get();
            }
            PrintWriter err = command.commandLine().getErr();
            long start = System.nanoTime();
            Thread ticker = Thread.ofPlatform().daemon().start(() -> {
                String[] spin = {"|", "/", "-", "\\"};
                for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
                    err.printf(Locale.ROOT, "\r%s %s %.1f s", spin[i % 4], what, (System.nanoTime() - start) / 1e9);
                    err.flush();
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            try {
                return work.get();
            } finally {
                ticker.interrupt();
                try {
                    ticker.join(1_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                err.print("\r\033[K");
                err.flush();
            }
        }

    }

    static String n(long value) {
        return String.format(Locale.ROOT, "%,d", value);
    }

    static String bytes(long b) {
        if (b < 1024) {
            return b + " B";
        }
        if (b < 1024L * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
        }
        if (b < 1024L * 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0);
        }
        return String.format(Locale.ROOT, "%.2f GiB", b / 1073741824.0);
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "The log's manifest, hot/cold boundary and the node's roll counters.",
        footer = {"", "Examples:", "  strand cold status --log chat -w acme"})
    static final class Status implements Callable<Integer> {
        @Mixin
        Target target;

        @Override
        public Integer call() {
            JsonNode s = target.get("");
            PrintWriter out = target.out();
            if (target.json()) {
                out.println(Json.string(s));
                out.flush();
                return 0;
            }
            out.println(target.name() + " in " + s.path("store").asText());
            out.println("  segments      " + n(s.path("segments").asLong()) + " (manifest generation " + s.path("generation").asLong() + ")");
            if (s.path("segments").asLong() > 0) {
                out.println("  cold          seqs " + n(s.path("firstSeq").asLong()) + ".." + n(s.path("lastSeq").asLong()) + ", "
                        + n(s.path("entries").asLong()) + " entries, " + bytes(s.path("bytes").asLong()) + " stored");
            } else {
                out.println("  cold          nothing yet");
            }
            if (s.has("head")) {
                long hotFirst = s.path("hotFirst").asLong();
                long head = s.path("head").asLong();
                String stored = s.path("hotStoredFirst").asLong() > 0 && s.path("hotStoredFirst").asLong() < hotFirst
                        ? " (hot files still hold seqs from " + n(s.path("hotStoredFirst").asLong())
                        + ", rolled or trimmed: never read, deleted once their whole file is)" : "";
                out.println("  hot           " + (hotFirst > head ? "nothing, head " + n(head)
                        : "seqs " + n(hotFirst) + ".." + n(head)) + stored);
            }
            out.println("  retired       " + n(s.path("pendingDeletes").asLong()) + " segments waiting for their grace period");
            JsonNode node = s.path("node");
            out.println("  node          " + n(node.path("rolls").asLong()) + " rolls (" + n(node.path("rolledEntries").asLong())
                    + " entries), " + n(node.path("rollFailures").asLong()) + " roll failures, block cache "
                    + n(node.path("cacheHits").asLong()) + " hits / " + n(node.path("cacheMisses").asLong()) + " misses");
            if (!node.path("lastError").asText().isEmpty()) {
                out.println("  last error    " + node.path("lastError").asText());
            }
            out.flush();
            return 0;
        }
    }

    @Command(name = "roll", mixinStandardHelpOptions = true, description = "Roll every committed hot entry of the log to cold now.",
        footer = {"", "Examples:", "  strand cold roll --log chat -w acme"})
    static final class Roll implements Callable<Integer> {
        @Mixin
        Target target;

        @Override
        public Integer call() {
            JsonNode r = target.withProgress("rolling " + target.name(), () -> target.post("/roll", Json.MAPPER.createObjectNode()));
            PrintWriter out = target.out();
            if (target.json()) {
                out.println(Json.string(r));
            } else {
                out.println("rolled " + n(r.path("rolledEntries").asLong()) + " entries of " + target.name()
                        + "; the cold part ends at seq " + n(r.path("coldLastSeq").asLong()));
            }
            out.flush();
            return 0;
        }
    }

    @Command(name = "compact", mixinStandardHelpOptions = true,
            description = "Merge small adjacent cold segments; retired ones are deleted after the grace period.",
        footer = {"", "Examples:", "  strand cold compact --log chat --target-bytes 67108864 --grace 10m"})
    static final class Compact implements Callable<Integer> {
        @Mixin
        Target target;

        @Option(names = "--target-bytes", description = "Merge runs up to this many stored bytes (default: the server's, 64 MiB).")
        Long targetBytes;

        @Option(names = "--grace", description = "Keep retired segments readable this long (30s, 10m, 2h; default: the server's, 10m).")
        String grace;

        @Override
        public Integer call() {
            var body = Json.MAPPER.createObjectNode();
            if (targetBytes != null) {
                if (targetBytes < 1) {
                    throw new CommandLine.ParameterException(target.command.commandLine(), "--target-bytes must be positive");
                }
                body.put("targetBytes", targetBytes);
            }
            if (grace != null) {
                Duration d;
                try {
                    d = ServerConfig.duration(grace);
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(target.command.commandLine(), "--grace: " + e.getMessage());
                }
                body.put("graceSeconds", d.toSeconds());
            }
            JsonNode r = target.withProgress("compacting " + target.name(), () -> target.post("/compact", body));
            PrintWriter out = target.out();
            if (target.json()) {
                out.println(Json.string(r));
            } else {
                out.println(target.name() + ": " + n(r.path("segmentsBefore").asLong()) + " → " + n(r.path("segmentsAfter").asLong())
                        + " segments; " + n(r.path("merged").asLong()) + " runs merged, " + n(r.path("retired").asLong())
                        + " segments retired" + (r.path("abandoned").asLong() > 0 ? ", " + n(r.path("abandoned").asLong())
                        + " runs left alone (changed meanwhile)" : "") + "; deleted " + n(r.path("garbageDeleted").asLong()
                        + r.path("garbageCollectedNow").asLong()) + " retired segments past their grace period");
            }
            out.flush();
            return 0;
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Read and check every cold segment (blocks, hashes, the entry hash chain) and list orphans. Exit 1 on any problem.",
        footer = {"", "Examples:", "  strand cold verify --log chat", "  strand cold verify --log chat --delete-orphans --min-age 1h"})
    static final class Verify implements Callable<Integer> {
        @Mixin
        Target target;

        @Option(names = "--delete-orphans", description = "First delete objects no manifest names that are older than --min-age.")
        boolean deleteOrphans;

        @Option(names = "--min-age", defaultValue = "1h",
                description = "With --delete-orphans: leave younger orphans (an upload may be in flight; default ${DEFAULT-VALUE}).")
        String minAge;

        @Override
        public Integer call() {
            PrintWriter out = target.out();
            if (deleteOrphans) {
                long seconds;
                try {
                    seconds = ServerConfig.duration(minAge).toSeconds();
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(target.command.commandLine(), "--min-age: " + e.getMessage());
                }
                JsonNode d = target.delete("/orphans?minAgeSeconds=" + seconds);
                if (!target.json()) {
                    out.println("deleted " + n(d.path("deleted").asLong()) + " orphans older than " + minAge);
                }
            }
            JsonNode r = target.withProgress("verifying " + target.name(), () -> target.get("/verify"));
            boolean ok = r.path("ok").asBoolean();
            if (target.json()) {
                out.println(Json.string(r));
                out.flush();
                return ok ? 0 : 1;
            }
            out.println((ok ? "ok: " : "PROBLEMS: ") + target.name() + ", manifest generation " + r.path("generation").asLong()
                    + ": " + n(r.path("segments").asLong()) + " segments, " + n(r.path("blocks").asLong()) + " blocks, "
                    + n(r.path("entries").asLong()) + " entries, " + bytes(r.path("bytes").asLong()) + " checked");
            for (JsonNode p : r.path("problems")) {
                out.println("  " + p.path("kind").asText() + "  " + p.path("key").asText() + "  (seqs " + p.path("firstSeq").asLong()
                        + ".." + p.path("lastSeq").asLong() + "): " + p.path("message").asText());
            }
            for (JsonNode o : r.path("orphans")) {
                out.println("  orphan  " + o.path("key").asText() + "  (" + bytes(o.path("size").asLong()) + ", modified "
                        + o.path("lastModified").asText() + "; remove with --delete-orphans)");
            }
            out.flush();
            return ok ? 0 : 1;
        }
    }
}

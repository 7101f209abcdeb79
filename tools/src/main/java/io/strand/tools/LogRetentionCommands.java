package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.ServerConfig;
import io.strand.core.Json;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strand logs trim} and {@code strand logs retention} (SPEC §12, admin). */
final class LogRetentionCommands {
    private LogRetentionCommands() {
    }

    @Command(name = "trim", mixinStandardHelpOptions = true,
            description = "Make every entry below --before unreadable, durably (admin). first only moves forward.",
        footer = {"", "Examples:", "  strand logs trim chat --before 1000          seqs below 1000 become unreadable"})
    static final class Trim implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "LOG")
        String log;
        @Option(names = "--before", required = true, description = "First seq to keep (at most head+1).")
        long before;

        @Override
        public Integer call() {
            ObjectNode body = Json.MAPPER.createObjectNode().put("before", before);
            JsonNode r = o.client().post(LogsCommand.logPath(o, log) + "/trim", body);
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                o.out().println("log " + log + " now starts at seq " + r.path("first").asLong() + " (head " + r.path("head").asLong() + ")");
            }
            o.out().flush();
            return 0;
        }
    }

    @Command(name = "retention", mixinStandardHelpOptions = true,
            description = {"Set a log's retention policy (admin); a limit not given is unlimited.",
                    "The worker trims the log to it within a minute."},
        footer = {"", "Examples:", "  strand logs retention chat                   show the policy", "  strand logs retention chat --max-age 7d --max-entries 1000000", "  strand logs retention chat --clear"})
    static final class Policy implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "LOG")
        String log;
        @Option(names = "--max-age", description = "Keep entries younger than this: 30s, 5m, 2h, 7d or PT1H.")
        String maxAge;
        @Option(names = "--max-entries", description = "Keep at most this many newest entries.")
        Long maxEntries;
        @Option(names = "--max-bytes", description = "Keep about this many bytes of newest entry data.")
        Long maxBytes;
        @Option(names = "--clear", description = "Remove every limit (keep everything).")
        boolean clear;

        @Override
        public Integer call() {
            boolean limits = maxAge != null || maxEntries != null || maxBytes != null;
            if (clear == limits) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "give --max-age, --max-entries and/or --max-bytes, or --clear alone");
            }
            ObjectNode body = Json.MAPPER.createObjectNode();
            if (maxAge != null) {
                long seconds;
                try {
                    seconds = ServerConfig.duration(maxAge).toSeconds();
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--max-age: " + e.getMessage());
                }
                body.put("maxAgeSeconds", seconds);
            }
            if (maxEntries != null) {
                body.put("maxEntries", maxEntries);
            }
            if (maxBytes != null) {
                body.put("maxBytes", maxBytes);
            }
            JsonNode r = o.client().put(LogsCommand.logPath(o, log) + "/retention", body);
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                o.out().println("retention of log " + log + ": " + Json.string(r.path("retention")));
            }
            o.out().flush();
            return 0;
        }
    }
}

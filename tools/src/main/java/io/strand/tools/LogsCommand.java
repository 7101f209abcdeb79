package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strand logs ls|info|append|read|tail|delete|trim|retention}: the log rows of SPEC §5 and §12 from the shell. */
@Command(name = "logs", mixinStandardHelpOptions = true, description = "List, inspect, append to, read, follow and delete logs.",
        subcommands = {LogsCommand.Ls.class, LogsCommand.Info.class, LogsCommand.Append.class, LogReadCommand.class,
                LogTailCommand.class, LogsCommand.Delete.class, LogRetentionCommands.Trim.class,
                LogRetentionCommands.Policy.class},
        footer = {"", "Examples:", "  strand logs ls -w acme", "  strand logs append chat '{\"text\":\"hi\"}'", "  strand logs tail chat"})
final class LogsCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "which one? ls, info, append, read, tail, delete, trim or retention");
    }

    static String logPath(ClientOptions o, String log) {
        return o.wsPath() + "/logs/" + StrandClient.segment(log);
    }

    @Command(name = "ls", mixinStandardHelpOptions = true,
            description = "List the logs of a workspace; a Durable Streams stream's log also shows its DS path and content type.",
            footer = {"", "Examples:", "  strand logs ls -w acme", "  strand logs ls -l            entries, bytes, last append",
                    "  strand logs ls -l -o json    the same as JSON (each log's info reply)"})
    static final class Ls implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Option(names = {"-l", "--long"}, description = "One row per log with its entries, bytes and last append time.")
        boolean long_;
        @Option(names = "--after", description = "Start after this name.")
        String after;
        @Option(names = "--limit", defaultValue = "0", description = "At most this many (default: all).")
        int limit;

        @Override
        public Integer call() {
            StrandClient client = o.client();
            ObjectNode ds = Json.MAPPER.createObjectNode(); // log name -> its Durable Streams path and content type
            ArrayNode all = client.listAll(o.wsPath() + "/logs?ds=true", "logs", after, limit, (reply, name) -> {
                JsonNode note = reply.path("ds").path(name.asText());
                if (!note.isMissingNode()) {
                    ds.set(name.asText(), note);
                }
                if (!o.json && !long_) {
                    o.out().println(note.isMissingNode() ? name.asText()
                            : name.asText() + "\tds:" + note.path("dsPath").asText() + "\t" + note.path("contentType").asText());
                }
            });
            if (long_) {
                printLong(client, all, ds);
            } else if (o.json) {
                ObjectNode body = Json.MAPPER.createObjectNode();
                body.set("logs", all);
                body.set("ds", ds);
                o.out().println(Json.string(body));
            }
            o.out().flush();
            return 0;
        }

        /** Each log's info (and its last entry's time when the info has no {@code lastAppend}). */
        private void printLong(StrandClient client, ArrayNode names, ObjectNode ds) {
            ArrayNode infos = Json.MAPPER.createArrayNode();
            List<List<String>> rows = new ArrayList<>();
            rows.add(ds.isEmpty() ? List.of("LOG", "ENTRIES", "BYTES", "LAST APPEND")
                    : List.of("LOG", "ENTRIES", "BYTES", "LAST APPEND", "DS PATH"));
            for (JsonNode name : names) {
                ObjectNode info;
                try {
                    info = (ObjectNode) client.get(logPath(o, name.asText()));
                } catch (CliFailure gone) {
                    if (gone.status() == 404) {
                        continue; // deleted between the list and its info
                    }
                    throw gone;
                }
                if (!info.has("lastAppend") && info.path("entries").asLong() > 0) {
                    JsonNode last = client.get(logPath(o, name.asText()) + "/entries?from=" + info.path("head").asLong() + "&limit=1")
                            .path("entries").path(0);
                    if (last.has("ts")) {
                        info.put("lastAppend", last.get("ts").asLong());
                    }
                }
                JsonNode note = ds.path(name.asText());
                if (!note.isMissingNode()) {
                    info.set("ds", note);
                }
                infos.add(info);
                List<String> row = new ArrayList<>(List.of(name.asText(), info.path("entries").asText(),
                        Output.bytes(info.path("bytes").asLong()),
                        info.has("lastAppend") ? Output.time(info.get("lastAppend").asLong()) : "-"));
                if (!ds.isEmpty()) {
                    row.add(note.isMissingNode() ? "-" : note.path("dsPath").asText());
                }
                rows.add(row);
            }
            if (o.json) {
                ObjectNode body = Json.MAPPER.createObjectNode();
                body.set("logs", infos);
                o.out().println(Json.string(body));
            } else {
                Output.table(o.out(), rows);
            }
        }
    }

    @Command(name = "info", mixinStandardHelpOptions = true, description = "Show a log's first and head seq, size, tiers (bytes hot and cold) and retention policy.",
        footer = {"", "Examples:", "  strand logs info chat", "  strand logs info chat -w acme -o json"})
    static final class Info implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "LOG")
        String log;

        @Override
        public Integer call() {
            Output.reply(o.out(), o.client().get(logPath(o, log)), o.json);
            return 0;
        }
    }

    @Command(name = "append", mixinStandardHelpOptions = true,
            description = {"Append entries. Each DATA is JSON when it parses, else a string.",
                    "With no DATA, each line of standard input is one entry (sent in batches)."},
            footer = {"", "Examples:", "  strand logs append chat '{\"text\":\"hi\"}' hello",
                    "  strand logs append ledger '{\"charge\":5}' --producer-id billing-7 --producer-seq 42   at most once",
                    "  strand logs append chat --expected-last-seq 0 first   only into an empty log",
                    "  seq 1 100 | strand logs append numbers"})
    static final class Append implements Callable<Integer> {
        static final int BATCH_ENTRIES = 1000;
        static final int BATCH_BYTES = 3 << 20;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "LOG")
        String log;
        @Parameters(index = "1..*", paramLabel = "DATA", description = "Entry data (JSON or text).")
        List<String> data = new ArrayList<>();
        @Option(names = "--key", description = "Key of every appended entry.")
        String key;
        @Option(names = "--string", description = "Send each DATA as a JSON string, even when it parses as JSON.")
        boolean asString;
        @Option(names = "--expected-last-seq", description = "Append only if the log's last seq is this (0 = empty).")
        Long expectedLastSeq;
        @Option(names = "--producer-id", description = "Idempotent append: this producer's id (with --producer-seq).")
        String producerId;
        @Option(names = "--producer-seq", description = "Idempotent append: the request's seq for --producer-id; a repeat is "
                + "answered as a duplicate and appends nothing. Batches read from standard input use SEQ, SEQ+1, …")
        Long producerSeq;

        @Override
        public Integer call() throws IOException {
            if ((producerId == null) != (producerSeq == null)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--producer-id and --producer-seq go together");
            }
            StrandClient client = o.client();
            if (!data.isEmpty()) {
                send(client, data);
                return 0;
            }
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            List<String> batch = new ArrayList<>();
            int bytes = 0;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) {
                    continue;
                }
                if (batch.size() == BATCH_ENTRIES || bytes + line.length() > BATCH_BYTES) {
                    send(client, batch);
                    batch.clear();
                    bytes = 0;
                }
                batch.add(line);
                bytes += line.length();
            }
            if (!batch.isEmpty()) {
                send(client, batch);
            }
            return 0;
        }

        private void send(StrandClient client, List<String> values) {
            ObjectNode body = Json.MAPPER.createObjectNode();
            ArrayNode entries = body.putArray("entries");
            for (String v : values) {
                ObjectNode e = entries.addObject();
                e.set("data", Output.value(v, asString));
                if (key != null) {
                    e.put("key", key);
                }
            }
            if (expectedLastSeq != null) {
                body.put("expectedLastSeq", expectedLastSeq);
                expectedLastSeq = null; // guards the first batch only
            }
            if (producerId != null) {
                body.put("producerId", producerId);
                body.put("producerSeq", producerSeq++);
            }
            JsonNode r = client.post(logPath(o, log) + "/entries", body);
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                long first = r.path("firstSeq").asLong();
                long last = r.path("lastSeq").asLong();
                o.out().println("appended " + values.size() + (values.size() == 1 ? " entry" : " entries") + " to " + log
                        + ": seq " + (first == last ? String.valueOf(first) : first + ".." + last)
                        + " (" + r.path("durable").asText() + (r.path("duplicate").asBoolean() ? ", duplicate" : "") + ")");
            }
            o.out().flush();
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true,
            description = {"Delete a log, hot and cold (admin).", "Asks first on a terminal; elsewhere (scripts) --yes is required."},
            footer = {"", "Examples:", "  strand logs delete chat", "  strand logs delete chat --yes -w acme"})
    static final class Delete implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "LOG")
        String log;
        @Option(names = {"-y", "--yes"}, description = "Do not ask for confirmation.")
        boolean yes;

        @Override
        public Integer call() {
            if (!yes) {
                java.io.Console console = System.console();
                if (console == null || !console.isTerminal()) {
                    o.err().println("strand: not deleting log " + log + " of workspace " + o.ws
                            + " without --yes (standard input is not a terminal to ask on)");
                    o.err().flush();
                    return 2;
                }
                String answer = console.readLine("Delete log %s of workspace %s, hot and cold, for good? [y/N] ", log, o.ws);
                if (answer == null || !answer.strip().toLowerCase(java.util.Locale.ROOT).startsWith("y")) {
                    o.err().println("strand: not deleted");
                    o.err().flush();
                    return 1;
                }
            }
            JsonNode r = o.client().delete(logPath(o, log));
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                o.out().println("deleted log " + log + " of workspace " + o.ws);
            }
            o.out().flush();
            return 0;
        }
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.strand.core.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strand docs ls|get|put|incr|cas|apply|delete}: the doc routes of docs/api.md from the shell. */
@Command(name = "docs", mixinStandardHelpOptions = true, description = "List, read, write, change and delete docs.",
        subcommands = {DocsCommand.Ls.class, DocsCommand.Get.class, DocsCommand.Put.class, DocsCommand.Incr.class,
                DocsCommand.Cas.class, DocsCommand.Apply.class, DocsCommand.Delete.class},
        footer = {"", "Examples:", "  strand docs ls -w acme", "  strand docs incr wallet balance -5 --floor 0"})
final class DocsCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "which one? ls, get, put, incr, cas, apply or delete");
    }

    static String docPath(ClientOptions o, String doc) {
        return o.wsPath() + "/docs/" + StrandClient.segment(doc);
    }

    @Command(name = "get", mixinStandardHelpOptions = true, description = "Print a doc's version and value.",
        footer = {"", "Examples:", "  strand docs get wallet -w acme", "  strand docs get wallet -o json"})
    static final class Get implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "DOC")
        String doc;

        @Override
        public Integer call() throws Exception {
            JsonNode r = o.client().get(docPath(o, doc));
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                o.out().println("version " + r.path("version").asLong());
                o.out().println(Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(r.path("value")));
            }
            o.out().flush();
            return 0;
        }
    }

    @Command(name = "put", mixinStandardHelpOptions = true, description = "Replace a doc's value (a JSON object).",
        footer = {"", "Examples:", "  strand docs put wallet '{\"balance\":100}'", "  strand docs put wallet '{\"balance\":90}' --expect-version 3"})
    static final class Put implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "DOC")
        String doc;
        @Parameters(index = "1", paramLabel = "VALUE", description = "The new value, a JSON object.")
        String value;
        @Option(names = "--expect-version", description = "Write only if the doc is at this version (0 = must not exist).")
        Long expectVersion;

        @Override
        public Integer call() {
            JsonNode parsed = Output.value(value, false);
            if (!parsed.isObject()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "VALUE must be a JSON object, e.g. '{\"a\":1}'");
            }
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.set("value", parsed);
            if (expectVersion != null) {
                body.put("expectVersion", expectVersion);
            }
            JsonNode r = o.client().put(docPath(o, doc), body);
            o.out().println(o.json ? Json.string(r) : "version " + r.path("version").asLong());
            o.out().flush();
            return 0;
        }
    }

    @Command(name = "incr", mixinStandardHelpOptions = true,
            description = "Add DELTA to the integer at PATH in one atomic turn; refused (never clamped) past --floor/--ceiling.",
        footer = {"", "Examples:", "  strand docs incr wallet balance 5", "  strand docs incr wallet balance -5 --floor 0      refused below 0"})
    static final class Incr implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "DOC")
        String doc;
        @Parameters(index = "1", paramLabel = "PATH", description = "Dot-separated path, e.g. balance or stats.views.")
        String path;
        @Parameters(index = "2", paramLabel = "DELTA", defaultValue = "1", description = "Default ${DEFAULT-VALUE}; may be negative.")
        long delta;
        @Option(names = "--floor", description = "Refuse a result below this.")
        Long floor;
        @Option(names = "--ceiling", description = "Refuse a result above this.")
        Long ceiling;

        @Override
        public Integer call() {
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.put("path", path);
            body.put("delta", delta);
            if (floor != null) {
                body.put("floor", floor);
            }
            if (ceiling != null) {
                body.put("ceiling", ceiling);
            }
            JsonNode r = o.client().post(docPath(o, doc) + "/incr", body);
            o.out().println(o.json ? Json.string(r) : r.path("value").asText() + " (version " + r.path("version").asLong() + ")");
            o.out().flush();
            return 0;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List the docs of a workspace.",
            footer = {"", "Examples:", "  strand docs ls -w acme", "  strand docs ls -o json"})
    static final class Ls implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Option(names = "--after", description = "Start after this name.")
        String after;
        @Option(names = "--limit", defaultValue = "0", description = "At most this many (default: all).")
        int limit;

        @Override
        public Integer call() {
            StrandClient client = o.client();
            ArrayNode all = client.listAll(o.wsPath() + "/docs", "docs", after, limit, (reply, name) -> {
                if (!o.json) {
                    o.out().println(name.asText());
                }
            });
            if (o.json) {
                ObjectNode body = Json.MAPPER.createObjectNode();
                body.set("docs", all);
                o.out().println(Json.string(body));
            }
            o.out().flush();
            return 0;
        }
    }

    @Command(name = "cas", mixinStandardHelpOptions = true,
            description = "Set the value at PATH to VALUE only if it now equals --expect (absent: null).",
            footer = {"", "Examples:", "  strand docs cas wallet owner '\"ann\"'                 claim if unowned",
                    "  strand docs cas wallet owner '\"bob\"' --expect '\"ann\"'"})
    static final class Cas implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "DOC")
        String doc;
        @Parameters(index = "1", paramLabel = "PATH", description = "Dot-separated path, e.g. owner or a.b.")
        String path;
        @Parameters(index = "2", paramLabel = "VALUE", description = "New value: JSON when it parses, else a string.")
        String value;
        @Option(names = "--expect", description = "The value expected at PATH (JSON, else a string); default null (missing).")
        String expect;

        @Override
        public Integer call() {
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.put("path", path);
            if (expect != null) {
                body.set("expect", Output.value(expect, false));
            }
            body.set("value", Output.value(value, false));
            printDoc(o, o.client().post(docPath(o, doc) + "/cas", body));
            return 0;
        }
    }

    @Command(name = "apply", mixinStandardHelpOptions = true,
            description = {"Apply ops (incr, cas, set, remove) in order in one turn, all or nothing.",
                    "OPS is a JSON array of ops, or - to read it from standard input."},
            footer = {"", "Examples:",
                    "  strand docs apply wallet '[{\"op\":\"incr\",\"path\":\"balance\",\"delta\":-5,\"floor\":0},"
                            + "{\"op\":\"set\",\"path\":\"last\",\"value\":\"coffee\"}]'",
                    "  strand docs apply wallet - --expect-version 3 < ops.json"})
    static final class Apply implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "DOC")
        String doc;
        @Parameters(index = "1", paramLabel = "OPS", description = "A JSON array of ops, or - for standard input.")
        String ops;
        @Option(names = "--expect-version", description = "Apply only if the doc is at this version (0 = must not exist).")
        Long expectVersion;

        @Override
        public Integer call() throws IOException {
            String text = "-".equals(ops) ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8) : ops;
            JsonNode parsed = Output.value(text, false);
            if (parsed.isObject() && parsed.has("ops")) {
                parsed = parsed.get("ops");
            }
            if (!parsed.isArray()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "OPS must be a JSON array, e.g. '[{\"op\":\"set\",\"path\":\"a\",\"value\":1}]'");
            }
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.set("ops", parsed);
            if (expectVersion != null) {
                body.put("expectVersion", expectVersion);
            }
            printDoc(o, o.client().post(docPath(o, doc) + "/apply", body));
            return 0;
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Delete a doc.",
            footer = {"", "Examples:", "  strand docs delete wallet", "  strand docs delete wallet --expect-version 4"})
    static final class Delete implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "DOC")
        String doc;
        @Option(names = "--expect-version", description = "Delete only if the doc is at this version.")
        Long expectVersion;

        @Override
        public Integer call() {
            JsonNode r = o.client().delete(docPath(o, doc) + (expectVersion == null ? "" : "?expectVersion=" + expectVersion));
            o.out().println(o.json ? Json.string(r) : "deleted doc " + doc + " (version " + r.path("version").asLong() + ")");
            o.out().flush();
            return 0;
        }
    }

    /** A {@code {"version","value"}} reply: raw, or the version and the pretty value. */
    static void printDoc(ClientOptions o, JsonNode r) {
        if (o.json) {
            o.out().println(Json.string(r));
        } else {
            o.out().println("version " + r.path("version").asLong());
            o.out().println(r.path("value").toPrettyString());
        }
        o.out().flush();
    }
}

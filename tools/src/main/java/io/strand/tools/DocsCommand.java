package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strand docs get|put|incr}: the doc rows of SPEC §5 from the shell. */
@Command(name = "docs", mixinStandardHelpOptions = true, description = "Read, write and increment docs.",
        subcommands = {DocsCommand.Get.class, DocsCommand.Put.class, DocsCommand.Incr.class})
final class DocsCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "which one? get, put or incr");
    }

    static String docPath(ClientOptions o, String doc) {
        return o.wsPath() + "/docs/" + StrandClient.segment(doc);
    }

    @Command(name = "get", mixinStandardHelpOptions = true, description = "Print a doc's version and value.")
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

    @Command(name = "put", mixinStandardHelpOptions = true, description = "Replace a doc's value (a JSON object).")
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
            description = "Add DELTA to the integer at PATH in one atomic turn; refused (never clamped) past --floor/--ceiling.")
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
}

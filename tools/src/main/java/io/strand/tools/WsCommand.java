package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code strand ws ls}: the server's workspaces ({@code GET /v1/ws}: root sees all, a token its own). */
@Command(name = "ws", mixinStandardHelpOptions = true, description = "List workspaces.",
        subcommands = {WsCommand.Ls.class},
        footer = {"", "Examples:", "  strand ws ls"})
final class WsCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "which one? ls");
    }

    @Command(name = "ls", mixinStandardHelpOptions = true,
            description = "List workspaces with their log, entry and doc counts and bytes (root sees all; others their own).",
            footer = {"", "Examples:", "  strand ws ls", "  strand ws ls -o json"})
    static final class Ls implements Callable<Integer> {
        @Mixin
        ClientOptions o;

        @Override
        public Integer call() {
            JsonNode r = o.client().get("/v1/ws");
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                List<List<String>> rows = new ArrayList<>();
                rows.add(List.of("WORKSPACE", "LOGS", "ENTRIES", "LOG BYTES", "DOCS", "DOC BYTES"));
                for (JsonNode w : r.path("workspaces")) {
                    // partial: the server counted only the first logs of a very large workspace
                    String more = w.path("partial").asBoolean() ? "+" : "";
                    rows.add(List.of(w.path("ws").asText(), w.path("logs").asText() + more, w.path("entries").asText() + more,
                            Output.bytes(w.path("logBytes").asLong()) + more, w.path("docs").asText(),
                            Output.bytes(w.path("docBytes").asLong())));
                }
                Output.table(o.out(), rows);
            }
            o.out().flush();
            return 0;
        }
    }
}

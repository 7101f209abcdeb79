package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code strand cluster status|replace}: a cluster's nodes and shards ({@code GET /v1/cluster}) and replacing a dead node (SPEC §13). */
@Command(name = "cluster", mixinStandardHelpOptions = true, description = "Inspect a cluster, replace a node.",
        subcommands = {ClusterCommand.Status.class, ClusterCommand.Replace.class},
        footer = {"", "Examples:", "  strand cluster status --url http://127.0.0.1:8082 --data ./cluster/n2", "  strand cluster replace --old n3 --new n4=10.0.0.4:7204"})
final class ClusterCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "which one? status, replace");
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "The cluster's nodes (up as the asked node sees them) and each shard's leader, term, replicas and commit index.",
            footer = {"", "Examples:", "  strand cluster status", "  strand cluster status --url http://10.0.0.2:8080 -o json"})
    static final class Status implements Callable<Integer> {
        @Mixin
        ClientOptions o;

        @Override
        public Integer call() {
            JsonNode r = o.client().get("/v1/cluster");
            if (o.json) {
                o.out().println(Json.string(r));
                o.out().flush();
                return 0;
            }
            o.out().println("asked node: " + r.path("node").asText());
            List<List<String>> nodes = new ArrayList<>();
            nodes.add(List.of("NODE", "RAFT", "HTTP", "UP"));
            for (JsonNode n : r.path("nodes")) {
                nodes.add(List.of(n.path("id").asText(), n.path("raft").asText(), n.path("http").asText("-"),
                        n.path("up").asBoolean() ? "yes" : "NO"));
            }
            Output.table(o.out(), nodes);
            o.out().println();
            List<List<String>> shards = new ArrayList<>();
            shards.add(List.of("SHARD", "LEADER", "TERM", "COMMIT", "APPLIED", "REPLICAS"));
            for (JsonNode s : r.path("shards")) {
                List<String> replicas = new ArrayList<>();
                s.path("replicas").forEach(x -> replicas.add(x.asText()));
                shards.add(List.of(s.path("shard").asText(), s.path("leader").asText("(none)"), s.path("term").asText(),
                        s.path("commitIndex").asText(), s.path("appliedIndex").asText("-"), String.join(",", replicas)));
            }
            Output.table(o.out(), shards);
            o.out().flush();
            return 0;
        }
    }

    @Command(name = "replace", mixinStandardHelpOptions = true,
            description = "Move every replica of a dead node to a new one (a Raft configuration change per shard; the new node "
                    + "catches up from a snapshot, then from the log). Start the new node first, with the new --cluster list.",
            footer = {"", "Examples:", "  strand cluster replace --old n3 --new n4=10.0.0.4:7204"})
    static final class Replace implements Callable<Integer> {
        @Mixin
        ClientOptions o;

        @Option(names = "--old", required = true, description = "The id of the node to replace.")
        String old;

        @Option(names = "--new", required = true, description = "The new node as ID=HOST:RAFTPORT.")
        String replacement;

        @Override
        public Integer call() {
            var body = Json.MAPPER.createObjectNode().put("old", old).put("new", replacement);
            JsonNode r = o.client().post("/v1/cluster/replace", body);
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                o.out().println("replaced " + old + " with " + replacement + " in " + r.path("shards").size() + " shard(s)");
            }
            o.out().flush();
            return 0;
        }
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.ServerConfig;
import io.strand.core.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strand token mint|revoke}: SPEC §8 token administration from the shell. */
@Command(name = "token", mixinStandardHelpOptions = true, description = "Mint and revoke access tokens.",
        subcommands = {TokenCommand.Mint.class, TokenCommand.Revoke.class},
        footer = {"", "Examples:", "  strand token mint -w acme --scope rw --ttl 1h", "  strand token revoke <jti>"})
final class TokenCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "which one? mint or revoke");
    }

    @Command(name = "mint", mixinStandardHelpOptions = true,
            description = {"Mint a token for the workspace (-w; '*' for every workspace, root only).",
                    "Prints the token on stdout and its id and expiry on stderr."},
        footer = {"", "Examples:", "  T=$(strand token mint -w acme --scope rw --ttl 1h)     token on stdout, jti on stderr", "  strand token mint -w '*' --scope read --ttl 7d"})
    static final class Mint implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions o;
        @Option(names = "--scope", defaultValue = "read", description = "read, rw or admin (default ${DEFAULT-VALUE}).")
        String scope;
        @Option(names = "--ttl", defaultValue = "1h", description = "Lifetime: 30s, 5m, 2h, 7d or PT1H (default ${DEFAULT-VALUE}).")
        String ttl;

        @Override
        public Integer call() {
            Duration lifetime;
            try {
                lifetime = ServerConfig.duration(ttl);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            if (lifetime.toSeconds() < 1) { // the server counts whole seconds: rounding up would mint a token nobody asked for
                throw new CommandLine.ParameterException(spec.commandLine(), "--ttl must be at least 1s, not " + ttl);
            }
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.put("ws", o.ws);
            body.put("scope", scope);
            body.put("ttlSeconds", lifetime.toSeconds());
            JsonNode r = o.client().post("/v1/admin/tokens", body);
            if (o.json) {
                o.out().println(Json.string(r));
            } else {
                o.out().println(r.path("token").asText());
                o.err().println("jti " + r.path("jti").asText() + ", workspace " + o.ws + ", scope " + scope
                        + ", expires " + Instant.ofEpochSecond(r.path("exp").asLong()));
                o.err().flush();
            }
            o.out().flush();
            return 0;
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true,
            description = "Revoke a token by its jti; sockets opened with it close within seconds.",
        footer = {"", "Examples:", "  strand token revoke 3f2a9c1e-…                          the jti mint printed"})
    static final class Revoke implements Callable<Integer> {
        @Mixin
        ClientOptions o;
        @Parameters(index = "0", paramLabel = "JTI")
        String jti;

        @Override
        public Integer call() {
            JsonNode r = o.client().delete("/v1/admin/tokens/" + StrandClient.segment(jti));
            o.out().println(o.json ? Json.string(r) : "revoked " + jti);
            o.out().flush();
            return 0;
        }
    }
}

package io.strand.tools;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Where and as whom a client command talks, shared by {@code logs}, {@code docs} and {@code token}:
 * {@code --url}/{@code STRAND_URL}, {@code --token}/{@code STRAND_TOKEN} (else the root token at
 * {@code --data}/{@code STRAND_DATA}{@code /root.token}), {@code -w}/{@code STRAND_WS}, and
 * {@code --json}. A picocli mixin: one instance per command invocation.
 */
final class ClientOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--url", defaultValue = "${env:STRAND_URL:-http://127.0.0.1:8080}",
            description = "Server URL (env STRAND_URL; default ${DEFAULT-VALUE}).")
    String url;

    @Option(names = "--token", defaultValue = "${env:STRAND_TOKEN}",
            description = "Bearer token (env STRAND_TOKEN; default: the root token in the data dir).")
    String token;

    @Option(names = "--data", defaultValue = "${env:STRAND_DATA:-./data}",
            description = "Data dir whose root.token is used when no token is given (env STRAND_DATA; default ${DEFAULT-VALUE}).")
    Path data;

    @Option(names = {"-w", "--ws"}, defaultValue = "${env:STRAND_WS:-default}",
            description = "Workspace (env STRAND_WS; default ${DEFAULT-VALUE}).")
    String ws;

    @Option(names = "--json", description = "Print raw JSON instead of human-readable text (same as -o json).")
    boolean json;

    /** How replies print: {@code table} (text for people, the default) or {@code json}. */
    enum Format { table, json }

    @Option(names = {"-o", "--output"}, paramLabel = "json|table",
            description = "Output format: table (default, for people) or json (the server's replies).")
    void output(Format format) {
        json = format == Format.json;
    }

    /** The token to send: {@code --token}, else the root token file if there is one, else none. */
    String token() {
        if (token != null && !token.isBlank()) {
            return token.strip();
        }
        Path file = data.resolve("root.token");
        if (!Files.isReadable(file)) {
            return null;
        }
        try {
            String t = Files.readString(file, StandardCharsets.US_ASCII).strip();
            return t.isEmpty() ? null : t;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    StrandClient client() {
        String t = token();
        return new StrandClient(url, t, t != null ? null
                : "no token found: looked at --token, the STRAND_TOKEN environment variable and "
                + data.toAbsolutePath().normalize().resolve("root.token") + " (--data / STRAND_DATA)");
    }

    /** {@code /v1/ws/{ws}} with the workspace encoded. */
    String wsPath() {
        return "/v1/ws/" + StrandClient.segment(ws);
    }

    PrintWriter out() {
        return command.commandLine().getOut();
    }

    PrintWriter err() {
        return command.commandLine().getErr();
    }
}

package io.strand.tools;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code strand}: the one entry point of the CLI. Exit codes: 0 ok, 1 failure (a server error prints
 * its code and message), 2 usage.
 */
@Command(name = "strand", mixinStandardHelpOptions = true, version = "strand 0.1.0",
        description = "Kafka-free log-structured streaming: Logs and Docs over HTTP and WebSocket.",
        footer = {"", "Examples:",
                "  strand serve --data ./data                 run a server (prints where its root token is)",
                "  strand logs append chat '{\"text\":\"hi\"}'   append an entry (token: STRAND_TOKEN or ./data/root.token)",
                "  strand logs ls -l                          logs with entries, bytes and last append",
                "  strand logs tail chat                      follow a log",
                "  strand docs put wallet '{\"balance\":100}'   write a doc",
                "  source <(strand completion bash)           tab completion"})
public final class StrandCli implements Runnable {
    /**
     * The subcommands by name, in help order. Registered lazily: building picocli's model of every
     * command (reflection over each option) was most of a short command's start-up, so a run
     * builds only the command it names (every one for help and completion).
     */
    static final Map<String, Class<?>> SUBCOMMANDS = subcommands();
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    private static Map<String, Class<?>> subcommands() {
        Map<String, Class<?>> m = new LinkedHashMap<>();
        m.put("serve", ServeCommand.class);
        m.put("ws", WsCommand.class);
        m.put("logs", LogsCommand.class);
        m.put("docs", DocsCommand.class);
        m.put("token", TokenCommand.class);
        m.put("cold", ColdCommand.class);
        m.put("cluster", ClusterCommand.class);
        m.put("bench", BenchCommand.class);
        m.put("completion", CompletionCommand.class);
        m.put("help", CommandLine.HelpCommand.class);
        return Collections.unmodifiableMap(m);
    }

    /** The whole command tree (help, completion, tests). */
    public static CommandLine commandLine() {
        return commandLine(new String[0]);
    }

    /** The command tree {@code args} need: only the named subcommand when the first word names one. */
    static CommandLine commandLine(String[] args) {
        CommandLine cl = new CommandLine(new StrandCli());
        Class<?> only = args.length > 0 && !"help".equals(args[0]) && !"completion".equals(args[0]) ? SUBCOMMANDS.get(args[0]) : null;
        // new CommandLine(class), not addSubcommand(name, class): only the public constructor applies
        // a command's modelTransformer (serve's settings), and the root's has already run.
        if (only != null) {
            cl.addSubcommand(args[0], new CommandLine(only));
        } else {
            SUBCOMMANDS.forEach((name, command) -> cl.addSubcommand(name, new CommandLine(command)));
        }
        cl.setExecutionExceptionHandler((ex, line, parsed) -> {
            line.getErr().println("strand: " + (ex.getMessage() == null ? ex.toString() : ex.getMessage()));
            return 1;
        });
        return cl;
    }

    public static void main(String[] args) {
        System.exit(commandLine(args).execute(args));
    }
}

package io.strand.tools;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code strand}: the one entry point of the CLI. Exit codes: 0 ok, 1 failure (a server error prints
 * its code and message), 2 usage.
 */
@Command(name = "strand", mixinStandardHelpOptions = true, version = "strand 0.1.0",
        description = "Kafka-free log-structured streaming: Logs and Docs over HTTP and WebSocket.",
        subcommands = {ServeCommand.class, LogsCommand.class, DocsCommand.class, TokenCommand.class, ColdCommand.class,
                BenchCommand.class, CommandLine.HelpCommand.class})
public final class StrandCli implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new StrandCli());
        cl.setExecutionExceptionHandler((ex, line, parsed) -> {
            line.getErr().println("strand: " + (ex.getMessage() == null ? ex.toString() : ex.getMessage()));
            return 1;
        });
        return cl;
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }
}

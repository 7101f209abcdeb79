package io.strand.tools;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strand logs tail}: follows a log live over the WebSocket, surviving disconnects and restarts. */
@Command(name = "tail", mixinStandardHelpOptions = true,
        description = {"Follow a log live. On a dropped connection or a server restart it reconnects with backoff",
                "and resumes from its cursor: no entry is lost or printed twice."})
final class LogTailCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    ClientOptions o;
    @Parameters(index = "0", paramLabel = "LOG")
    String log;
    @Option(names = "--from", paramLabel = "SEQ|latest", defaultValue = "latest",
            description = "Start at this seq, or only new entries with 'latest' (default).")
    String from;
    @Option(names = {"-n", "--count"}, defaultValue = "0", description = "Stop after this many entries (default: follow until interrupted).")
    long count;

    @Override
    public Integer call() throws InterruptedException {
        Long start;
        if ("latest".equals(from)) {
            start = null;
        } else {
            try {
                start = Math.max(1, Long.parseLong(from));
            } catch (NumberFormatException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--from must be a seq or 'latest', not '" + from + "'");
            }
        }
        if (count < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--count must be 0 or more");
        }
        StrandClient client = o.client();
        return new LogTail(client.socketUrl(o.ws), client.token(), log, start, count, o.json, o.out(), o.err()).run();
    }
}

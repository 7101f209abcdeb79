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
                "and resumes from its cursor: no entry is lost or printed twice."},
        footer = {"", "Examples:", "  strand logs tail chat                       new entries, until Ctrl-C", "  strand logs tail chat --from 1 -n 50        the first 50, then stop"})
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
    @Option(names = {"-n", "--count"}, description = "Stop after this many entries, 1 or more (default: follow until interrupted).")
    Long count;

    @Override
    public Integer call() throws InterruptedException {
        Long start;
        if ("latest".equals(from)) {
            start = null;
        } else {
            try {
                start = Long.parseLong(from);
            } catch (NumberFormatException e) {
                start = -1L;
            }
            if (start < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--from must be a seq (0 or more) or 'latest', not '" + from + "'");
            }
            start = Math.max(1, start); // seq 0 is before the first entry: from the start
        }
        if (count != null && count < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--count must be 1 or more (leave it out to follow), not " + count);
        }
        StrandClient client = o.client();
        return new LogTail(client.socketUrl(o.ws), client.token(), log, start, count == null ? 0 : count, o.json, o.out(), o.err()).run();
    }
}

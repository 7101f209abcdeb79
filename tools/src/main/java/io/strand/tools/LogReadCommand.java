package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strand logs read}: pages forward from a seq or a time (or one page backward from the end)
 * and prints each entry once, following {@code next} across pages; a read of many pages shows its
 * progress on stderr.
 */
@Command(name = "read", mixinStandardHelpOptions = true,
        description = {"Read entries: forward from a seq or a time, or the last ones (--before end).",
                "Prints one line per entry; --json prints each entry's JSON on one line."},
        footer = {"", "Examples:", "  strand logs read chat                       the first 100 entries", "  strand logs read chat --before end -n 20    the last 20", "  strand logs read chat --from-time 2026-12-01T10:00:00Z", "  strand logs read chat --all -o json > chat.jsonl"})
final class LogReadCommand implements Callable<Integer> {
    static final int PAGE = 1000;
    private static final long PROGRESS_EVERY_NANOS = 500_000_000L;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    ClientOptions o;
    @Parameters(index = "0", paramLabel = "LOG")
    String log;
    @Option(names = "--from", description = "First seq (default 1).")
    Long from;
    @Option(names = "--from-time", paramLabel = "TIME", description = "Start at the first entry at or after TIME (epoch ms or ISO-8601).")
    String fromTime;
    @Option(names = "--before", paramLabel = "SEQ|end", description = "The entries just before SEQ, or the last ones with 'end' (one page).")
    String before;
    @Option(names = {"-n", "--limit"}, defaultValue = "100", description = "At most this many entries (default ${DEFAULT-VALUE}).")
    long limit;
    @Option(names = "--all", description = "Read to the head, however many entries that is.")
    boolean all;

    @Override
    public Integer call() {
        int given = (from != null ? 1 : 0) + (fromTime != null ? 1 : 0) + (before != null ? 1 : 0);
        if (given > 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "give at most one of --from, --from-time and --before");
        }
        if (limit < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be at least 1");
        }
        StrandClient client = o.client();
        String base = LogsCommand.logPath(o, log) + "/entries?limit=";
        if (before != null) {
            JsonNode page = client.get(base + Math.min(PAGE, limit) + "&before=" + StrandClient.segment(before));
            print(page);
            return 0;
        }
        long wanted = all ? Long.MAX_VALUE : limit;
        long read = 0;
        long started = System.nanoTime();
        long lastProgress = started;
        boolean showedProgress = false;
        String query = fromTime != null ? "&fromTime=" + StrandClient.segment(fromTime) : "&from=" + (from == null ? 1 : from);
        while (read < wanted) {
            JsonNode page = client.get(base + Math.min(PAGE, wanted - read) + query);
            int n = print(page);
            read += n;
            long next = page.path("next").asLong();
            long head = page.path("head").asLong();
            if (n == 0 || next > head) {
                break;
            }
            query = "&from=" + next;
            long now = System.nanoTime();
            if (now - lastProgress >= PROGRESS_EVERY_NANOS) {
                long total = Math.min(wanted, read + head - next + 1);
                o.err().print("\rread " + read + " of " + total + " entries (" + (100 * read / Math.max(1, total)) + "%)");
                o.err().flush();
                lastProgress = now;
                showedProgress = true;
            }
        }
        if (showedProgress) {
            o.err().println("\rread " + read + " entries in " + (System.nanoTime() - started) / 1_000_000 + " ms        ");
            o.err().flush();
        }
        return 0;
    }

    private int print(JsonNode page) {
        PrintWriter out = o.out();
        JsonNode gap = page.get("gap");
        if (gap != null && !gap.isNull()) {
            o.err().println("strand: entries " + gap.path("from").asLong() + ".." + gap.path("to").asLong() + " are no longer retained");
            o.err().flush();
        }
        int n = 0;
        for (JsonNode e : page.path("entries")) {
            out.println(Output.entryLine(e, o.json));
            n++;
        }
        out.flush();
        return n;
    }
}

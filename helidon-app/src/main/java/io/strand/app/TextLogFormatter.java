package io.strand.app;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;

/**
 * {@code --log-format text} (the default): one line per record, {@code <UTC time to the ms> <level>
 * <logger> [<thread>]: <message>}, then the stack trace when there is one. Milliseconds matter: a
 * cluster's failover (election, leadership transfer, the first commit) takes well under a second,
 * and java.util.logging's own two-line format stops at seconds. Stateless, so thread-safe.
 */
public final class TextLogFormatter extends Formatter {
    /** Always three fraction digits (Instant's own text drops them at a whole second). */
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    @Override
    public String format(LogRecord record) {
        StringBuilder line = new StringBuilder(160)
                .append(TIME.format(Instant.ofEpochMilli(record.getMillis()))).append(' ')
                .append(record.getLevel().getName()).append(' ')
                .append(record.getLoggerName()).append(" [").append(Thread.currentThread().getName()).append("]: ")
                .append(formatMessage(record)).append(System.lineSeparator());
        if (record.getThrown() != null) {
            StringWriter trace = new StringWriter();
            record.getThrown().printStackTrace(new PrintWriter(trace));
            line.append(trace);
        }
        return line.toString();
    }
}

package io.strand.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;

/**
 * {@code --log-format json}: one JSON object per line ({@code ts}, {@code level}, {@code logger},
 * {@code thread}, {@code message}, and {@code error} with the stack trace when there is one), for
 * log shippers that parse lines. Stateless, so thread-safe.
 */
public final class JsonLogFormatter extends Formatter {
    @Override
    public String format(LogRecord record) {
        ObjectNode line = Json.MAPPER.createObjectNode();
        line.put("ts", Instant.ofEpochMilli(record.getMillis()).toString());
        line.put("level", record.getLevel().getName());
        line.put("logger", record.getLoggerName());
        line.put("thread", Thread.currentThread().getName());
        line.put("message", formatMessage(record));
        if (record.getThrown() != null) {
            StringWriter trace = new StringWriter();
            record.getThrown().printStackTrace(new PrintWriter(trace));
            line.put("error", trace.toString());
        }
        return line + System.lineSeparator();
    }
}

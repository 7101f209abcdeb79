package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.Iterator;
import java.util.Map;

/**
 * How the CLI prints: an entry as one line ({@code seq  time  [key=K]  data}) or, with
 * {@code --json}, as the entry's JSON on one line; a reply as {@code field: value} lines or its raw
 * JSON. Stateless.
 */
final class Output {
    private Output() {
    }

    static String entryLine(JsonNode entry, boolean json) {
        if (json) {
            return Json.string(entry);
        }
        StringBuilder sb = new StringBuilder();
        sb.append(entry.path("seq").asLong()).append("  ").append(Instant.ofEpochMilli(entry.path("ts").asLong()));
        if (entry.hasNonNull("key")) {
            sb.append("  key=").append(entry.get("key").asText());
        }
        return sb.append("  ").append(Json.string(entry.path("data"))).toString();
    }

    /** Reply fields holding epoch milliseconds, printed as times in text output. */
    static final Set<String> TIME_FIELDS = Set.of("created", "lastAppend", "ts", "lastRoll", "lastVerify");
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

    /** Epoch ms as {@code 2026-12-01 13:05:02Z (3m ago)}. */
    static String time(long epochMillis) {
        return time(epochMillis, System.currentTimeMillis());
    }

    static String time(long epochMillis, long nowMillis) {
        long s = Math.max(0, (nowMillis - epochMillis) / 1000);
        String ago = s < 60 ? s + "s" : s < 3600 ? s / 60 + "m" : s < 86_400 ? s / 3600 + "h" : s / 86_400 + "d";
        return TIME.format(Instant.ofEpochMilli(epochMillis)) + " (" + ago + " ago)";
    }

    /** A byte count for people: {@code 812 B}, {@code 4.2 KiB}, {@code 1.5 GiB}. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** Rows as left-aligned columns two spaces apart; the first row is the header. */
    static void table(PrintWriter out, List<List<String>> rows) {
        int cols = rows.stream().mapToInt(List::size).max().orElse(0);
        int[] width = new int[cols];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                width[i] = Math.max(width[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                sb.append(row.get(i));
                if (i < row.size() - 1) {
                    sb.append(" ".repeat(width[i] - row.get(i).length() + 2));
                }
            }
            out.println(sb);
        }
    }

    /** A reply: raw JSON, or one {@code field: value} line per top-level field. */
    static void reply(PrintWriter out, JsonNode reply, boolean json) {
        if (json) {
            out.println(Json.string(reply));
        } else {
            for (Iterator<Map.Entry<String, JsonNode>> it = reply.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                JsonNode v = f.getValue();
                out.println(f.getKey() + ": " + (v.isTextual() ? v.asText()
                        : TIME_FIELDS.contains(f.getKey()) && v.canConvertToLong() && v.asLong() > 0 ? time(v.asLong())
                        : Json.string(v)));
            }
        }
        out.flush();
    }

    /** A value given on the command line: JSON when it parses, else the text as a JSON string. */
    static JsonNode value(String text, boolean asString) {
        if (!asString) {
            try {
                JsonNode parsed = Json.parse(text);
                if (parsed != null && !parsed.isMissingNode()) {
                    return parsed;
                }
            } catch (RuntimeException notJson) {
                // a plain word or sentence
            }
        }
        return Json.MAPPER.getNodeFactory().textNode(text);
    }
}

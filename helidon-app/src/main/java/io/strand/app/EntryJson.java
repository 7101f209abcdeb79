package io.strand.app;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.strand.core.Entry;
import io.strand.logtier.Page;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Writes entries as JSON text without re-parsing their data: {@code data} is stored as the
 * serialized JSON the client sent, so it is copied in as is. Used by pages and subscription frames.
 */
public final class EntryJson {
    private EntryJson() {
    }

    public static void entries(StringBuilder out, List<Entry> entries) {
        out.append('[');
        for (int i = 0; i < entries.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            entry(out, entries.get(i));
        }
        out.append(']');
    }

    public static void entry(StringBuilder out, Entry e) {
        out.append("{\"seq\":").append(e.seq()).append(",\"ts\":").append(e.ts());
        if (e.key() != null) {
            out.append(",\"key\":");
            string(out, e.key());
        }
        out.append(",\"data\":").append(new String(e.data(), StandardCharsets.UTF_8)).append('}');
    }

    public static void string(StringBuilder out, String s) {
        out.append('"');
        JsonStringEncoder.getInstance().quoteAsString(s, out);
        out.append('"');
    }

    /** The HTTP page reply of SPEC §5: forward pages carry {@code next}, backward pages {@code prev}. */
    public static String page(Page page, boolean backward) {
        StringBuilder out = new StringBuilder(256 + page.entries().size() * 64);
        out.append("{\"entries\":");
        entries(out, page.entries());
        if (backward) {
            out.append(",\"prev\":").append(page.prev());
        } else {
            out.append(",\"next\":").append(page.next());
        }
        out.append(",\"first\":").append(page.first()).append(",\"head\":").append(page.head());
        if (page.gap() != null) {
            out.append(",\"gap\":{\"from\":").append(page.gap().from()).append(",\"to\":").append(page.gap().to()).append('}');
        }
        return out.append('}').toString();
    }
}

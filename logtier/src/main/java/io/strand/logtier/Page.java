package io.strand.logtier;

import io.strand.core.Entry;
import java.util.List;

/**
 * One page or chunk of a log, as the HTTP reply and the subscription frames need it.
 *
 * @param next  cursor for the following forward page (the seq after the last entry)
 * @param prev  cursor for the page before a backward page (its first seq), else 0
 * @param first first retained seq (1 unless trimmed)
 * @param head  committed head when read
 * @param gap   non-null when the requested start lay before {@code first}
 */
public record Page(List<Entry> entries, long next, long prev, long first, long head, Gap gap) {
    public record Gap(long from, long to) {
    }

    /** The page a streamed read describes, with the entries its sink collected. */
    static Page of(PageInfo info, List<Entry> entries) {
        return new Page(entries, info.next(), info.prev(), info.first(), info.head(), info.gap());
    }
}

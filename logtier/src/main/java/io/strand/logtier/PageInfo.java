package io.strand.logtier;

/**
 * What a read that streamed its entries into an {@link EntrySink} says about the page, as a reply
 * or frame needs it after the entries (the fields of {@link Page} without the entries).
 *
 * @param count entries delivered to the sink
 * @param next  cursor for the following forward page (the seq after the last entry)
 * @param prev  cursor for the page before a backward page (its first seq), else 0
 * @param first first retained seq (1 unless trimmed)
 * @param head  committed head when read
 * @param gap   non-null when the requested start lay before {@code first}
 */
public record PageInfo(int count, long next, long prev, long first, long head, Page.Gap gap) {
}

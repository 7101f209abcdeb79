package io.strand.docstore;

/** Outcome of an {@code incr}: the counter's new value and the doc's new version. */
public record IncrResult(long value, long version) {
}

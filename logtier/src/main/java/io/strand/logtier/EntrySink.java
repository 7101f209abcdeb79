package io.strand.logtier;

import io.strand.core.Entry;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Receives the entries of a read in seq order as the reader finds them, without an {@link Entry}
 * object each: a reply or frame writes them straight into its buffer. Called on the reading thread.
 */
@FunctionalInterface
public interface EntrySink {
    /**
     * One entry. {@code data[offset, offset+length)} is its data, the serialized JSON as stored; the
     * array belongs to the reader and is only valid during the call.
     */
    void entry(long seq, long ts, String key, byte[] data, int offset, int length);

    /** A sink that hands each entry to {@code consumer} as an {@link Entry} with its own copy of the data. */
    static EntrySink of(Consumer<Entry> consumer) {
        return (seq, ts, key, data, offset, length) ->
                consumer.accept(new Entry(seq, ts, key, Arrays.copyOfRange(data, offset, offset + length)));
    }
}

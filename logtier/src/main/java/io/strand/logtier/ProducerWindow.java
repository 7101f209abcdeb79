package io.strand.logtier;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Owned by the log's writer thread (through its {@link LogAppender}): the idempotent-producer memory
 * of one log. For the most recently active producers (at least {@code maxProducers}), the seqs each
 * recent {@code producerSeq} was appended at, so a retried append returns the original seqs instead
 * of appending again. Rebuilt on open from the log's state snapshot plus the entries after it.
 */
final class ProducerWindow {
    /** Recent producerSeqs remembered per producer: enough for that many appends in flight. */
    static final int PER_PRODUCER = 64;

    record Applied(long firstSeq, long lastSeq) {
    }

    private final int maxProducers;
    private final LinkedHashMap<String, TreeMap<Long, Applied>> producers;

    ProducerWindow(int maxProducers) {
        this.maxProducers = maxProducers;
        this.producers = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, TreeMap<Long, Applied>> eldest) {
                return size() > ProducerWindow.this.maxProducers;
            }
        };
    }

    /** What a previous append with these ids did, or null when it is new. */
    Applied find(String producerId, long producerSeq) {
        TreeMap<Long, Applied> seen = producers.get(producerId);
        return seen == null ? null : seen.get(producerSeq);
    }

    /** True when {@code producerSeq} is older than everything remembered for that producer (cannot be answered). */
    boolean isStale(String producerId, long producerSeq) {
        TreeMap<Long, Applied> seen = producers.get(producerId);
        return seen != null && seen.size() >= PER_PRODUCER && producerSeq < seen.firstKey();
    }

    void record(String producerId, long producerSeq, long firstSeq, long lastSeq) {
        TreeMap<Long, Applied> seen = producers.computeIfAbsent(producerId, k -> new TreeMap<>());
        seen.put(producerSeq, new Applied(firstSeq, lastSeq));
        while (seen.size() > PER_PRODUCER) {
            seen.pollFirstEntry();
        }
    }

    boolean isEmpty() {
        return producers.isEmpty();
    }

    /** Rows {@code [producerId, producerSeq, firstSeq, lastSeq]}, least recently used first, for the snapshot. */
    List<Object[]> rows() {
        List<Object[]> rows = new ArrayList<>();
        for (Map.Entry<String, TreeMap<Long, Applied>> p : producers.entrySet()) {
            for (Iterator<Map.Entry<Long, Applied>> it = p.getValue().entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<Long, Applied> e = it.next();
                rows.add(new Object[]{p.getKey(), e.getKey(), e.getValue().firstSeq, e.getValue().lastSeq});
            }
        }
        return rows;
    }
}

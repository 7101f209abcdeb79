package io.strand.logtier;

import java.util.List;

/**
 * One append: entries' data as serialized JSON bytes with optional keys, the optional optimistic
 * and idempotency guards of SPEC §5, and an optional entry timestamp.
 *
 * @param stampedAt the batch's ts (epoch millis) as a cluster leader stamped it, so every replica
 *                  stores identical bytes; null = the appending node's clock. Either way a log's ts
 *                  never decreases: a stamp before the log's last ts is raised to it.
 */
public record AppendRequest(List<byte[]> data, List<String> keys, Long expectedLastSeq,
                            String producerId, Long producerSeq, Long stampedAt) {
    public AppendRequest {
        if (data.size() != keys.size()) {
            throw new IllegalArgumentException("one key slot per entry");
        }
        if ((producerId == null) != (producerSeq == null)) {
            throw new IllegalArgumentException("producerId and producerSeq go together");
        }
    }

    /** An append stamped by this node's clock. */
    public AppendRequest(List<byte[]> data, List<String> keys, Long expectedLastSeq, String producerId, Long producerSeq) {
        this(data, keys, expectedLastSeq, producerId, producerSeq, null);
    }

    public static AppendRequest of(byte[] data) {
        java.util.ArrayList<String> keys = new java.util.ArrayList<>();
        keys.add(null);
        return new AppendRequest(List.of(data), keys, null, null, null);
    }

    /** The entries' data bytes, summed (keys not counted). */
    public long dataBytes() {
        long total = 0;
        for (byte[] d : data) {
            total += d.length;
        }
        return total;
    }

    /** This append with its entries' ts fixed at {@code epochMillis} (null = this node's clock). */
    public AppendRequest withStampedAt(Long epochMillis) {
        return new AppendRequest(data, keys, expectedLastSeq, producerId, producerSeq, epochMillis);
    }

    /** The ts to stamp: {@link #stampedAt} when given, else {@code clockMillis}. */
    long stampOr(long clockMillis) {
        return stampedAt != null ? stampedAt : clockMillis;
    }
}

package io.strand.logtier;

import java.util.List;

/**
 * One append: entries' data as serialized JSON bytes with optional keys, and the optional
 * optimistic and idempotency guards of SPEC §5.
 */
public record AppendRequest(List<byte[]> data, List<String> keys, Long expectedLastSeq,
                            String producerId, Long producerSeq) {
    public AppendRequest {
        if (data.size() != keys.size()) {
            throw new IllegalArgumentException("one key slot per entry");
        }
        if ((producerId == null) != (producerSeq == null)) {
            throw new IllegalArgumentException("producerId and producerSeq go together");
        }
    }

    public static AppendRequest of(byte[] data) {
        java.util.ArrayList<String> keys = new java.util.ArrayList<>();
        keys.add(null);
        return new AppendRequest(List.of(data), keys, null, null, null);
    }
}

package io.strand.coldtier;

import io.strand.core.Entry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** Deterministic test entries: seq-derived keys, ts and JSON data of varying size. */
final class TestEntries {
    static final long T0 = 1_764_450_000_000L;

    private TestEntries() {
    }

    /** Entry {@code seq}: ts advances 10 ms per seq (every 4th repeats the previous ts), every 3rd has no key. */
    static Entry entry(long seq) {
        Random r = new Random(seq * 31 + 7);
        int pad = r.nextInt(200);
        char[] fill = new char[pad];
        Arrays.fill(fill, (char) ('a' + (int) (seq % 26)));
        String json = "{\"n\":" + seq + ",\"pad\":\"" + new String(fill) + "\",\"r\":" + r.nextInt() + "}";
        String key = seq % 3 == 0 ? null : "k-" + (seq % 7) + "-é";
        return new Entry(seq, ts(seq), key, json.getBytes(StandardCharsets.UTF_8));
    }

    static long ts(long seq) {
        return T0 + (seq - seq / 4) * 10;
    }

    static List<Entry> range(long from, long to) {
        List<Entry> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(entry(s));
        }
        return out;
    }

    static void assertSame(List<Entry> expected, List<Entry> actual) {
        org.junit.jupiter.api.Assertions.assertEquals(expected.size(), actual.size(), "entry count");
        for (int i = 0; i < expected.size(); i++) {
            Entry e = expected.get(i);
            Entry a = actual.get(i);
            org.junit.jupiter.api.Assertions.assertEquals(e.seq(), a.seq(), "seq at " + i);
            org.junit.jupiter.api.Assertions.assertEquals(e.ts(), a.ts(), "ts of " + e.seq());
            org.junit.jupiter.api.Assertions.assertEquals(e.key(), a.key(), "key of " + e.seq());
            org.junit.jupiter.api.Assertions.assertArrayEquals(e.data(), a.data(), "data of " + e.seq());
        }
    }
}

package io.strand.logtier;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Thread-safe (a concurrent map): written by the log's writer, read by any thread. Strand seq →
 * Chronicle queue index. Queue indexes are {@code cycle << bits | n} and jump at every roll, but
 * within one cycle every excerpt (and so every seq, see {@link HotExcerptCodec}) takes the next
 * index. So one record per cycle — the first seq in it and its index — maps any seq with a floor
 * lookup and an addition, never a scan.
 */
final class SeqIndex {
    private record CycleStart(long firstSeq, long firstIndex, int cycle) {
    }

    private final ConcurrentSkipListMap<Long, CycleStart> bySeq = new ConcurrentSkipListMap<>();

    /** Records that {@code cycle} starts with {@code firstSeq} at queue index {@code firstIndex}. */
    void cycleStarted(int cycle, long firstSeq, long firstIndex) {
        bySeq.put(firstSeq, new CycleStart(firstSeq, firstIndex, cycle));
    }

    /** The queue index of {@code seq}, or -1 when it lies before the first indexed cycle. */
    long indexOf(long seq) {
        Map.Entry<Long, CycleStart> e = bySeq.floorEntry(seq);
        if (e == null) {
            return -1;
        }
        CycleStart start = e.getValue();
        return start.firstIndex + (seq - start.firstSeq);
    }

    /** The seq that queue index {@code queueIndex} of {@code cycle} stands for, or -1 when the cycle is not indexed. */
    long seqOf(int cycle, long queueIndex) {
        for (CycleStart start : bySeq.values()) {
            if (start.cycle == cycle) {
                return queueIndex >= start.firstIndex ? start.firstSeq + (queueIndex - start.firstIndex) : -1;
            }
        }
        return -1;
    }

    /** Forgets the cycles before {@code cycle} (their files were dropped). */
    void dropCyclesBefore(int cycle) {
        bySeq.values().removeIf(c -> c.cycle < cycle);
    }

    /** The cycle holding {@code seq}, or -1. */
    int cycleOf(long seq) {
        Map.Entry<Long, CycleStart> e = bySeq.floorEntry(seq);
        return e == null ? -1 : e.getValue().cycle;
    }

    /** The first seq of the cycle after the one holding {@code seq}, or -1 when that is the last cycle. */
    long firstSeqOfNextCycle(long seq) {
        Long next = bySeq.higherKey(seq);
        return next == null ? -1 : next;
    }

    int cycles() {
        return bySeq.size();
    }

    int lastCycle() {
        Map.Entry<Long, CycleStart> e = bySeq.lastEntry();
        return e == null ? Integer.MIN_VALUE : e.getValue().cycle;
    }
}

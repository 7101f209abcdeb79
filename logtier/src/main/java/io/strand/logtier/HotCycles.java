package io.strand.logtier;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.TailerDirection;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Holds no state of its own (the queue and its {@link SeqIndex} are its {@link HotLog}'s): the cycle
 * files of one hot queue. {@link #indexAll} runs at open, {@link #dropBefore} on the log's writer
 * thread only, {@link #diskBytes} on any thread.
 */
final class HotCycles {
    private final HotLog hot;
    private final ReadCursors cursors;

    HotCycles(HotLog hot, ReadCursors cursors) {
        this.hot = hot;
        this.cursors = cursors;
    }

    /** At open: records in the index where each cycle file starts (its first seq and queue index). */
    void indexAll() {
        SingleChronicleQueue queue = hot.queue;
        try (ExcerptTailer tailer = queue.createTailer()) {
            int cycle = queue.firstCycle();
            int last = queue.lastCycle();
            while (cycle <= last && cycle != -1) {
                if (tailer.moveToCycle(cycle)) {
                    long startIndex = tailer.index();
                    long firstSeq = firstSeqOf(tailer, cycle, startIndex);
                    if (firstSeq > 0) {
                        hot.index.cycleStarted(cycle, firstSeq, startIndex);
                    }
                }
                int next = queue.nextCycle(cycle, TailerDirection.FORWARD);
                if (next <= cycle) {
                    break;
                }
                cycle = next;
            }
        } catch (java.text.ParseException e) {
            throw new StrandException(ErrorCode.CORRUPT, "cannot list cycles of " + hot.dir + ": " + e.getMessage());
        }
    }

    /**
     * The seq of the first excerpt of {@code cycle} (the tailer stands at it, index {@code startIndex}),
     * -1 when the cycle holds no intact excerpt. Every excerpt stands for one seq (a batch's entries,
     * then one padding per further entry, each naming its seq), so when the first excerpt is damaged
     * the first intact one after it says where the cycle starts: its seq less its distance.
     */
    private long firstSeqOf(ExcerptTailer tailer, int cycle, long startIndex) {
        while (true) {
            try (DocumentContext dc = tailer.readingDocument()) {
                if (!dc.isPresent() || hot.rollCycle.toCycle(dc.index()) != cycle) {
                    return -1;
                }
                try {
                    return hot.header(dc, 0).firstSeq() - (dc.index() - startIndex);
                } catch (StrandException e) {
                    if (e.code() != ErrorCode.CORRUPT) {
                        throw e;
                    }
                    HotLog.LOG.log(System.Logger.Level.ERROR, "cycle " + cycle + " of " + hot.dir + " starts with a damaged"
                            + " excerpt; counting its seqs from the next intact one (reads of it answer corrupt): " + e.getMessage());
                }
            }
        }
    }

    /**
     * Deletes whole cycle files whose every entry is below {@code keepFrom} (they are safely cold).
     * Writer thread only. The cycle holding the excerpt of {@code keepFrom}'s batch and all later
     * ones stay: a batch is one excerpt followed by paddings, and when a cycle rolls mid-batch its
     * paddings land in the next cycle while its entries stay in this one, so the cycle of
     * {@code keepFrom}'s own index may be one too late. When {@code keepFrom} is past the last seq,
     * the cycle of the last batch stays (the hot files always hold the newest entries).
     * @return the number of cycle files deleted
     */
    int dropBefore(long keepFrom) {
        long firstSeq = hot.firstSeq();
        long keepSeq = Math.min(keepFrom, hot.lastSeq());
        if (firstSeq == 0 || keepSeq < firstSeq) {
            return 0;
        }
        SingleChronicleQueue queue = hot.queue;
        int keepCycle;
        try (ExcerptTailer tailer = queue.createTailer()) {
            if (hot.moveTo(tailer, keepSeq) == null) {
                throw hot.corrupt(keepSeq, "no excerpt at its index while dropping cold cycles");
            }
            keepCycle = hot.rollCycle.toCycle(tailer.index());
        }
        int dropped = 0;
        try {
            int cycle = queue.firstCycle();
            while (cycle != -1 && cycle < keepCycle) {
                int next = queue.nextCycle(cycle, TailerDirection.FORWARD); // before the delete: Chronicle logs an error for a vanished cycle
                var store = queue.storeForCycle(cycle, queue.epoch(), false, null);
                if (store != null) {
                    File f = store.file();
                    queue.closeStore(store);
                    if (f != null && f.delete()) {
                        dropped++;
                    }
                }
                if (next <= cycle) {
                    break;
                }
                cycle = next;
            }
        } catch (java.text.ParseException e) {
            throw new StrandException(ErrorCode.CORRUPT, "cannot list cycles of " + hot.dir + ": " + e.getMessage());
        }
        if (dropped > 0) {
            queue.refreshDirectoryListing();
            hot.index.dropCyclesBefore(keepCycle);
            hot.storedFrom(firstReadableSeq());
            cursors.invalidate(); // an idle tailer left on a deleted file would keep it mapped
        }
        return dropped;
    }

    /**
     * The first seq whose batch is still in the files, 0 when none: after older cycles were dropped,
     * the files may start with paddings of a batch whose excerpt went with them (those seqs are cold).
     */
    long firstReadableSeq() {
        try (ExcerptTailer tailer = hot.queue.createTailer()) {
            tailer.toStart();
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        return 0;
                    }
                    HotExcerptCodec.Header h;
                    try {
                        h = hot.header(dc, 0);
                    } catch (StrandException e) {
                        long seq = HotLog.damagedSeq(e);
                        if (seq <= 0) {
                            throw e;
                        }
                        return seq; // a damaged first excerpt: its seq stays in the hot range, and reads of it answer corrupt
                    }
                    if (h.kind() == HotExcerptCodec.ENTRIES) {
                        return h.firstSeq();
                    }
                }
            }
        }
    }

    /** Bytes the queue's cycle files take on disk (what dropping cycles gives back; {@link AllocatedBytes}). Any thread. */
    long diskBytes() {
        long total = 0;
        try (var files = Files.list(hot.dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.getFileName().toString().endsWith(".cq4")) {
                    try {
                        total += AllocatedBytes.of(f);
                    } catch (java.io.IOException gone) {
                        // dropped meanwhile
                    }
                }
            }
        } catch (java.io.IOException e) {
            return total;
        }
        return total;
    }
}

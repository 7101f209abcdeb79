package io.strand.docstore;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.Map;
import java.util.zip.CRC32C;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.TailerDirection;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Thread-safe: each writer thread appends through its own {@link Appender} (Chronicle serialises appends with its
 * write lock); replay runs on the start-up thread, cycle deletion on the checkpointer. The doc journal, the source
 * of truth for docs: one Chronicle Queue ({@code DATA/journal}) of full new doc values and tombstones.
 *
 * <p>One excerpt per change:
 * <pre>
 * offset    size  field
 * 0         1     type: 1 = PUT (a doc's full new value), 2 = DELETE (tombstone)
 * 1         8     version: the doc's new version (PUT) or the version deleted (DELETE)
 * 9         2     k = key length (UTF-8 bytes of "ws/doc")
 * 11        k     key
 * 11+k      4     n = value length (0 for DELETE)
 * 15+k      n     value: the doc's whole JSON, UTF-8
 * 15+k+n    4     CRC32C of bytes 0 .. 15+k+n
 * </pre>
 * Commit point: the change's group of write-ahead records is durable ({@link io.strand.core.WriteAheadLog},
 * record type {@link DocStore#WAL_CHANGE}, whose payload is these same bytes); only then is it acknowledged and
 * published. Chronicle completes an excerpt's header after its body, so a kill mid-append leaves an excerpt no
 * reader returns, and a change the journal lost with the page cache is re-applied from the write-ahead log; every
 * acknowledged change survives kill -9 and, in {@code fsync} mode, power loss. Replaying a record is idempotent (it carries the whole value), so
 * replay may start at any index up to which the map view is known to be complete. A CRC mismatch is
 * reported as {@code corrupt}, never skipped.
 */
final class DocJournal implements AutoCloseable {
    static final byte PUT = 1;
    static final byte DELETE = 2;

    /** One decoded excerpt; {@code json} is null for a DELETE. */
    record Record(byte type, long version, String key, byte[] json) {
        boolean isDelete() {
            return type == DELETE;
        }
    }

    /** Receives replayed records in journal order. */
    interface Visitor {
        void accept(long index, Record record);
    }

    private final Path dir;
    private final SingleChronicleQueue queue;

    DocJournal(Path dir, DocStoreConfig config) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot create doc journal " + dir + ": " + e.getMessage());
        }
        this.queue = SingleChronicleQueueBuilder.binary(dir.toFile())
                .rollCycle(config.journalRollCycle())
                .blockSize(config.journalBlockSize())
                .timeProvider(config.journalClock())
                .build();
    }

    static byte[] encode(Record r) {
        byte[] key = r.key().getBytes(StandardCharsets.UTF_8);
        byte[] json = r.json() == null ? new byte[0] : r.json();
        ByteBuffer buf = ByteBuffer.allocate(1 + 8 + 2 + key.length + 4 + json.length + 4);
        buf.put(r.type()).putLong(r.version()).putShort((short) key.length).put(key).putInt(json.length).put(json);
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        return buf.array();
    }

    static Record decode(byte[] bytes, long index) {
        try {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            CRC32C crc = new CRC32C();
            crc.update(bytes, 0, bytes.length - 4);
            if ((int) crc.getValue() != buf.getInt(bytes.length - 4)) {
                throw corrupt(index, "checksum mismatch");
            }
            byte type = buf.get();
            if (type != PUT && type != DELETE) {
                throw corrupt(index, "unknown record type " + type);
            }
            long version = buf.getLong();
            byte[] key = new byte[Short.toUnsignedInt(buf.getShort())];
            buf.get(key);
            int n = buf.getInt();
            if (n < 0 || n != buf.remaining() - 4) {
                throw corrupt(index, "value length " + n + " does not match the record");
            }
            byte[] json = null;
            if (type == PUT) {
                json = new byte[n];
                buf.get(json);
            }
            return new Record(type, version, new String(key, StandardCharsets.UTF_8), json);
        } catch (RuntimeException e) {
            if (e instanceof StrandException) {
                throw e;
            }
            throw corrupt(index, "unreadable record (" + e + ")");
        }
    }

    private static StrandException corrupt(long index, String what) {
        return new StrandException(ErrorCode.CORRUPT, "doc journal record at index 0x" + Long.toHexString(index)
                + " is corrupt: " + what, Map.of("index", index));
    }

    /** A new appender for the calling writer thread. */
    Appender appender() {
        return new Appender(queue.createAppender());
    }

    /** Index of the last complete record, or -1 when the journal is empty. */
    long lastIndex() {
        long last = queue.lastIndex();
        return last < 0 || last == Long.MAX_VALUE ? -1 : last;
    }

    /**
     * Visits, in order, every record with an index greater than {@code after} (-1 = from the start).
     *
     * @return the index of the last record visited, or {@code after} when there was none
     */
    long replay(long after, Visitor visitor) {
        long last = after;
        try (ExcerptTailer tailer = queue.createTailer()) {
            if (after < 0 || !tailer.moveToIndex(after)) {
                tailer.toStart();
            }
            byte[] buf = new byte[256];
            while (true) {
                long index;
                byte[] bytes;
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    index = dc.index();
                    if (index <= after) {
                        continue;
                    }
                    Bytes<?> in = dc.wire().bytes();
                    int len = (int) in.readRemaining();
                    if (buf.length < len) {
                        buf = new byte[Math.max(len, buf.length * 2)];
                    }
                    in.read(buf, 0, len);
                    bytes = java.util.Arrays.copyOf(buf, len);
                }
                visitor.accept(index, decode(bytes, index));
                last = index;
            }
        }
        return last;
    }

    /**
     * Deletes whole journal cycle files whose every record has an index below {@code keepFrom}'s cycle, and
     * never the current cycle. Only call once a durable snapshot and checkpoint cover {@code keepFrom}.
     *
     * @return the number of cycle files deleted
     */
    int deleteCyclesBefore(long keepFrom) {
        if (keepFrom < 0) {
            return 0;
        }
        int keepCycle = Math.min(queue.rollCycle().toCycle(keepFrom), queue.cycle());
        int deleted = 0;
        try {
            int cycle = queue.firstCycle();
            while (cycle != Integer.MAX_VALUE && cycle >= 0 && cycle < keepCycle) {
                SingleChronicleQueueStore store = queue.storeForCycle(cycle, queue.epoch(), false, null);
                if (store != null) {
                    File f = store.file();
                    queue.closeStore(store);
                    if (f != null && f.delete()) {
                        deleted++;
                    }
                }
                int next = queue.nextCycle(cycle, TailerDirection.FORWARD);
                if (next <= cycle) {
                    break;
                }
                cycle = next;
            }
        } catch (ParseException e) {
            throw new StrandException(ErrorCode.CORRUPT, "cannot list doc journal cycles in " + dir + ": "
                    + e.getMessage());
        }
        if (deleted > 0) {
            queue.refreshDirectoryListing();
        }
        return deleted;
    }

    /** Number of cycle files currently in the journal directory. */
    int cycleFiles() {
        File[] files = dir.toFile().listFiles((d, name) -> name.endsWith(SingleChronicleQueue.SUFFIX));
        return files == null ? 0 : files.length;
    }

    Path dir() {
        return dir;
    }

    @Override
    public void close() {
        queue.close();
    }

    /**
     * Appends for one writer thread. Owned by that writer thread; {@link #close()} may come from the
     * closing thread once the writer is idle. Nothing is forced here: the write-ahead log holds each
     * record until a checkpoint has synced the journal's pages.
     */
    final class Appender {
        private final ExcerptAppender appender;

        private Appender(ExcerptAppender appender) {
            this.appender = appender;
            appender.singleThreadedCheckDisabled(true);
        }

        /** Appends one {@link #encode encoded} record (not yet durable) and returns its journal index. */
        long append(byte[] encoded) {
            try (DocumentContext dc = appender.writingDocument()) {
                try {
                    dc.wire().bytes().write(encoded);
                } catch (RuntimeException | Error e) {
                    dc.rollbackOnClose();
                    throw e;
                }
            }
            return appender.lastIndexAppended();
        }

        void close() {
            appender.close();
        }
    }
}

package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32C;

/**
 * The commit point of a transaction across objects (a {@code txn}: doc changes and log appends).
 * Thread-safe: each writer has its own slot (a memory-mapped file, named after the writer) and only
 * the holder of that writer's turn writes it; {@link #recover} runs once, before traffic.
 *
 * <p>A txn's parts go to different files (each log's queue, the doc journal), so a kill -9 between
 * two of them would leave half a txn. A txn is therefore rolled forward: its turn first validates
 * every part and encodes each part's change as the same record that write-ahead replay applies
 * idempotently, then writes all of them here, then applies them to their home files, then marks
 * the slot empty. A crash before the commit point leaves no part anywhere; a crash after it is
 * finished by {@link #recover}, which hands each record to its store's replayer
 * ({@link Writers#replay}) and so applies exactly the parts still missing.
 *
 * <p>Slot file {@code intent-<writer thread>.txn}, memory-mapped (a kill -9 keeps what was stored in
 * the page cache; in {@code fsync} mode the group's write-ahead write then covers power loss for
 * acknowledged txns):
 * <pre>
 * offset  size  field
 *      0     8  MAGIC "STRNDTXN"
 *      8     4  body length; 0 = no txn in flight             ┐ one 8-byte store:
 *     12     4  CRC32C of the body                              ┘ THE COMMIT POINT
 *     16     n  body: records back to back, each
 *               int length (type + payload), byte type, payload
 *               (framed as in a write-ahead group; types and payloads: {@link WalRecordType})
 * </pre>
 * The body is written first, then length and CRC together in one aligned 8-byte store; "done" stores
 * zero there before the next txn's body may be written, so a torn or stale body never validates.
 * Not covered: a power loss (not a process crash) before an unacknowledged txn's group is durable
 * may leave some of its parts on disk, since the slot is not forced before the parts are applied.
 */
public final class TxnIntents implements AutoCloseable {
    private static final long MAGIC = 0x5354524e4454584eL; // "STRNDTXN"
    private static final int HEADER = 16;
    private static final int INITIAL_BYTES = 1 << 20;
    private static final System.Logger LOG = System.getLogger("strand.txn");

    /** One part of a txn: a record of the given write-ahead type, replayed by that type's replayer. */
    public record Part(byte type, byte[] payload) {
    }

    private final Path dir;
    private final Map<String, Slot> slots = new ConcurrentHashMap<>();

    public TxnIntents(Path dir) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot create " + dir + ": " + e.getMessage(), Map.of(), e);
        }
    }

    /**
     * Writes every part of one txn and then its commit point; from here on the txn happens, now or
     * at the next start. Writer thread only; call {@link #done} once every part is applied.
     */
    public void commit(List<Part> parts) {
        if (!Writers.onWriterThread()) {
            throw new IllegalStateException("txn intents are written on a writer thread only");
        }
        int body = 0;
        for (Part p : parts) {
            body += 5 + p.payload().length;
        }
        Slot slot = slots.computeIfAbsent(Writers.currentWriter(), w -> new Slot(dir.resolve("intent-" + w + ".txn")));
        slot.write(parts, body);
    }

    /**
     * Records that the calling writer's txn failed after its commit point: its slot keeps the
     * txn for the next start to finish, and this thread refuses every later txn until then (its
     * stores' state is no longer known to match what was acknowledged).
     */
    public void failed(Throwable cause) {
        Slot slot = slots.get(Writers.currentWriter());
        if (slot != null) {
            slot.stuck = cause;
        }
    }

    /** Marks the calling writer's txn applied (its slot empty). */
    public void done() {
        Slot slot = slots.get(Writers.currentWriter());
        if (slot != null) {
            slot.map.putLong(8, 0);
        }
    }

    /**
     * Finishes every txn a crash left after its commit point: replays its records through
     * {@code writers} (each store skips what it already holds), waits, makes the stores durable,
     * then empties the slot. Call once, after {@link Writers#recover} and before traffic.
     * @return the number of txns rolled forward
     */
    public int recover(Writers writers) {
        int finished = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "intent-*.txn")) {
            for (Path f : files) {
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    if (ch.size() < HEADER) {
                        continue;
                    }
                    MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size());
                    List<Part> parts = read(map);
                    if (parts.isEmpty()) {
                        continue;
                    }
                    List<CompletableFuture<?>> applied = new ArrayList<>();
                    for (Part p : parts) {
                        applied.add(writers.replay(p.type(), ByteBuffer.wrap(p.payload())));
                    }
                    CompletableFuture.allOf(applied.toArray(CompletableFuture[]::new)).join();
                    FileSystemSync.syncfs(dir); // the stores now hold every part durably
                    map.putLong(8, 0);
                    map.force();
                    finished++;
                }
            }
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot recover txn intents in " + dir + ": " + e.getMessage(), Map.of(), e);
        }
        if (finished > 0) {
            LOG.log(System.Logger.Level.INFO, "rolled {0} txn(s) forward from {1}", finished, dir);
        }
        return finished;
    }

    /** The parts of a committed txn in {@code map}, or none when its header is empty or does not check out. */
    static List<Part> read(ByteBuffer map) {
        if (map.capacity() < HEADER || map.getLong(0) != MAGIC) {
            return List.of();
        }
        int length = map.getInt(8);
        if (length <= 0 || length > map.capacity() - HEADER) {
            return List.of();
        }
        ByteBuffer body = map.slice(HEADER, length);
        if (crc(body) != map.getInt(12)) {
            return List.of();
        }
        List<Part> parts = new ArrayList<>();
        while (body.remaining() >= 5) {
            int n = body.getInt();
            byte type = body.get();
            byte[] payload = new byte[n - 1];
            body.get(payload);
            parts.add(new Part(type, payload));
        }
        return parts;
    }

    private static int crc(ByteBuffer body) {
        CRC32C crc = new CRC32C();
        crc.update(body.duplicate());
        return (int) crc.getValue();
    }

    @Override
    public void close() {
        slots.values().forEach(Slot::close);
        slots.clear();
    }

    /** One writer thread's mapped slot file; used only by that thread. */
    private static final class Slot {
        private final Path path;
        private FileChannel channel;
        private MappedByteBuffer map;
        /** Set when a txn failed after its commit point: kept for recovery, no later txn may overwrite it. */
        private Throwable stuck;

        Slot(Path path) {
            this.path = path;
            try {
                channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                mapAtLeast(INITIAL_BYTES);
                map.putLong(8, 0);
                map.putLong(0, MAGIC);
            } catch (IOException e) {
                throw new StrandException(ErrorCode.UNAVAILABLE, "cannot open txn slot " + path + ": " + e.getMessage(), Map.of(), e);
            }
        }

        private void mapAtLeast(long bytes) throws IOException {
            long size = Math.max(channel.size(), INITIAL_BYTES);
            while (size < bytes) {
                size *= 2;
            }
            if (map == null || map.capacity() < size) {
                map = channel.map(FileChannel.MapMode.READ_WRITE, 0, size);
            }
        }

        void write(List<Part> parts, int body) {
            if (stuck != null) {
                throw new StrandException(ErrorCode.UNAVAILABLE, "an earlier txn on this writer could not be finished ("
                        + stuck.getMessage() + "); a restart finishes it, txns are refused until then");
            }
            try {
                mapAtLeast(HEADER + (long) body);
            } catch (IOException e) {
                throw new StrandException(ErrorCode.UNAVAILABLE, "cannot grow txn slot " + path + ": " + e.getMessage(), Map.of(), e);
            }
            ByteBuffer out = map.duplicate().position(HEADER);
            for (Part p : parts) {
                out.putInt(1 + p.payload().length).put(p.type()).put(p.payload());
            }
            int crc = crc(map.slice(HEADER, body));
            map.putLong(8, ((long) body << 32) | (crc & 0xffffffffL)); // the commit point
        }

        void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // the mapping stays valid until unmapped; nothing to flush
            }
        }
    }
}

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
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * What makes a group commit durable in {@code fsync} mode. Each writer thread owns a {@link Lane}:
 * a run of segment files, fully allocated and written before use, opened with {@code O_DSYNC}, so
 * one group costs one write and one device flush, and no metadata journal commit (measured here: one
 * 4 KiB {@code O_DSYNC} write to a preallocated file ≈0.15–0.35 ms, where an fdatasync of a
 * Chronicle cycle file after a group of appends took 0.5–2.4 ms and write-protect faults on every
 * page after). The stores (queues, doc journal, map) then stay in the page cache.
 *
 * <p>Checkpoint: when a segment fills, or holds {@code checkpointRecords} records, the lane moves on
 * and a background thread calls {@code syncfs} on the data directory's file system; only then is the
 * full segment let go. The record bound keeps what a crash leaves to replay small (each replayed
 * record may open a log's queue: 67,258 records, mostly first appends to new logs, took 32 s) rather
 * than whatever 16 MiB of small records holds; a clean {@link #close()} checkpoints everything, so
 * the next start replays nothing. It is
 * recycled (renamed to {@code free-N.wal} and reused by a later lane), so a busy server writes each
 * segment's zeros once, not once per segment: zero-filling in the background competed with the
 * durable writes for the disk. On start, {@link #recover()} hands every record left over from the
 * last run to the {@link Replayer} of its type, in the order it was written, waits, checkpoints, and
 * lets the old segments go. Replayers must be idempotent: after a process crash (not a power loss)
 * the home files already hold everything.
 *
 * <p>Segment layout (big-endian; file name {@code <lane>-<number>.wal}, or {@code free-<n>.wal}
 * while it waits for reuse):
 * <pre>
 * offset  bytes  field
 * 0       8      MAGIC "STRNDWAL" (0x5354524e4457414c); anything else: a never-used file, read as empty
 * 8       8      salt: new random bits each time the file is (re)used, header fsynced before the rename
 * 16      ...    groups, back to back, then zeros (a new file) or a previous use's groups (a recycled one)
 *
 * group:  0  4  length L of the records that follow (excludes these 8 bytes)
 *         4  4  CRC32C of (the 8 salt bytes, the L record bytes)
 *         8  L  records, back to back:  0 4 length N (type + payload) | 4 1 type | 5 N-1 payload
 * </pre>
 * Commit point: a group is committed when its one {@code O_DSYNC} write (header and records
 * together) returns; only then are its turns acknowledged. A group whose CRC checks out is whole.
 *
 * <p>Reading a segment stops at the first group whose length or CRC does not check out. Where no
 * group with this salt follows it, that is the segment's end: the zeros of a new file, a group torn
 * by power loss (its write never returned, so it was never acknowledged), or a group left from the
 * file's previous use (another salt). Where an intact group with this salt follows (found by
 * scanning every later offset, since the damaged length cannot be trusted), the damaged group was
 * written before that one returned — whole, and perhaps acknowledged — so it is corruption, not a
 * torn tail: {@link #recover()} refuses to start with {@code corrupt}, naming the segment file and
 * the group's offset, before replaying anything, and keeps the segment. It does not go on without
 * the damaged group: after a power loss the home files need not hold its records, and nothing here
 * can tell which those were. A flip inside the last group of a segment looks exactly like a torn
 * write and is dropped; after a process crash the home files hold its records anyway.
 */
public final class WriteAheadLog implements AutoCloseable {
    static final int SEGMENT_HEADER_BYTES = 16;
    static final int GROUP_HEADER_BYTES = 8;
    static final int RECORD_HEADER_BYTES = 5;
    private static final long MAGIC = 0x5354524e4457414cL; // "STRNDWAL"
    /** Records per lane segment before a checkpoint, unless the segment fills first. */
    public static final int DEFAULT_CHECKPOINT_RECORDS = 8192;
    /** Free segments kept for reuse; more are deleted. */
    private static final int MAX_FREE = 4;
    private static final Pattern SEGMENT_NAME = Pattern.compile("(\\d+)-(\\d+)\\.wal");
    private static final Pattern FREE_NAME = Pattern.compile("free-(\\d+)\\.wal");
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(1 << 20);
    private static final System.Logger LOG = System.getLogger("strand.wal");
    private static final java.security.SecureRandom SALTS = new java.security.SecureRandom();

    /** Re-applies one record at start-up; completes when applied (e.g. as a turn on the owner's writer). */
    @FunctionalInterface
    public interface Replayer {
        CompletableFuture<?> replay(ByteBuffer payload);
    }

    private record Segment(Path path, int lane, long number) {
    }

    private final Path dir;
    private final long segmentBytes;
    /** Asked before a new segment file is allocated (a recycled one needs no new space). */
    private final DiskSpace disk;
    private final int checkpointRecords;
    private final Map<Byte, Replayer> replayers = new ConcurrentHashMap<>();
    private final List<Segment> leftover;
    /** Segments whose records are all checkpointed, ready for reuse. */
    private final java.util.concurrent.ConcurrentLinkedDeque<Path> free = new java.util.concurrent.ConcurrentLinkedDeque<>();
    private final ExecutorService background = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "wal-background");
        t.setDaemon(true);
        return t;
    });
    private final List<Lane> lanes = new ArrayList<>();
    /**
     * Not guarded by this object's lock: {@link #close()} holds it while it waits for a lane's spare
     * segment, which a background thread may still be preparing (and numbering).
     */
    private final java.util.concurrent.atomic.AtomicLong nextNumber = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong nextFreeName = new java.util.concurrent.atomic.AtomicLong();
    private boolean recovered;

    /** Bytes of one segment file (allocated once, then recycled). */
    public static final long DEFAULT_SEGMENT_BYTES = 16L << 20;

    /** Segments of 16 MiB: a checkpoint every 16 MiB or {@link #DEFAULT_CHECKPOINT_RECORDS} records per lane. */
    public WriteAheadLog(Path dir) {
        this(dir, DEFAULT_SEGMENT_BYTES);
    }

    public WriteAheadLog(Path dir, long segmentBytes) {
        this(dir, segmentBytes, DEFAULT_CHECKPOINT_RECORDS);
    }

    /** @param checkpointRecords a lane moves to a new segment (checkpointing the old) after this many records */
    public WriteAheadLog(Path dir, long segmentBytes, int checkpointRecords) {
        this(dir, segmentBytes, checkpointRecords, DiskSpace.of(dir, DiskSpace.DEFAULT_RESERVE_BYTES));
    }

    /** As {@link #WriteAheadLog(Path, long)}, new segments claimed from {@code disk} first. */
    public WriteAheadLog(Path dir, long segmentBytes, DiskSpace disk) {
        this(dir, segmentBytes, DEFAULT_CHECKPOINT_RECORDS, disk);
    }

    /**
     * @param checkpointRecords a lane moves to a new segment (checkpointing the old) after this many records
     * @param disk asked before a new segment file is allocated
     */
    public WriteAheadLog(Path dir, long segmentBytes, int checkpointRecords, DiskSpace disk) {
        if (checkpointRecords < 1) {
            throw new IllegalArgumentException("checkpointRecords must be ≥ 1, not " + checkpointRecords);
        }
        this.dir = dir;
        this.disk = disk;
        this.segmentBytes = Math.max(segmentBytes, 4096);
        this.checkpointRecords = checkpointRecords;
        try {
            Files.createDirectories(dir);
            this.leftover = listSegments(dir);
            listFree();
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot open write-ahead log " + dir + ": " + e.getMessage(), Map.of(), e);
        }
        this.nextNumber.set(leftover.stream().mapToLong(Segment::number).max().orElse(0) + 1);
    }

    /** Routes records of {@code type} to {@code replayer} in {@link #recover()}; a store reopened on the same writers replaces its own. */
    public void register(byte type, Replayer replayer) {
        replayers.put(type, replayer);
    }

    /**
     * Replays what the last run left, in write order per lane, then makes the stores durable and
     * lets the old segments go. Call once, after every replayer is registered and before traffic.
     * @return the number of records replayed
     * @throws StrandException {@code corrupt} before replaying anything when a segment holds a damaged
     *     group followed by an intact one (see the class comment); the segments are kept
     */
    public long recover() {
        if (recovered) {
            throw new IllegalStateException("recover() runs once");
        }
        recovered = true;
        for (Segment s : leftover) {
            read(s.path(), (type, payload) -> { }); // a corrupt segment refuses the start before anything is replayed
        }
        List<CompletableFuture<?>> applied = new ArrayList<>();
        long records = 0;
        for (Segment s : leftover) {
            records += read(s.path(), (type, payload) -> {
                Replayer r = replayers.get(type);
                if (r == null) {
                    throw new StrandException(ErrorCode.CORRUPT, "write-ahead log " + s.path() + " holds a record of unknown type " + type);
                }
                applied.add(r.replay(payload));
            });
        }
        try {
            CompletableFuture.allOf(applied.toArray(CompletableFuture[]::new)).join();
        } catch (java.util.concurrent.CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw cause instanceof StrandException se ? se
                    : new StrandException(ErrorCode.CORRUPT, "write-ahead replay failed: " + cause, Map.of(), cause);
        }
        if (!leftover.isEmpty()) {
            checkpoint(leftover.stream().map(Segment::path).toList());
            LOG.log(System.Logger.Level.INFO, "write-ahead log {0}: replayed {1} records from {2} segments",
                    dir, records, leftover.size());
        }
        return records;
    }

    /** The lane of one writer thread; its first segment is made ready on its first write. */
    public synchronized Lane lane(int number) {
        Lane lane = new Lane(number);
        lanes.add(lane);
        return lane;
    }

    /** A payload that starts with an owner's key ({@code "ws/name"}), read back with {@link #key}. */
    public static byte[] keyed(String key, byte[] body) {
        return keyed(key, body.length, (into, offset) -> System.arraycopy(body, 0, into, offset, body.length));
    }

    /** As {@link #keyed(String, byte[])}, the body copied in by {@code body} (one array, one copy). */
    public static byte[] keyed(String key, int bodyLength, BodyCopier body) {
        byte[] k = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] payload = new byte[2 + k.length + bodyLength];
        ByteBuffer.wrap(payload).putShort((short) k.length).put(k);
        body.copyInto(payload, 2 + k.length);
        return payload;
    }

    /** Copies a payload's body into {@code into} at {@code offset}. */
    @FunctionalInterface
    public interface BodyCopier {
        void copyInto(byte[] into, int offset);
    }

    /** Reads the key of a {@link #keyed} payload, leaving {@code payload} at the body. */
    public static String key(ByteBuffer payload) {
        byte[] k = new byte[Short.toUnsignedInt(payload.getShort())];
        payload.get(k);
        return new String(k, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The rest of {@code payload} as an array. */
    public static byte[] rest(ByteBuffer payload) {
        byte[] body = new byte[payload.remaining()];
        payload.get(body);
        return body;
    }

    /** Visits every intact record of a segment in order; returns how many. */
    static long read(Path segment, RecordVisitor visitor) {
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < SEGMENT_HEADER_BYTES) {
                return 0;
            }
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
            if (map.getLong(0) != MAGIC) {
                return 0; // never used: its header was not written
            }
            byte[] saltBytes = saltBytes(map.getLong(8));
            map.position(SEGMENT_HEADER_BYTES);
            long count = 0;
            CRC32C crc = new CRC32C();
            while (map.remaining() >= GROUP_HEADER_BYTES) {
                int at = map.position();
                int length = map.getInt();
                int expected = map.getInt();
                if (length <= 0 || length > map.remaining()
                        || groupCrc(crc, saltBytes, map.slice(at + GROUP_HEADER_BYTES, length)) != expected) {
                    // the zeros past the last group, a torn tail, a previous use's group: or corruption
                    refuseIfFollowed(segment, map, saltBytes, at);
                    break;
                }
                ByteBuffer group = map.slice(at + GROUP_HEADER_BYTES, length);
                map.position(at + GROUP_HEADER_BYTES + length);
                while (group.remaining() >= RECORD_HEADER_BYTES) {
                    int recordLength = group.getInt();
                    byte type = group.get();
                    ByteBuffer payload = group.slice(group.position(), recordLength - 1);
                    group.position(group.position() + recordLength - 1);
                    visitor.visit(type, payload);
                    count++;
                }
            }
            return count;
        } catch (java.nio.file.NoSuchFileException e) {
            return 0; // checkpointed away while the directory was listed
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot read write-ahead segment " + segment + ": " + e.getMessage(), Map.of(), e);
        }
    }

    /**
     * Throws {@code corrupt} when an intact group salted like this segment's starts anywhere after
     * {@code bad} (the offset of a group that failed its checks): the bad group was then written
     * whole before it, so it is damage, not a torn tail. Candidates must frame their records exactly
     * before their CRC is computed, so zeros and random bytes cost one bounds check each.
     */
    private static void refuseIfFollowed(Path segment, ByteBuffer map, byte[] salt, int bad) {
        CRC32C crc = new CRC32C();
        int limit = map.limit();
        for (int at = bad + 1; at + GROUP_HEADER_BYTES + RECORD_HEADER_BYTES <= limit; at++) {
            int length = map.getInt(at);
            if (length < RECORD_HEADER_BYTES || length > limit - at - GROUP_HEADER_BYTES || !framesRecords(map, at + GROUP_HEADER_BYTES, length)) {
                continue;
            }
            if (groupCrc(crc, salt, map.slice(at + GROUP_HEADER_BYTES, length)) == map.getInt(at + 4)) {
                throw new StrandException(ErrorCode.CORRUPT, "write-ahead segment " + segment + " is corrupt at offset " + bad
                        + ": the group there fails its checksum, but an intact group written after it follows at offset " + at
                        + ", so it is damage, not a torn tail, and its records may have been acknowledged. Refusing to start"
                        + " rather than drop them silently: restore the data directory from a backup, or move this segment"
                        + " aside to start without any of its records");
            }
        }
    }

    /** Whether {@code length} bytes at {@code from} are exactly a run of well-formed record headers and payloads. */
    private static boolean framesRecords(ByteBuffer map, int from, int length) {
        int end = from + length;
        int at = from;
        while (end - at >= RECORD_HEADER_BYTES) {
            int recordLength = map.getInt(at);
            if (recordLength < 1 || recordLength > end - at - 4) {
                return false;
            }
            at += 4 + recordLength;
        }
        return at == end;
    }

    private static int groupCrc(CRC32C crc, byte[] salt, ByteBuffer records) {
        crc.reset();
        crc.update(salt);
        crc.update(records);
        return (int) crc.getValue();
    }

    private static byte[] saltBytes(long salt) {
        return ByteBuffer.allocate(8).putLong(0, salt).array();
    }

    @FunctionalInterface
    interface RecordVisitor {
        void visit(byte type, ByteBuffer payload);
    }

    /** Makes every store's page cache durable, then lets {@code segments} go: recycled, or deleted past {@link #MAX_FREE}. */
    private void checkpoint(List<Path> segments) {
        try {
            FileSystemSync.syncfs(dir);
            for (Path p : segments) {
                if (!Files.exists(p)) {
                    continue;
                }
                if (free.size() < MAX_FREE && Files.size(p) == segmentBytes) {
                    Path target = dir.resolve("free-" + freeName() + ".wal");
                    Files.move(p, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                    free.add(target);
                } else {
                    Files.delete(p);
                }
            }
            DurableFiles.fsyncDirectory(dir);
        } catch (IOException e) {
            // the segments stay and are replayed (idempotently) by the next start
            LOG.log(System.Logger.Level.WARNING, "write-ahead checkpoint failed; segments kept: " + e.getMessage(), e);
        }
    }

    /** Closes every lane, then checkpoints: a clean stop leaves nothing to replay. Call after the writers stopped. */
    @Override
    public synchronized void close() {
        List<Path> all = new ArrayList<>();
        for (Lane lane : lanes) {
            all.addAll(lane.closeAndList());
        }
        background.shutdown();
        try {
            background.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            all.addAll(listSegments(dir).stream().map(Segment::path).toList());
        } catch (IOException ignored) {
            // whatever is left is replayed next start
        }
        checkpoint(all.stream().distinct().toList());
    }

    private static List<Segment> listSegments(Path dir) throws IOException {
        List<Segment> found = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "*.wal")) {
            for (Path p : stream) {
                Matcher m = SEGMENT_NAME.matcher(p.getFileName().toString());
                if (m.matches()) {
                    found.add(new Segment(p, Integer.parseInt(m.group(1)), Long.parseLong(m.group(2))));
                }
            }
        }
        found.sort(Comparator.comparingInt(Segment::lane).thenComparingLong(Segment::number));
        return found;
    }

    /** Free segments of this run's size are reused; others (another segment size) are deleted. */
    private void listFree() throws IOException {
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "free-*.wal")) {
            for (Path p : stream) {
                Matcher m = FREE_NAME.matcher(p.getFileName().toString());
                try {
                    if (m.matches() && Files.size(p) == segmentBytes && free.size() < MAX_FREE) {
                        free.add(p);
                        nextFreeName.accumulateAndGet(Long.parseLong(m.group(1)) + 1, Math::max);
                    } else {
                        Files.delete(p);
                    }
                } catch (java.nio.file.NoSuchFileException gone) {
                    // taken for reuse while listed (a test's "crashed" writers still run; a real crash has no threads)
                }
            }
        }
    }

    private long nextNumber() {
        return nextNumber.getAndIncrement();
    }

    private long freeName() {
        return nextFreeName.getAndIncrement();
    }

    /**
     * A segment ready for O_DSYNC writes: a free one with a new salt, or a new zero-filled one. The
     * header is durable before the file gets a lane's name, so no segment name ever carries groups
     * of an earlier use under a salt that validates them.
     */
    private OpenSegment prepare(int lane, long bytes) {
        Path path = dir.resolve(lane + "-" + nextNumber() + ".wal");
        long salt = SALTS.nextLong();
        ByteBuffer header = ByteBuffer.allocate(SEGMENT_HEADER_BYTES).putLong(0, MAGIC).putLong(8, salt);
        try {
            Path reused = bytes == segmentBytes ? free.poll() : null; // an oversized group gets a one-off segment
            if (reused != null) {
                try (FileChannel ch = FileChannel.open(reused, StandardOpenOption.WRITE)) {
                    ch.write(header, 0);
                    ch.force(false);
                }
                Files.move(reused, path, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } else {
                disk.require(bytes, "a new write-ahead segment"); // zero-filled below: refuse before, not half way
                try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                    for (long at = 0; at < bytes; ) {
                        ByteBuffer zeros = ZEROS.duplicate();
                        zeros.limit((int) Math.min(zeros.capacity(), bytes - at));
                        at += ch.write(zeros, at);
                    }
                    ch.write(header, 0);
                    ch.force(true);
                }
            }
            DurableFiles.fsyncDirectory(dir);
            return new OpenSegment(path, FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.DSYNC), bytes, saltBytes(salt));
        } catch (IOException e) {
            StrandException full = disk.outOfSpace(e, "preparing write-ahead segment " + path);
            if (full != null) {
                try {
                    Files.deleteIfExists(path); // a half zero-filled file has no header: nothing to replay
                } catch (IOException ignored) {
                    // listed and deleted as an unused free segment next start
                }
                throw full;
            }
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot prepare write-ahead segment " + path + ": " + e.getMessage(), Map.of(), e);
        }
    }

    /** {@code salt} as the 8 bytes each group's CRC starts with (made once, not per group). */
    private record OpenSegment(Path path, FileChannel channel, long size, byte[] salt) {
    }

    /**
     * One writer thread's records. {@link #write} runs only on that thread; the next segment is
     * prepared in the background while the current one fills.
     */
    public final class Lane {
        private final int number;
        private final CRC32C crc = new CRC32C();
        private OpenSegment current;
        private long position;
        /** Records written to {@code current}. */
        private int records;
        private CompletableFuture<OpenSegment> next;

        private Lane(int number) {
            this.number = number;
        }

        /**
         * Makes sure the next group never has to allocate a segment after its turns ran (a failure
         * there would leave their changes in the stores, unacknowledged): when there is no current
         * segment or it is more than ¾ full, the spare segment is made ready now, waiting for the
         * background one or preparing one here. Throws {@code storage_full} when the disk cannot hold
         * it; nothing is written then. Writer thread, before a group's turns run.
         */
        public void ensureRoom() {
            if (current != null && current.size() - position > segmentBytes / 4) {
                return;
            }
            if (next != null) {
                try {
                    next.join();
                    return;
                } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
                    next = null; // the background attempt failed (perhaps a full disk): try again now
                }
            }
            next = CompletableFuture.completedFuture(prepare(number, segmentBytes));
        }

        /** Writes one group's records and returns once they are on disk. */
        public void write(Batch batch) throws IOException {
            FailPoints.ioError("wal.write");
            ByteBuffer group = batch.buffer;
            int n = group.position();
            if (current == null || position + n > current.size() || (records > 0 && records + batch.records > checkpointRecords)) {
                moveOn(n);
            }
            group.putInt(0, n - GROUP_HEADER_BYTES);
            group.putInt(4, groupCrc(crc, current.salt(), group.slice(GROUP_HEADER_BYTES, n - GROUP_HEADER_BYTES)));
            group.flip();
            while (group.hasRemaining()) {
                position += current.channel().write(group, position);
            }
            records += batch.records;
        }

        private void moveOn(int groupBytes) throws IOException {
            OpenSegment full = current;
            try {
                if (SEGMENT_HEADER_BYTES + groupBytes > segmentBytes) {
                    current = prepare(number, SEGMENT_HEADER_BYTES + groupBytes);
                } else {
                    current = next == null ? prepare(number, segmentBytes) : next.join();
                    next = null;
                }
            } catch (RuntimeException e) {
                next = null;
                throw new IOException("next write-ahead segment: " + e.getMessage(), e);
            }
            position = SEGMENT_HEADER_BYTES;
            records = 0;
            if (next == null) {
                next = CompletableFuture.supplyAsync(() -> prepare(number, segmentBytes), background);
            }
            if (full != null) {
                full.channel().close();
                background.execute(() -> checkpoint(List.of(full.path())));
            }
        }

        private List<Path> closeAndList() {
            List<Path> paths = new ArrayList<>();
            try {
                if (current != null) {
                    paths.add(current.path());
                    current.channel().close();
                }
                if (next != null) {
                    OpenSegment spare = next.join();
                    spare.channel().close();
                    paths.add(spare.path());
                }
            } catch (IOException | RuntimeException e) {
                // listed segments are recycled or replayed either way
            }
            return paths;
        }
    }

    /**
     * One group's records, built on the writer thread after a reserved group header. A turn that
     * fails is rolled back to its {@link #mark()}, so only the records of turns that ran are written.
     */
    public static final class Batch {
        private ByteBuffer buffer = ByteBuffer.allocateDirect(64 * 1024).position(GROUP_HEADER_BYTES);
        private int records;
        private int recordsAtMark;

        public void add(byte type, byte[] payload) {
            ensure(RECORD_HEADER_BYTES + payload.length);
            buffer.putInt(1 + payload.length).put(type).put(payload);
            records++;
        }

        int mark() {
            recordsAtMark = records;
            return buffer.position();
        }

        void reset(int mark) {
            buffer.position(mark);
            records = recordsAtMark;
        }

        boolean isEmpty() {
            return buffer.position() == GROUP_HEADER_BYTES;
        }

        void clear() {
            buffer.clear().position(GROUP_HEADER_BYTES);
            records = 0;
        }

        private void ensure(int more) {
            if (buffer.remaining() < more) {
                ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(buffer.capacity() * 2, buffer.position() + more));
                buffer.flip();
                bigger.put(buffer);
                buffer = bigger;
            }
        }
    }
}

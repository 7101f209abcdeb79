package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * One write-ahead segment file, written only by its lane's writer thread (the static members are
 * stateless): the file format, the group write that is a group's commit point, and the reader
 * recovery uses.
 *
 * <p>Layout (big-endian; file name {@code <lane>-<number>.wal}, or {@code free-<n>.wal} while it
 * waits for reuse in the {@link WalSegmentPool}):
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
 * Record types and payloads: {@link WalRecordType}.
 *
 * <p><b>Commit point: a group is committed when its one {@code O_DSYNC} write (header and records
 * together) returns; only then are its turns acknowledged.</b> A group whose CRC checks out is whole.
 *
 * <p>What a crash at each step leaves:
 * <ol>
 * <li>New file zero-filled under its lane name, header written last ({@link #stamp}), fsynced, then
 *     the directory: before the header, a file without MAGIC, read as empty and let go at the next
 *     start.
 * <li>Free file re-stamped with a new salt, fsynced, renamed to its lane name, directory fsynced:
 *     before the rename it is still free; after, its earlier groups fail their CRC under the new salt,
 *     so it reads as empty.
 * <li>A group's write ({@link #append}): torn by a power loss before it returned, it was never
 *     acknowledged and fails its CRC with nothing valid after it: the end of the segment.
 * <li>Checkpoint ({@link WalCheckpointer}): before {@code syncfs} returns the segment is replayed
 *     next start (idempotently); after, it is recycled or deleted, and its records are in the stores.
 * </ol>
 *
 * <p>Reading a segment stops at the first group whose length or CRC does not check out. Where no
 * group with this salt follows it, that is the segment's end: the zeros of a new file, a group torn
 * by power loss (its write never returned, so it was never acknowledged), or a group left from the
 * file's previous use (another salt). Where an intact group with this salt follows (found by
 * scanning every later offset, since the damaged length cannot be trusted), the damaged group was
 * written before that one returned — whole, and perhaps acknowledged — so it is corruption, not a
 * torn tail: {@link #read} throws {@code corrupt}, naming the segment file and the group's offset,
 * and recovery refuses to start before replaying anything and keeps the segment. It does not go on
 * without the damaged group: after a power loss the home files need not hold its records, and
 * nothing here can tell which those were. A flip inside the last group of a segment looks exactly
 * like a torn write and is dropped; after a process crash the home files hold its records anyway.
 */
final class WalSegment {
    static final int SEGMENT_HEADER_BYTES = 16;
    static final int GROUP_HEADER_BYTES = 8;
    static final int RECORD_HEADER_BYTES = 5;
    private static final long MAGIC = 0x5354524e4457414cL; // "STRNDWAL"

    /** Receives each intact record of a segment, in order. */
    @FunctionalInterface
    interface RecordVisitor {
        void visit(byte type, ByteBuffer payload);
    }

    private final Path path;
    private final FileChannel channel;
    private final long size;
    /** The salt as the 8 bytes each group's CRC starts with (made once, not per group). */
    private final byte[] salt;
    private final CRC32C crc = new CRC32C();
    private long position = SEGMENT_HEADER_BYTES;
    /** Records written to this segment. */
    private int records;

    private WalSegment(Path path, FileChannel channel, long size, long salt) {
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.salt = saltBytes(salt);
    }

    /** Writes the header of a (re)used segment file: MAGIC and {@code salt}. The caller forces it. */
    static void stamp(FileChannel ch, long salt) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(SEGMENT_HEADER_BYTES).putLong(0, MAGIC).putLong(8, salt);
        while (header.hasRemaining()) {
            ch.write(header, header.position());
        }
    }

    /** Opens a stamped, durable segment file of {@code size} bytes for {@code O_DSYNC} group writes. */
    static WalSegment open(Path path, long size, long salt) throws IOException {
        return new WalSegment(path, FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.DSYNC), size, salt);
    }

    Path path() {
        return path;
    }

    /** Bytes after the last group. */
    long remaining() {
        return size - position;
    }

    int records() {
        return records;
    }

    /**
     * Fills in {@code group}'s header (length, CRC under this segment's salt) and writes it after
     * the last group in one {@code O_DSYNC} write: when this returns, the group is committed.
     * The caller checked it fits.
     */
    void append(GroupRecords group) throws IOException {
        ByteBuffer buffer = group.buffer();
        int n = buffer.position();
        buffer.putInt(0, n - GROUP_HEADER_BYTES);
        buffer.putInt(4, groupCrc(crc, salt, buffer.slice(GROUP_HEADER_BYTES, n - GROUP_HEADER_BYTES)));
        buffer.flip();
        while (buffer.hasRemaining()) {
            position += channel.write(buffer, position);
        }
        records += group.records();
    }

    void close() throws IOException {
        channel.close();
    }

    /**
     * Visits every intact record of a segment in order; returns how many.
     * @throws StrandException {@code corrupt} when a damaged group is followed by an intact one
     */
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
}

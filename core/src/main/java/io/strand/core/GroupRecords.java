package io.strand.core;

import java.nio.ByteBuffer;

/**
 * One group commit's records, built on its writer thread and used only there: the turns of a group
 * {@link #add} them, a turn that fails is rolled back to its {@link #mark()}, and the group's
 * {@link CommitLog.Lane} writes what is left. The records are framed as a write-ahead group
 * ({@link WalSegment}) after the group header's reserved bytes, so the single-node log writes the
 * buffer as it is, with no copy.
 */
public final class GroupRecords {
    private ByteBuffer buffer = ByteBuffer.allocateDirect(64 * 1024).position(WalSegment.GROUP_HEADER_BYTES);
    private int records;
    private int recordsAtMark;

    /** Appends one record of {@code type} ({@link WalRecordType}). */
    public void add(byte type, byte[] payload) {
        ensure(WalSegment.RECORD_HEADER_BYTES + payload.length);
        buffer.putInt(1 + payload.length).put(type).put(payload);
        records++;
    }

    /** Records added since the last {@link #clear}. */
    int records() {
        return records;
    }

    /**
     * The group as written: {@link WalSegment#GROUP_HEADER_BYTES} reserved for its header, then the
     * records, up to the position. Its header is the writer's to fill.
     */
    ByteBuffer buffer() {
        return buffer;
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
        return buffer.position() == WalSegment.GROUP_HEADER_BYTES;
    }

    void clear() {
        buffer.clear().position(WalSegment.GROUP_HEADER_BYTES);
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

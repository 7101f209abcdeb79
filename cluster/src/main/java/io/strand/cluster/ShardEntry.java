package io.strand.cluster;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * The bytes of one shard Raft entry: a group of opaque commands batched by {@link ShardProposer}, the
 * leader's clock stamped in front, and the per-command replies sent back. Stateless.
 *
 * <p>Proposal, the client message {@link ShardProposer} sends (big-endian):
 * <pre>
 *   offset  size  field
 *   0       4     count      u32, 1..{@link #MAX_COMMANDS}
 *   4       4     len[0]     u32, length of command 0
 *   8       len   command[0] opaque bytes ({@link ShardEngine#apply})
 *   …             (len, command) repeated count times
 * </pre>
 * Log entry, what the leader's {@code startTransaction} appends to the Raft log (the proposal with the
 * leader's wall clock in front; replicas never read their own clock while applying):
 * <pre>
 *   0       8     stampedAt  i64, epoch ms on the leader when it accepted the proposal
 *   8       …     the proposal above
 * </pre>
 * Reply, the message each replica's apply produces (the leader's goes back to the proposer):
 * <pre>
 *   0       4     count      u32, equal to the entry's count
 *   4       4     len[0]     u32
 *   8       len   reply[0]   opaque bytes from the engine
 *   …             repeated count times
 * </pre>
 * Commit point: the entry is committed when Ratis has it in the fsynced Raft logs of a majority of the
 * shard's replicas; before that a crash may lose it (the proposer's caller got no ack), after it every
 * replica applies it exactly once in log order. A malformed entry is rejected in {@code startTransaction}
 * before it reaches the log.
 */
public final class ShardEntry {
    /** Commands per entry at most ({@link ShardProposer} batches up to it). */
    public static final int MAX_COMMANDS = 1_000;
    /** Bytes of commands the proposer gathers into one entry, before the framing; a larger command rides alone. */
    public static final int MAX_BYTES = 1 << 20;
    /**
     * Bytes of one command at most: an append at SPEC §2's limits (4 MiB of entry data, 1,000 entries)
     * with its names, keys and lengths, or a txn of a body at the 4 MiB body limit. It was
     * {@link #MAX_BYTES}, so a cluster refused a batch over 1 MiB that a single node takes.
     */
    public static final int MAX_COMMAND_BYTES = 5 << 20;
    static final int STAMP_BYTES = 8;

    private ShardEntry() {
    }

    /** A decoded log entry. */
    public record Decoded(long stampedAtMillis, List<byte[]> commands) {
    }

    /**
     * Frames commands as a proposal. The framed array is wrapped, not copied again: nothing else holds
     * it, and a proposal of 100 batched entries is about 27 KiB, copied once more on every hop anyway.
     */
    public static ByteString proposal(List<byte[]> commands) {
        return UnsafeByteOperations.unsafeWrap(frame(commands));
    }

    /** Frames opaque parts as {@code [count][len][bytes]…}: proposals and replies share this shape. */
    static byte[] frame(List<byte[]> parts) {
        int size = 4;
        for (byte[] p : parts) {
            size += 4 + p.length;
        }
        ByteBuffer buf = ByteBuffer.allocate(size).order(ByteOrder.BIG_ENDIAN);
        buf.putInt(parts.size());
        for (byte[] p : parts) {
            buf.putInt(p.length).put(p);
        }
        return buf.array();
    }

    /**
     * The leader's log entry for a proposal: checks its framing (a malformed proposal never reaches the
     * log) and puts {@code stampedAtMillis} in front without copying the commands.
     */
    public static ByteString stamp(long stampedAtMillis, ByteString proposal) {
        walk(proposal.asReadOnlyByteBuffer(), "proposal", null);
        ByteBuffer stamp = ByteBuffer.allocate(STAMP_BYTES).order(ByteOrder.BIG_ENDIAN).putLong(0, stampedAtMillis);
        return ByteString.copyFrom(stamp.array()).concat(proposal);
    }

    /** Decodes a log entry written by {@link #stamp}. */
    public static Decoded decode(ByteString entry) {
        ByteBuffer buf = entry.asReadOnlyByteBuffer().order(ByteOrder.BIG_ENDIAN);
        if (buf.remaining() < STAMP_BYTES) {
            throw new IllegalArgumentException("shard entry of " + buf.remaining() + " bytes has no stamp");
        }
        long at = buf.getLong();
        return new Decoded(at, unframe(buf.slice(), "entry"));
    }

    /** Frames the per-command replies of one entry. */
    public static ByteString replies(List<byte[]> replies) {
        return UnsafeByteOperations.unsafeWrap(frame(replies));
    }

    /** Decodes a reply written by {@link #replies}. */
    public static List<byte[]> decodeReplies(ByteString reply) {
        return unframe(reply.asReadOnlyByteBuffer(), "reply");
    }

    private static List<byte[]> unframe(ByteBuffer in, String what) {
        List<byte[]> out = new ArrayList<>();
        walk(in, what, out);
        return out;
    }

    /**
     * Checks the framing of {@code in} ({@code [count][len][bytes]…}, nothing after the last part) and,
     * when {@code parts} is not null, copies each part into it. The leader's check in {@link #stamp}
     * passes null: it only needs to know the proposal is well formed, not a copy of every command.
     */
    private static void walk(ByteBuffer in, String what, List<byte[]> parts) {
        ByteBuffer buf = in.order(ByteOrder.BIG_ENDIAN);
        if (buf.remaining() < 4) {
            throw new IllegalArgumentException("shard " + what + " of " + buf.remaining() + " bytes has no count");
        }
        long count = Integer.toUnsignedLong(buf.getInt());
        if (count > MAX_COMMANDS) {
            throw new IllegalArgumentException("shard " + what + " has " + count + " parts, more than " + MAX_COMMANDS);
        }
        for (int i = 0; i < count; i++) {
            if (buf.remaining() < 4) {
                throw new IllegalArgumentException("shard " + what + " is cut in the length of part " + i);
            }
            long len = Integer.toUnsignedLong(buf.getInt());
            if (len > buf.remaining()) {
                throw new IllegalArgumentException("shard " + what + " part " + i + " says " + len + " bytes, "
                        + buf.remaining() + " remain");
            }
            if (parts != null) {
                byte[] part = new byte[(int) len];
                buf.get(part);
                parts.add(part);
            } else {
                buf.position(buf.position() + (int) len);
            }
        }
        if (buf.hasRemaining()) {
            throw new IllegalArgumentException("shard " + what + " has " + buf.remaining() + " bytes after its "
                    + count + " parts");
        }
    }
}

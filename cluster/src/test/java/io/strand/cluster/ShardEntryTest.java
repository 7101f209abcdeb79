package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

class ShardEntryTest {
    @Test
    void decodeShouldReturnTheStampAndEveryCommandWhenTheLeaderStampedAProposal() {
        List<byte[]> commands = List.of(new byte[0], "a".getBytes(), new byte[300]);
        ByteString entry = ShardEntry.stamp(1_764_450_000_123L, ShardEntry.proposal(commands));
        ShardEntry.Decoded d = ShardEntry.decode(entry);
        assertEquals(1_764_450_000_123L, d.stampedAtMillis());
        assertEquals(3, d.commands().size());
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(commands.get(i), d.commands().get(i));
        }
        assertEquals(8 + 4 + 3 * 4 + 301, entry.size(), "layout of the byte table");
    }

    @Test
    void decodeRepliesShouldRoundTripWhenRepliesAreFramed() {
        List<byte[]> replies = List.of("x".getBytes(), new byte[] {1, 2, 3});
        List<byte[]> back = ShardEntry.decodeReplies(ShardEntry.replies(replies));
        assertArrayEquals(replies.get(1), back.get(1));
    }

    @Test
    void stampShouldRejectAProposalWhenItsFramingIsBroken() {
        byte[] ok = ShardEntry.proposal(List.of("abc".getBytes())).toByteArray();
        byte[] cut = java.util.Arrays.copyOf(ok, ok.length - 1);
        byte[] extra = java.util.Arrays.copyOf(ok, ok.length + 1);
        byte[] lying = ok.clone();
        lying[7] = 100; // length of command 0 larger than what follows
        for (byte[] bad : List.of(cut, extra, lying, new byte[2])) {
            assertThrows(IllegalArgumentException.class, () -> ShardEntry.stamp(1, ByteString.copyFrom(bad)));
        }
        List<byte[]> tooMany = new ArrayList<>();
        for (int i = 0; i <= ShardEntry.MAX_COMMANDS; i++) {
            tooMany.add(new byte[0]);
        }
        assertThrows(IllegalArgumentException.class, () -> ShardEntry.stamp(1, ShardEntry.proposal(tooMany)));
    }
}

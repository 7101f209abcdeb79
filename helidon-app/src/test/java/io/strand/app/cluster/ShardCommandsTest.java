package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ShardCommandsTest {
    @Test
    void coldCoveredShouldDecodeToTheLogAndSeqItWasWrittenWith() {
        ShardCommands.Command c = ShardCommands.read(ShardCommands.coldCovered("acme", "événements", 123_456_789_012L));
        assertEquals(ShardCommands.COLD_COVERED, c.type());
        assertEquals("acme", c.ws());
        assertEquals("événements", c.name());
        assertEquals(123_456_789_012L, c.seq());
        assertEquals(7, ShardCommands.readCount(ShardCommands.countReply(7)));
    }

    @Test
    void deleteLogShouldStillDecodeWithNoSeq() {
        ShardCommands.Command c = ShardCommands.read(ShardCommands.deleteLog("acme", "chat"));
        assertEquals(ShardCommands.DELETE_LOG, c.type());
        assertEquals("chat", c.name());
        assertEquals(0, c.seq());
    }
}

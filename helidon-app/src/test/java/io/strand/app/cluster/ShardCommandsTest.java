package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
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

    @Test
    void trimsAndPoliciesShouldDecodeToWhatTheyWereWrittenWith() {
        ShardCommands.Command trim = ShardCommands.read(ShardCommands.trim("acme", "chat", 41, false));
        assertEquals(ShardCommands.TRIM, trim.type());
        assertEquals("chat", trim.name());
        assertEquals(41, trim.seq());
        assertEquals(ShardCommands.TRIM_TO_POLICY, ShardCommands.read(ShardCommands.trim("acme", "chat", 41, true)).type());
        assertEquals(new Retention.Trimmed(41, 90), ShardCommands.readTrimmed(ShardCommands.trimReply(new Retention.Trimmed(41, 90))));
        RetentionPolicy policy = new RetentionPolicy(3_600L, null, 1L << 40);
        ShardCommands.Command set = ShardCommands.read(ShardCommands.retention("acme", "chat", policy));
        assertEquals(ShardCommands.RETENTION, set.type());
        assertEquals(policy, ShardCommands.policy(set));
        ShardCommands.readEmpty(ShardCommands.emptyReply(null));
    }
}

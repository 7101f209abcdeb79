package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class WalRecordTypeTest {
    @Test
    void keyedPayloadsShouldRoundTrip() {
        ByteBuffer payload = ByteBuffer.wrap(WalRecordType.keyed("ws/näme", new byte[] {1, 2, 3}));
        assertEquals("ws/näme", WalRecordType.key(payload));
        assertArrayEquals(new byte[] {1, 2, 3}, WalRecordType.rest(payload));
    }

    @Test
    void typeBytesShouldStayWhatSegmentsOnDiskHold() {
        assertEquals(1, WalRecordType.LOG_APPEND);
        assertEquals(2, WalRecordType.LOG_DELETE);
        assertEquals(3, WalRecordType.DOC_CHANGE);
        assertEquals("DOC_CHANGE", WalRecordType.name((byte) 3));
        assertEquals("unknown type 9", WalRecordType.name((byte) 9));
    }
}

package io.strand.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What an error answer carries: a client's refusal no stack, a server fault its stack and cause. */
class StrandExceptionTest {
    @Test
    void aRefusalAnsweredToTheClientShouldCarryNoStackTrace() {
        for (ErrorCode code : ErrorCode.values()) {
            StrandException e = new StrandException(code, "x", Map.of("value", 3));
            if (code.httpStatus() < 500) {
                assertEquals(0, e.getStackTrace().length, code + " is an answer, not a fault");
                assertEquals(0, e.with("index", 1).getStackTrace().length, code + " with a field");
            } else {
                assertTrue(e.getStackTrace().length > 0, code + " is a fault: its stack says where");
            }
            assertEquals(code, e.code());
            assertEquals(3, e.extras().get("value"));
        }
    }

    @Test
    void aFaultShouldKeepItsCauseAndStack() {
        IOException io = new IOException("disk");
        StrandException e = new StrandException(ErrorCode.STORAGE_FULL, "full", Map.of(), io);
        assertSame(io, e.getCause());
        assertTrue(e.getStackTrace().length > 0);
        StrandException located = e.with("ws", "acme");
        assertSame(io, located.getCause());
        assertEquals(java.util.List.of(e.getStackTrace()), java.util.List.of(located.getStackTrace()),
                "a field added later keeps the stack of where the fault was raised");
    }
}

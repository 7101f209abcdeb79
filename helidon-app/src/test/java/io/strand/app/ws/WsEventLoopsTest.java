package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which loop reads a new connection: its workspace's writer's, when loops run the writes they read. */
class WsEventLoopsTest {
    private static final Map<String, Integer> WRITER = Map.of("a", 0, "b", 1, "c", 3, "d", 2);

    @Test
    void everySocketOfWorkspacesSharingAWriterShouldGoToOneLoopWhenLoopsRunWrites() {
        try (WsEventLoops loops = new WsEventLoops(2, true, WRITER::get)) {
            WsEventLoop a = loops.next("a");
            assertSame(a, loops.next("a"));
            assertSame(a, loops.next("a"));
            assertSame(a, loops.next("d"), "writer 2 → loop 0");
            WsEventLoop b = loops.next("b");
            assertNotSame(a, b);
            assertSame(b, loops.next("c"), "writer 3 → loop 1");
            assertSame(b, loops.next("b"));
        }
    }

    @Test
    void withoutLoopWritesNewConnectionsShouldTakeTheLoopsInTurn() {
        try (WsEventLoops loops = new WsEventLoops(2, false, WRITER::get)) {
            assertNotSame(loops.next("a"), loops.next("a"));
        }
    }

    @Test
    void aStoppedLoopShouldLeaveItsWorkspacesNewConnectionsToARunningOne() {
        try (WsEventLoops loops = new WsEventLoops(2, true, WRITER::get)) {
            WsEventLoop a = loops.next("a");
            a.stop();
            WsEventLoop other = loops.next("a");
            assertNotNull(other);
            assertNotSame(a, other);
        }
    }
}

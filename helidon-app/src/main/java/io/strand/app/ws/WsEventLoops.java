package io.strand.app.ws;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread-safe (immutable but for a counter): the event loops that read plain WebSocket connections
 * ({@code --ws-event-loops}, default one per core). A new connection goes to the next loop in turn.
 */
public final class WsEventLoops implements AutoCloseable {
    /** No loops: connections are read by a thread each ({@link ReaderThreads}). */
    public static final WsEventLoops NONE = new WsEventLoops(0, false);
    private final WsEventLoop[] loops;
    private final AtomicInteger turn = new AtomicInteger();

    /** @param runWrites whether each loop runs the group commit of the writes it read ({@code --ws-loop-writes}) */
    public WsEventLoops(int count, boolean runWrites) {
        if (count < 0) {
            throw new IllegalArgumentException("--ws-event-loops must be ≥ 0, not " + count);
        }
        loops = new WsEventLoop[count];
        for (int i = 0; i < count; i++) {
            loops[i] = new WsEventLoop("strand-ws-loop-" + (i + 1), runWrites);
        }
    }

    /** The loop for a new connection, or null when there are none running. */
    WsEventLoop next() {
        for (int tries = 0; tries < loops.length; tries++) {
            WsEventLoop loop = loops[Math.floorMod(turn.getAndIncrement(), loops.length)];
            if (loop.running()) {
                return loop;
            }
        }
        return null; // none running (stopped, or failed): a thread reads the socket
    }

    /** Stops the loops; a connection still on one ends as if its peer had vanished. */
    @Override
    public void close() {
        for (WsEventLoop l : loops) {
            l.stop();
        }
    }

    /** Connections the loops read now. */
    public int connections() {
        int n = 0;
        for (WsEventLoop l : loops) {
            n += l.connections();
        }
        return n;
    }
}

package io.strand.app.ws;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;

/**
 * Thread-safe (immutable but for a counter): the event loops that read plain WebSocket connections
 * ({@code --ws-event-loops}, default one per core).
 *
 * <p>Where loops run the writes they read, a new connection goes to the loop of its workspace's
 * writer (writer index modulo loops): every socket whose requests share a writer's turn is read by
 * one loop, which then runs all of that writer's groups itself, as Redis's one loop does, instead of
 * two loops competing for the turn and the loser's turns waiting for the writer thread. Otherwise,
 * or when that loop is not running, a new connection goes to the next loop in turn.
 */
public final class WsEventLoops implements AutoCloseable {
    /** No loops: connections are read by a thread each ({@link ReaderThreads}). */
    public static final WsEventLoops NONE = new WsEventLoops(0, false, null);
    private final WsEventLoop[] loops;
    private final AtomicInteger turn = new AtomicInteger();
    /** Workspace → index of its writer, when loops run the writes they read; else null (round robin). */
    private final ToIntFunction<String> writerOf;

    /**
     * @param runWrites whether each loop runs the group commit of the writes it read ({@code --ws-loop-writes})
     * @param writerOf  the index of a workspace's writer ({@link io.strand.core.Writers#writerOf}); used when {@code runWrites}
     */
    public WsEventLoops(int count, boolean runWrites, ToIntFunction<String> writerOf) {
        if (count < 0) {
            throw new IllegalArgumentException("--ws-event-loops must be ≥ 0, not " + count);
        }
        loops = new WsEventLoop[count];
        for (int i = 0; i < count; i++) {
            loops[i] = new WsEventLoop("strand-ws-loop-" + (i + 1), runWrites);
        }
        this.writerOf = runWrites ? writerOf : null;
    }

    /** The loop for a new connection to {@code workspace} (null: unknown), or null when there are none running. */
    WsEventLoop next(String workspace) {
        if (writerOf != null && workspace != null && loops.length > 0) {
            WsEventLoop loop = loops[Math.floorMod(writerOf.applyAsInt(workspace), loops.length)];
            if (loop.running()) {
                return loop;
            }
        }
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

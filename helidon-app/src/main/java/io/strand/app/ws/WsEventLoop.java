package io.strand.app.ws;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import io.strand.core.Writers;

/**
 * Owned by its selector thread ({@code strand-ws-loop-N}): reads every WebSocket connection
 * registered with it and runs their frames, one {@code epoll_wait} for all of them, as Redis and
 * Netty do. Other threads queue tasks ({@link #execute}) and ask for {@code OP_WRITE}
 * ({@link #wantWrite}), both of which wake the selector, and write to a socket directly while its
 * output has nothing queued ({@link ChannelOutput}).
 *
 * <p><b>Why.</b> A thread per socket (virtual or platform) wakes once per request per socket: with
 * 16 clients each waiting for its own doc {@code incr}, 16 wake-ups per round, each a context
 * switch, where a loop wakes once for all the sockets that became readable meanwhile.
 * {@link StrictWsConnection} uses a loop for plain (not TLS) sockets of a single node when loops are
 * configured ({@code --ws-event-loops}); the figures are in {@code docs/measurements.md} ("Event loops for sockets").
 *
 * <p>Writes its frames submit (appends, doc ops, txns) are {@linkplain Writers.LoopHost deferred}:
 * before it sleeps again the loop runs their group itself (and up to three more if turns are still
 * queued), write-ahead write included, unless that writer's turn is held already ({@code --ws-loop-writes}, default true; false hands
 * every write to the writer thread). Every socket of a workspace is then read by the loop of its
 * workspace's writer ({@link WsEventLoops}), so another loop seldom holds that turn.
 */
final class WsEventLoop {
    private static final System.Logger LOG = System.getLogger("strand.ws");

    /** What a registered connection does when its socket is ready. Called on the loop thread only. */
    interface Handler {
        void readable();

        void writable();

        /** The loop is stopping, or this connection's handler threw: the connection ends without reading more. */
        void abandoned();
    }

    private final Selector selector;
    private final Writers.LoopHost host = new Writers.LoopHost();
    /** Whether this loop runs the group commit of the writes it read ({@code --ws-loop-writes}). */
    private final boolean runWrites;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private final AtomicInteger registered = new AtomicInteger();
    private volatile boolean running = true;

    WsEventLoop(String name, boolean runWrites) {
        this.runWrites = runWrites;
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.thread = Thread.ofPlatform().name(name).daemon().unstarted(this::run);
        thread.start();
    }

    /** Runs {@code task} on the loop thread, soon (at once when called on it). */
    void execute(Runnable task) {
        if (inLoop() || !running) { // a stopped loop runs nothing more: the caller does it
            task.run();
            return;
        }
        tasks.add(task);
        selector.wakeup();
    }

    /**
     * Runs {@code write} (the handling of one request of about {@code requestBytes} that submits writes) so that its turns wait for this
     * loop to run them before it sleeps, when called on a loop thread; elsewhere, or when switched off,
     * just runs it. {@code write} must not wait for its own turns.
     */
    static void deferringWrites(int requestBytes, Runnable write) {
        Writers.LoopHost h = Writers.LoopHost.current();
        if (h == null) {
            write.run();
        } else {
            h.deferring(requestBytes, write);
        }
    }

    /** False once the loop has stopped: new connections go elsewhere. */
    boolean running() {
        return running;
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /**
     * Registers {@code channel} (already non-blocking) for reads; the key is handed to {@code then} on the
     * loop thread, and {@code handler} is called from there on. {@code then} gets null when the channel
     * could not be registered (closed meanwhile, or the loop stopped).
     */
    void register(SocketChannel channel, Handler handler, Consumer<SelectionKey> then) {
        execute(() -> {
            SelectionKey key;
            try {
                key = running ? channel.register(selector, SelectionKey.OP_READ, handler) : null;
            } catch (ClosedChannelException | RuntimeException e) {
                key = null;
            }
            if (key != null) {
                registered.incrementAndGet();
            }
            then.accept(key);
        });
    }

    /** Asks for {@code OP_WRITE} on {@code key} (null: not registered yet, nothing to ask); any thread. */
    void wantWrite(SelectionKey key) {
        if (key == null) {
            return;
        }
        try {
            key.interestOpsOr(SelectionKey.OP_WRITE);
        } catch (RuntimeException cancelled) {
            return; // the connection ended
        }
        if (!inLoop()) {
            selector.wakeup();
        }
    }

    /** Loop thread: sets whether {@code key} is read (a connection whose output backed up is not). */
    static void reading(SelectionKey key, boolean on) {
        try {
            if (on) {
                key.interestOpsOr(SelectionKey.OP_READ);
            } else {
                key.interestOpsAnd(~SelectionKey.OP_READ);
            }
        } catch (CancelledKeyException closedMeanwhile) {
            // the channel was closed (the close timeout, or Helidon): the connection is ending
        }
    }

    /** Loop thread: the connection behind {@code key} ended; the key is dropped. */
    void deregister(SelectionKey key) {
        if (key.isValid()) {
            key.cancel();
        }
        registered.decrementAndGet();
    }

    /** Ends the loop (its thread finishes what it is doing, abandons its connections and closes the selector). */
    void stop() {
        running = false;
        selector.wakeup();
    }

    /** Connections registered now. */
    int connections() {
        return registered.get();
    }

    private void run() {
        if (runWrites) {
            host.attach();
        }
        try {
            while (running) {
                if (host.hasDeferred()) {
                    runSafely(host::runDeferred);
                }
                selector.select();
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    runSafely(task);
                }
                Iterator<SelectionKey> ready = selector.selectedKeys().iterator();
                while (ready.hasNext()) {
                    SelectionKey key = ready.next();
                    ready.remove();
                    Handler h = (Handler) key.attachment();
                    try {
                        if (key.isValid() && key.isWritable()) {
                            h.writable();
                        }
                        if (key.isValid() && key.isReadable()) {
                            h.readable();
                        }
                    } catch (RuntimeException | Error e) { // one connection's failure (an OutOfMemoryError too) ends that connection only
                        LOG.log(System.Logger.Level.WARNING, "WebSocket connection failed on " + thread.getName(), e);
                        runSafely(h::abandoned);
                    }
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "WebSocket event loop " + thread.getName() + " failed; its connections end", e);
        } finally {
            running = false;
            runSafely(host::runDeferred); // writes read before the failure are not left queued
            for (SelectionKey key : selector.keys()) {
                runSafely(((Handler) key.attachment())::abandoned);
            }
            Runnable task;
            while ((task = tasks.poll()) != null) {
                runSafely(task); // registrations queued meanwhile are refused (running is false)
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing is registered any more
            }
        }
    }

    private void runSafely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "WebSocket event loop task failed", e);
        }
    }
}

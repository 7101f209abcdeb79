package io.strand.app.ws;

import io.helidon.common.socket.SocketContext;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.channels.SocketChannel;
import java.util.Optional;

/**
 * Immutable; any thread. Tells, without blocking, whether one connection's socket has room in its
 * kernel send buffer, so that a writer thread may send a small reply itself
 * ({@link SocketWriter#sendLater}) with no risk of waiting on a client that stopped reading.
 *
 * <p>How: {@code poll(2)} with a zero timeout for {@code POLLOUT} on the socket's descriptor. For
 * TCP, {@code POLLOUT} means the free space is at least half of what is queued, so at least a third
 * of the send buffer, and a write of a few hundred bytes is taken whole without waiting. Helidon does not expose the descriptor: it is read
 * once, at connection start, from the connection context's {@link SocketChannel} (a private field)
 * through the JDK's {@code sun.nio.ch.SelChImpl#getFDVal}, which the server's JVM flags export.
 * When any of that is missing (another Helidon, other flags) this answers "no room" always and
 * every reply goes through the socket's reply thread, as before.
 *
 * <p>A descriptor number outlives its socket: after a close it may name another socket. A poll of
 * it changes nothing, and the write itself goes through the connection's own closed channel and
 * fails there, so a stale answer costs nothing.
 */
final class SendRoom {
    static final SendRoom NONE = new SendRoom(-1);
    private static final System.Logger LOG = System.getLogger("strand.ws");
    private static final short POLLOUT = 0x004;
    private static final short POLLERR_OR_HUP = 0x008 | 0x010;
    /** {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout)}; null when it could not be bound. */
    private static final MethodHandle POLL = bindPoll();
    /** {@code sun.nio.ch.SelChImpl#getFDVal}; null when the package is not exported to this code. */
    private static final Method GET_FD_VAL = fdValAccessor();
    /** Per connection-context class: its field holding the connection's {@link SocketChannel}, made accessible. */
    private static final ClassValue<Optional<Field>> CHANNEL_FIELD = new ClassValue<>() {
        @Override
        protected Optional<Field> computeValue(Class<?> type) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (SocketChannel.class.isAssignableFrom(f.getType())) {
                        try {
                            f.setAccessible(true);
                            return Optional.of(f);
                        } catch (RuntimeException e) {
                            return Optional.empty();
                        }
                    }
                }
            }
            return Optional.empty();
        }
    };
    private static volatile boolean loggedUnavailable;

    private final int fd;

    private SendRoom(int fd) {
        this.fd = fd;
    }

    /** The probe for the socket under {@code ctx}, or {@link #NONE} when its descriptor cannot be found. */
    static SendRoom of(SocketContext ctx) {
        if (POLL == null || GET_FD_VAL == null) {
            return unavailable("poll(2) or the JDK's descriptor accessor is not available");
        }
        SocketChannel channel = channel(ctx);
        if (channel == null) {
            return unavailable(ctx.getClass().getName() + " holds no SocketChannel");
        }
        try {
            return new SendRoom((int) GET_FD_VAL.invoke(channel));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return unavailable(e.toString());
        }
    }

    /** The {@link SocketChannel} under {@code ctx} (a private field of Helidon's), or null when there is none to be had. */
    static SocketChannel channel(SocketContext ctx) {
        Field field = CHANNEL_FIELD.get(ctx.getClass()).orElse(null);
        try {
            return field == null ? null : (SocketChannel) field.get(ctx);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** True when a small write to the socket would not wait; false when it might, or when unknown. */
    boolean hasRoom() {
        if (fd < 0) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pollfd = arena.allocate(8, 4); // struct pollfd: int fd; short events; short revents
            pollfd.set(ValueLayout.JAVA_INT, 0, fd);
            pollfd.set(ValueLayout.JAVA_SHORT, 4, POLLOUT);
            int ready = (int) POLL.invokeExact(pollfd, 1L, 0);
            short revents = pollfd.get(ValueLayout.JAVA_SHORT, 6);
            return ready == 1 && (revents & POLLOUT) != 0 && (revents & POLLERR_OR_HUP) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    private static SendRoom unavailable(String why) {
        if (!loggedUnavailable) {
            loggedUnavailable = true;
            LOG.log(System.Logger.Level.DEBUG, "replies go through reply threads only: " + why);
        }
        return NONE;
    }

    private static Method fdValAccessor() {
        try {
            Method m = Class.forName("sun.nio.ch.SelChImpl").getMethod("getFDVal");
            m.setAccessible(true); // fails unless the package is exported to us, as the server's flags do
            return m;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static MethodHandle bindPoll() {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(linker.defaultLookup().find("poll").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        } catch (RuntimeException | Error e) {
            return null;
        }
    }
}

package io.strand.tools;

import java.time.Duration;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The warm-up before each measured run of {@code strand bench}: the scenario's own operation,
 * against a separate object (another log or doc name), for {@link #period}, so the measured run
 * starts on a server (and client) whose JIT has compiled that path. Immutable.
 */
final class Warmup {
    /** How long a warm-up ran and how many operations it did. */
    record Done(double seconds, long operations) {
        static final Done NONE = new Done(0, 0);
    }

    /** One round of a warm-up that cannot simply run for a time (it consumes or builds its object); returns its operations. */
    interface Round {
        long run(int round) throws Exception;
    }

    final Duration period;

    Warmup(Duration period) {
        this.period = period;
    }

    boolean off() {
        return period.isZero();
    }

    /** A closed loop of {@code workload} for the period, {@code inFlight} outstanding on {@code socket}. */
    Done loop(StrandSocket socket, int inFlight, ClosedLoop.Workload workload) {
        return loop(List.of(socket), inFlight, Long.MAX_VALUE, workload);
    }

    /**
     * How long a {@link #freshLoop} works on one object before it moves to a fresh one. Why: a
     * warm-up on one object compiles the path of an object that exists; the measured run's first
     * operations on its own, new object then took a branch the compiled code had never seen, and the
     * JIT recompiled in the measured window ({@code -Xlog:jit+compilation}, incr contended: uncommon traps
     * in the doc map's lookup and the doc index 0.1 s into the window, 17–31 % of the server's CPU
     * in the window spent by its compiler threads).
     */
    static final Duration OBJECT_PERIOD = Duration.ofSeconds(2);

    /**
     * A closed loop for the period, {@code inFlight} outstanding per socket, on object after object:
     * {@code workloadFor.apply(k)} for the k-th {@link #OBJECT_PERIOD}, each on a fresh object (a
     * new doc or log name), as the measured run starts on one.
     */
    Done freshLoop(List<StrandSocket> sockets, int inFlight, IntFunction<ClosedLoop.Workload> workloadFor) {
        long deadline = System.nanoTime() + period.toNanos();
        try {
            return rounds(k -> ClosedLoop.run(sockets, inFlight, Long.MAX_VALUE,
                    Duration.ofNanos(Math.max(1, Math.min(deadline - System.nanoTime(), OBJECT_PERIOD.toNanos()))),
                    workloadFor.apply(k)).operations());
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e); // a closed loop throws nothing checked
        }
    }

    /**
     * A closed loop for the period, stopping early after {@code maxOperations}: for operations
     * that each create an object (a new log), so the warm-up adds no more of them than the run.
     */
    Done loop(List<StrandSocket> sockets, int inFlight, long maxOperations, ClosedLoop.Workload workload) {
        if (off()) {
            return Done.NONE;
        }
        ClosedLoop.Result r = ClosedLoop.run(sockets, inFlight, maxOperations, period, workload);
        return new Done(r.seconds(), r.operations());
    }

    /** Rounds of {@code round} until the period is over (at least one; none when the warm-up is off). */
    Done rounds(Round round) throws Exception {
        if (off()) {
            return Done.NONE;
        }
        long start = System.nanoTime();
        long deadline = start + period.toNanos();
        long operations = 0;
        int i = 0;
        do {
            operations += round.run(i++);
        } while (System.nanoTime() < deadline);
        return new Done((System.nanoTime() - start) / 1e9, operations);
    }
}

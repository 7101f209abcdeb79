package io.strand.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One background job on its own named platform thread (Agrona's {@code Agent} shape): the thread
 * calls {@link Work#doWork} every {@code period}, catches every {@link Throwable} it throws, counts
 * it, keeps the last one for health, and carries on. {@link #wake} runs the next pass at once;
 * {@link #close} stops the thread and waits for the pass in progress.
 *
 * <p>Thread-safe: the work itself runs only on the agent's thread; the counters are atomics read by
 * any thread. Every agent registers in {@link #all()} while it runs so health can report them.
 */
public final class Agent implements AutoCloseable {
    /** One pass of a background job; throwing is counted and reported, never fatal. */
    @FunctionalInterface
    public interface Work {
        void doWork() throws Exception;
    }

    private static final List<Agent> RUNNING = new CopyOnWriteArrayList<>();

    private final String name;
    private final long periodNanos;
    private final Work work;
    private final Thread thread;
    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicReference<String> lastFailure = new AtomicReference<>();
    private volatile boolean running = true;
    private volatile boolean woken;

    private Agent(String name, Duration period, Work work, boolean runFirstPassNow) {
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("agent '" + name + "' needs a positive period, not " + period);
        }
        this.name = name;
        this.periodNanos = period.toNanos();
        this.work = work;
        this.woken = runFirstPassNow;
        this.thread = new Thread(this::loop, name);
        thread.setDaemon(true);
    }

    /** Starts {@code work} on a thread named {@code name}, first pass after one {@code period}. */
    public static Agent start(String name, Duration period, Work work) {
        return start(name, period, work, false);
    }

    /** As {@link #start(String, Duration, Work)}, the first pass at once when {@code runFirstPassNow}. */
    public static Agent start(String name, Duration period, Work work, boolean runFirstPassNow) {
        Agent agent = new Agent(name, period, work, runFirstPassNow);
        agent.thread.start();
        RUNNING.add(agent); // after the start: health reads an agent in all() that is not alive as one whose thread died
        return agent;
    }

    /** The agents running in this JVM, for health and metrics. */
    public static List<Agent> all() {
        return List.copyOf(RUNNING);
    }

    private void loop() {
        long next = System.nanoTime() + (woken ? 0 : periodNanos);
        while (running) {
            long wait = next - System.nanoTime();
            if (wait > 0 && !woken) {
                LockSupport.parkNanos(this, wait);
                continue; // woken, closed, spurious or due: the checks above decide
            }
            woken = false;
            try {
                work.doWork();
            } catch (Throwable t) {
                failures.incrementAndGet();
                String reason = t.getClass().getSimpleName() + ": " + t.getMessage();
                lastFailure.set(reason);
                System.getLogger("strand").log(System.Logger.Level.WARNING, "background job " + name + " failed (it keeps running): " + reason, t);
                if (t instanceof VirtualMachineError vme && !(t instanceof StackOverflowError)) {
                    throw vme; // out of memory and the like: let the JVM's handler see it
                }
            }
            passes.incrementAndGet();
            next = System.nanoTime() + periodNanos;
        }
    }

    /** Runs the next pass as soon as the current one (if any) ends. */
    public void wake() {
        woken = true;
        LockSupport.unpark(thread);
    }

    public String name() {
        return name;
    }

    /** Passes finished since start, failed ones included. */
    public long passes() {
        return passes.get();
    }

    /** Passes that threw since start. */
    public long failures() {
        return failures.get();
    }

    /** The last failure's class and message, if any pass failed. */
    public Optional<String> lastFailure() {
        return Optional.ofNullable(lastFailure.get());
    }

    /** True while the thread runs. */
    public boolean alive() {
        return thread.isAlive();
    }

    /** True when called from this agent's own thread (owners assert their state is touched only here). */
    public boolean onAgentThread() {
        return Thread.currentThread() == thread;
    }

    /** Stops after the pass in progress and waits for it (at most 30 s). */
    @Override
    public void close() {
        running = false;
        RUNNING.remove(this);
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

package io.strand.app.ds;

import io.strand.core.Agent;
import java.time.Duration;

/**
 * Owns the {@code ds-expiry} agent, whose thread alone runs {@link #sweep}: deletes streams past
 * their TTL or Expires-At that nobody touched since (requests expire the ones they touch
 * themselves), so expired streams go within about {@link #SWEEP_MILLIS} without a request.
 */
final class DsExpiry implements AutoCloseable {
    /** Expired streams are deleted within about this long even when no request touches them. */
    static final long SWEEP_MILLIS = 1000;

    private final DsRegistry registry;
    private final DsStreams streams;
    private final Agent sweeper;

    DsExpiry(DsRegistry registry, DsStreams streams) {
        this.registry = registry;
        this.streams = streams;
        this.sweeper = Agent.start("ds-expiry", Duration.ofMillis(SWEEP_MILLIS), this::sweep);
    }

    /**
     * One pass of the {@code ds-expiry} agent. A stream that cannot be deleted is skipped, the
     * others still are; the pass then throws, so the agent counts and reports it, and the stream
     * is tried again next pass.
     */
    private void sweep() {
        long now = System.currentTimeMillis();
        RuntimeException failed = null;
        String failedStream = null;
        int failures = 0;
        for (DsStream s : registry.all()) {
            try {
                if (!s.softDeleted && s.expired(now)) {
                    streams.expire(s);
                }
            } catch (RuntimeException e) {
                failures++;
                if (failed == null) {
                    failed = e;
                    failedStream = s.ws + "/" + s.path;
                }
            }
        }
        if (failed != null) {
            throw new IllegalStateException("cannot delete " + failures + " expired stream(s), the first "
                    + failedStream + ": " + failed.getMessage(), failed);
        }
    }

    /** Stops the sweeper. */
    @Override
    public void close() {
        sweeper.close();
    }
}

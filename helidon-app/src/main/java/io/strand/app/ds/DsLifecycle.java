package io.strand.app.ds;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.LogStore;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Stateless apart from what it is given; runs on the thread that applies a write (a request thread,
 * or a cluster replica's apply thread), creates and deletes under the registry's workspace lock: PUT creates a stream (or a fork) or confirms an identical one, HEAD
 * describes it, DELETE removes it. A create's commit point is the stream's row: a crash before it
 * leaves only an unnamed {@code ds-…} log.
 */
final class DsLifecycle {
    private final LogStore logs;
    private final DsRegistry registry;
    private final DsStreams streams;
    private final DsForks forks;
    private final DsLogWriter writer;
    private final DsSubscriptions subscriptions;

    DsLifecycle(LogStore logs, DsRegistry registry, DsStreams streams, DsForks forks, DsLogWriter writer,
                DsSubscriptions subscriptions) {
        this.logs = logs;
        this.registry = registry;
        this.streams = streams;
        this.forks = forks;
        this.writer = writer;
        this.subscriptions = subscriptions;
    }

    /** PUT: 201 for a new stream (the body its first entries), 200 for an identical one, 409 for a different one. */
    void put(DsCall call, DsAnswer res, long now) {
        DsTarget t = call.target();
        String ct = call.header(HeaderNames.CONTENT_TYPE);
        Long ttl = call.ttl();
        Instant expiresAt = call.expiresAt();
        if (ttl != null && expiresAt != null) {
            throw StrandException.badRequest("send Stream-TTL or Stream-Expires-At, not both");
        }
        boolean close = call.closedFlag();
        String forkFrom = call.header(DsHeaders.FORKED_FROM);
        String forkOffset = call.header(DsHeaders.FORK_OFFSET);
        String forkSub = call.header(DsHeaders.FORK_SUB_OFFSET);
        if (forkFrom == null && (forkOffset != null || forkSub != null)) {
            throw StrandException.badRequest("Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From");
        }
        long sub = 0;
        if (forkSub != null) {
            if (!DsRequests.DECIMAL.matcher(forkSub).matches()) {
                throw StrandException.badRequest("Stream-Fork-Sub-Offset must be a non-negative integer");
            }
            sub = Long.parseLong(forkSub);
            if (sub > 0 && forkOffset == null) {
                throw StrandException.badRequest("a Stream-Fork-Sub-Offset above 0 needs Stream-Fork-Offset");
            }
        }
        DsOffset forkAt = forkOffset == null ? null : DsOffset.parse(forkOffset);
        byte[] body = call.body();
        synchronized (registry.workspaceLock(t.ws())) {
            DsStream existing = registry.find(t.ws(), t.path());
            if (existing != null && existing.expired(now) && !existing.softDeleted) {
                streams.remove(existing, now);
                existing = null;
            }
            if (existing != null) {
                if (existing.softDeleted) {
                    throw new StrandException(ErrorCode.STREAM_CONFLICT, "stream '" + t.path() + "' was deleted and is kept for its forks");
                }
                String point = forkFrom == null ? null : DsForks.forkPoint(forkAt, sub);
                boolean inherited = forkFrom != null && ttl == null && expiresAt == null; // a fork's expiry may come from its source
                boolean same = (ct == null || Objects.equals(DsStream.normalize(ct), DsStream.normalize(existing.contentType)))
                        && (inherited || Objects.equals(ttl, existing.ttlSeconds) && Objects.equals(expiresAt, existing.expiresAt))
                        && close == existing.closed
                        && Objects.equals(forkFrom == null ? null : DsForks.sourcePath(t.ws(), forkFrom), existing.forkedFrom)
                        && (forkFrom == null || forkAt == null || Objects.equals(point, existing.forkPoint));
                if (!same) {
                    throw new StrandException(ErrorCode.STREAM_CONFLICT, "stream '" + t.path() + "' exists with a different configuration");
                }
                describe(res, existing, streams.head(existing));
                res.send(Status.OK_200);
                return;
            }
            DsStream s = forkFrom == null
                    ? new DsStream(t.ws(), t.path(), call.logName(), now,
                    ct == null ? "application/octet-stream" : ct, ttl, expiresAt, null)
                    : forks.fork(t, call.logName(), now, ct, ttl, expiresAt, DsForks.sourcePath(t.ws(), forkFrom), forkAt, sub);
            long head;
            try { // the row is the commit point: a crash before it leaves only an unnamed ds-… log
                List<byte[]> entries = DsEntries.encode(s.json(), body, true);
                writer.checkSizes(entries);
                head = writer.append(s, entries, streams.head(s), null, now).head();
                s.closed = close;
                registry.add(s);
            } catch (RuntimeException e) {
                logs.delete(s.ws, s.logName);
                throw e;
            }
            if (s.forkedFrom != null) {
                DsStream src = registry.find(s.ws, s.forkedFrom);
                src.lock.lock();
                try {
                    src.forks++;
                    registry.save(src);
                } finally {
                    src.lock.unlock();
                }
            }
            describe(res, s, head);
            res.header(HeaderNames.LOCATION, call.location());
            res.send(Status.CREATED_201);
        }
        subscriptions.onAppend(t.ws(), t.path());
    }

    /** HEAD: the stream's description, never cached. */
    DsAnswer head(DsTarget t) {
        DsStream s = streams.readable(t, false);
        DsAnswer res = new DsAnswer();
        describe(res, s, streams.head(s));
        res.header(HeaderNames.CACHE_CONTROL, "no-store");
        res.send(Status.OK_200);
        return res;
    }

    /** DELETE: removes the stream (only marks it deleted while forks still read it). */
    void delete(DsCall call, DsAnswer res, long now) {
        synchronized (registry.workspaceLock(call.ws())) {
            DsStream s = streams.live(call.target(), now);
            s.lock.lock();
            try {
                streams.remove(s, now);
            } finally {
                s.lock.unlock();
            }
        }
        res.send(Status.NO_CONTENT_204);
    }

    /** The expiry of a stream, as its shard's leader proposed it: removes it if it is past its TTL or Expires-At at {@code now}. */
    void expire(DsCall call, DsAnswer res, long now) {
        DsStream s = registry.find(call.ws(), call.path());
        if (s != null && !s.softDeleted && s.expired(now)) {
            streams.expire(s, now);
        }
        res.send(Status.NO_CONTENT_204);
    }

    /** A read's extension of a sliding TTL, applied on every replica of a cluster: 404 when the stream is gone or expired. */
    void touch(DsCall call, DsAnswer res, long now) {
        streams.live(call.target(), now).touch(now);
        res.send(Status.NO_CONTENT_204);
    }

    /** Content type, tail offset, expiry and closure of a stream. */
    private static void describe(DsAnswer res, DsStream s, long head) {
        res.header(HeaderNames.CONTENT_TYPE, s.contentType);
        res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(head).toString());
        if (s.ttlSeconds != null) {
            res.header(DsHeaders.TTL, Long.toString(s.ttlSeconds));
        }
        if (s.expiresAt != null) {
            res.header(DsHeaders.EXPIRES_AT, s.expiresAt.toString());
        }
        if (s.closed) {
            res.header(DsHeaders.CLOSED, "true");
        }
    }
}

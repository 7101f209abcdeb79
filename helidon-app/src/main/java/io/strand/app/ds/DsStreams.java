package io.strand.app.ds;

import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.LogInfo;
import io.strand.logtier.LogStore;
import io.strand.logtier.LogWatch;
import java.util.List;
import java.util.Objects;

/**
 * Stateless apart from the registry and logs it is given, so request threads and the
 * {@code ds-expiry} agent share it: the streams as the endpoint sees them, a stream that may be
 * used now ({@link #live}, {@link #readable}), its head in its Strand log, and its removal (expiry,
 * delete, and the release of a fork's source). A stream's row changes only under its lock; creates
 * and removes of a workspace run under the registry's workspace lock. Writes pass the time they are
 * applied at ({@code now}: on a cluster the leader's stamp, so every replica decides an expiry alike).
 */
final class DsStreams {
    /** {@code _log/{name}}: native log {@code name}, read-only, as a JSON stream. */
    static final String NATIVE_PREFIX = "_log/";

    private final LogStore logs;
    private final DsRegistry registry;
    private final DsSubscriptions subscriptions;
    /** A cluster replica's streams: only applied writes change a row (reads neither expire nor touch a stream). */
    private final boolean replicated;

    DsStreams(LogStore logs, DsRegistry registry, DsSubscriptions subscriptions, boolean replicated) {
        this.logs = logs;
        this.registry = registry;
        this.subscriptions = subscriptions;
        this.replicated = replicated;
    }

    /**
     * A stream a read may use: as {@link #live} at the local time, on a single node touching it when
     * {@code touch} (a GET extends a sliding TTL, a HEAD does not). A cluster replica changes no row
     * for a read: an expired stream is answered 404 here and removed when the shard's leader proposes
     * its expiry; a GET extends a sliding TTL by a write of its own first ({@link DsCall#touch}).
     */
    DsStream readable(DsTarget t, boolean touch) {
        long now = System.currentTimeMillis();
        if (!replicated) {
            DsStream s = live(t, now);
            if (touch) {
                s.touch(now);
            }
            return s;
        }
        DsStream s = row(t);
        if (s != null && s.expired(now)) {
            throw StrandException.notFound("stream '" + t.path() + "' does not exist");
        }
        return live(t, Long.MIN_VALUE); // nothing is expired at the start of time, so this removes nothing
    }

    /** The row of stream {@code t}, expired or not; null for none (and for a native log's view, which has none). */
    private DsStream row(DsTarget t) {
        return t.path().startsWith(NATIVE_PREFIX) ? null : registry.find(t.ws(), t.path());
    }

    /** True when a read of {@code t} extends a sliding TTL: the stream exists and has one. */
    boolean slides(DsTarget t) {
        DsStream s = row(t);
        return s != null && s.ttlSeconds != null && !s.softDeleted;
    }

    /** A stream that may be used at {@code now}: 404 when absent or expired (expiring it), 410 when deleted but kept for its forks. */
    DsStream live(DsTarget t, long now) {
        if (t.path().startsWith(NATIVE_PREFIX)) {
            String log = t.path().substring(NATIVE_PREFIX.length());
            if (!Names.isObject(log) || logs.info(t.ws(), log).isEmpty()) {
                throw StrandException.notFound("log '" + log + "' does not exist in workspace '" + t.ws() + "'");
            }
            return DsStream.nativeView(t.ws(), t.path(), log);
        }
        DsStream s = registry.find(t.ws(), t.path());
        if (s != null && s.expired(now)) {
            expire(s, now);
            s = registry.find(t.ws(), t.path());
        }
        if (s == null || s.softDeleted && s.expired(now)) {
            throw StrandException.notFound("stream '" + t.path() + "' does not exist");
        }
        if (s.softDeleted) {
            throw new StrandException(ErrorCode.GONE, "stream '" + t.path() + "' was deleted; forks still read it");
        }
        return s;
    }

    /** The seq of the stream's last entry (0 when empty): the committed head of its log. */
    long head(DsStream s) {
        return logs.info(s.ws, s.logName).map(LogInfo::head).orElse(0L);
    }

    /** A stream's tail offset, the start offset when it does not exist (subscriptions compare acks with it). */
    String tailOffset(String ws, String path) {
        DsStream s = registry.find(ws, path);
        if (s == null || s.softDeleted || s.expired(System.currentTimeMillis())) {
            return DsOffset.START.toString();
        }
        return DsOffset.after(head(s)).toString();
    }

    /** The paths of a workspace's streams under {@code root}, relative to it (what a subscription's pattern matches). */
    List<String> underRoot(String ws, String root) {
        return registry.all().stream().filter(s -> s.ws.equals(ws) && !s.softDeleted)
                .map(s -> root.isEmpty() ? s.path : s.path.startsWith(root + "/") ? s.path.substring(root.length() + 1) : null)
                .filter(Objects::nonNull).toList();
    }

    /** True once a followed stream was deleted (or, for a native view, its log). */
    boolean gone(DsStream s) {
        if (s.nativeView) {
            return logs.info(s.ws, s.logName).isEmpty();
        }
        return registry.find(s.ws, s.path) != s || s.softDeleted;
    }

    /** Wakes long-polls and SSE loops following a stream (after closure or delete). */
    void wake(DsStream s) {
        try (LogWatch w = logs.watch(s.ws, s.logName)) {
            w.wake();
        }
    }

    /** Removes a stream past its TTL or Expires-At, unless another request already did. */
    void expire(DsStream s, long now) {
        synchronized (registry.workspaceLock(s.ws)) {
            if (registry.find(s.ws, s.path) == s && !s.softDeleted) {
                remove(s, now);
            }
        }
    }

    /**
     * Deletes a stream, or only marks it deleted while forks still read it; a fork's delete
     * releases its source, collecting sources that were waiting for their last fork. Caller holds the
     * workspace's lock.
     */
    void remove(DsStream s, long now) {
        s.lock.lock(); // a stream's row changes only under its lock (an append may be saving it right now)
        try {
            if (s.forks > 0) {
                s.softDeleted = true;
                registry.save(s);
                return;
            }
            registry.remove(s);
            logs.delete(s.ws, s.logName);
        } finally {
            s.lock.unlock();
        }
        wake(s);
        subscriptions.onDelete(s.ws, s.path);
        DsStream src = s.forkedFrom == null ? null : registry.find(s.ws, s.forkedFrom);
        if (src == null) {
            return;
        }
        boolean collect;
        src.lock.lock();
        try {
            src.forks = Math.max(0, src.forks - 1);
            collect = src.forks == 0 && (src.softDeleted || src.expired(now));
            if (!collect) {
                registry.save(src);
            }
        } finally {
            src.lock.unlock();
        }
        if (collect) {
            remove(src, now);
        }
    }
}

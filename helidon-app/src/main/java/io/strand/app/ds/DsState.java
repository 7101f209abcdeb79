package io.strand.app.ds;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.ApiErrors;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.LogStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Thread-safe as its parts are (rows change under their stream's lock): the Durable Streams state
 * of one store set, its registry of streams under {@code <stores>/ds} and the services over its log
 * store. A single node has one, over {@code --data}; a cluster node one per shard replica, whose rows
 * change only when the replica applies a write from the shard's log ({@link #apply}), so every
 * replica holds the same rows and the same log entries.
 */
final class DsState {
    final DsRegistry registry;
    final DsStreams streams;
    final DsAppender appender;
    final DsLifecycle lifecycle;
    final DsReader reader;

    DsState(LogStore logs, Path root, boolean replicated, DsSubscriptions subscriptions, long longPollMillis) {
        this.registry = new DsRegistry(root, replicated);
        DsLogWriter writer = new DsLogWriter(logs);
        this.streams = new DsStreams(logs, registry, subscriptions, replicated);
        this.appender = new DsAppender(registry, streams, writer, subscriptions);
        this.lifecycle = new DsLifecycle(logs, registry, streams, new DsForks(logs, registry, streams, writer), writer, subscriptions);
        this.reader = new DsReader(logs, streams, longPollMillis);
    }

    /**
     * Applies one write at {@code now} (on a cluster the leader's stamp): the answer, or the request
     * error it was refused with. Errors past 4xx (an I/O failure) are thrown: a cluster replica stops
     * rather than answer differently from the others.
     */
    DsAnswer apply(DsCall call, long now) {
        DsAnswer answer = new DsAnswer();
        try {
            switch (call.method()) {
                case DsCall.PUT -> lifecycle.put(call, answer, now);
                case DsCall.POST -> appender.post(call, answer, now);
                case DsCall.DELETE -> lifecycle.delete(call, answer, now);
                case DsCall.EXPIRE -> lifecycle.expire(call, answer, now);
                case DsCall.TOUCH -> lifecycle.touch(call, answer, now);
                case DsCall.WAKE -> answer.send(appender.appendWake(call.ws(), call.path(), call.body(), now)
                        ? io.helidon.http.Status.NO_CONTENT_204 : io.helidon.http.Status.NOT_FOUND_404);
                default -> throw new StrandException(ErrorCode.METHOD_NOT_ALLOWED, "Durable Streams has no " + call.method());
            }
        } catch (RuntimeException e) {
            StrandException se = ApiErrors.classify(e);
            if (se.code().httpStatus() >= 500) {
                throw e;
            }
            return answer.refuse(se);
        }
        return answer;
    }

    /** The streams past their TTL or Expires-At at {@code now} (not yet removed). */
    List<DsStream> expired(long now) {
        List<DsStream> out = new ArrayList<>();
        for (DsStream s : registry.all()) {
            if (!s.softDeleted && s.expired(now)) {
                out.add(s);
            }
        }
        return out;
    }

    void annotate(String ws, String log, ObjectNode info) {
        registry.annotate(ws, log, info);
    }

    /** The DS path of the stream {@code log} holds, or null. */
    String streamPath(String ws, String log) {
        DsStream s = registry.forLog(ws, log);
        return s == null ? null : s.path;
    }
}

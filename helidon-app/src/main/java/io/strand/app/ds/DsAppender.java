package io.strand.app.ds;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.strand.core.ErrorCode;
import io.strand.core.FailPoints;
import io.strand.core.StrandException;
import java.util.List;

/**
 * Stateless apart from what it is given; each append runs as one turn under the stream's lock, on
 * its request thread (a single node), the shard's apply thread (a cluster replica, see
 * {@link DsState#apply}) or, for a wake event, a virtual thread: POST appends and closes, with
 * idempotent producers and Stream-Seq. The log append comes first, the stream's row (producer
 * state, Stream-Seq, closure) after it; a producer append the log recognises as already applied
 * is answered as a duplicate, so a crash between the two never appends twice.
 */
final class DsAppender {
    private final DsRegistry registry;
    private final DsStreams streams;
    private final DsLogWriter writer;
    private final DsSubscriptions subscriptions;

    DsAppender(DsRegistry registry, DsStreams streams, DsLogWriter writer, DsSubscriptions subscriptions) {
        this.registry = registry;
        this.streams = streams;
        this.writer = writer;
        this.subscriptions = subscriptions;
    }

    /** POST: appends the body (one or more entries), closes on {@code Stream-Closed: true}, or both. */
    void post(DsCall call, DsAnswer res, long now) {
        DsTarget t = call.target();
        DsStream s = streams.live(t, now);
        s.touch(now);
        String ct = call.header(HeaderNames.CONTENT_TYPE);
        boolean close = call.closedFlag();
        DsProducers.Producer producer = DsProducers.of(call);
        String streamSeq = call.header(DsHeaders.SEQ);
        byte[] body = call.body();
        s.lock.lock();
        try {
            if (registry.find(t.ws(), t.path()) != s) {
                throw StrandException.notFound("stream '" + t.path() + "' does not exist");
            }
            if (s.closed) {
                if (producer != null && producer.key().equals(s.closedBy)) {
                    DsProducers.headers(res, producer.epoch(), producer.seq());
                    res.header(DsHeaders.CLOSED, "true");
                    res.send(Status.NO_CONTENT_204);
                    return;
                }
                res.header(DsHeaders.CLOSED, "true");
                if (producer == null && close && body.length == 0) { // closing is idempotent
                    res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(streams.head(s)).toString());
                    res.send(Status.NO_CONTENT_204);
                    return;
                }
                res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(streams.head(s)).toString());
                throw new StrandException(ErrorCode.STREAM_CLOSED, "stream '" + t.path() + "' is closed");
            }
            if (body.length == 0 && !close) {
                throw StrandException.badRequest("an append needs a body (or Stream-Closed: true to close)");
            }
            if (body.length > 0) {
                if (ct == null) {
                    throw StrandException.badRequest("an append needs a Content-Type");
                }
                if (!DsStream.normalize(ct).equals(DsStream.normalize(s.contentType))) {
                    throw new StrandException(ErrorCode.STREAM_CONFLICT, "content type " + ct + " does not match the stream's "
                            + s.contentType);
                }
            }
            if (producer != null && !DsProducers.accept(res, s, producer)) {
                return;
            }
            if (streamSeq != null && s.lastStreamSeq != null && streamSeq.compareTo(s.lastStreamSeq) <= 0) {
                throw new StrandException(ErrorCode.SEQ_MISMATCH, "Stream-Seq '" + streamSeq
                        + "' is not above the last one, '" + s.lastStreamSeq + "'");
            }
            List<byte[]> entries = DsEntries.encode(s.json(), body, false);
            writer.checkSizes(entries);
            DsLogWriter.Appended appended = writer.append(s, entries, streams.head(s), producer, now);
            FailPoints.hit("ds.afterAppend"); // the log has the append, the stream's row not yet its producer state
            long head = appended.head();
            if (appended.replayed()) { // acknowledged before a crash lost the row's producer state: a duplicate
                DsProducers.record(s, producer);
                registry.save(s);
                DsProducers.headers(res, producer.epoch(), producer.seq());
                res.send(Status.NO_CONTENT_204);
                return;
            }
            boolean changed = false;
            if (producer != null) {
                DsProducers.record(s, producer);
                changed = true;
            }
            if (streamSeq != null) {
                s.lastStreamSeq = streamSeq;
                changed = true;
            }
            if (close) {
                s.closed = true;
                s.closedBy = producer == null ? null : producer.key();
                changed = true;
            }
            if (changed) {
                registry.save(s);
            }
            res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(head).toString());
            if (close) {
                res.header(DsHeaders.CLOSED, "true");
            }
            if (producer != null) {
                DsProducers.headers(res, producer.epoch(), producer.seq());
                res.send(body.length > 0 ? Status.OK_200 : Status.NO_CONTENT_204);
            } else {
                res.send(Status.NO_CONTENT_204);
            }
        } finally {
            s.lock.unlock();
        }
        if (close) {
            streams.wake(s);
        }
        if (body.length > 0) {
            subscriptions.onAppend(t.ws(), t.path());
        }
    }

    /** Appends a pull-wake event to a wake stream, stamped {@code now}; false when it does not exist or is closed. */
    boolean appendWake(String ws, String path, byte[] json, long now) {
        DsStream s = registry.find(ws, path);
        if (s == null || s.softDeleted) {
            return false;
        }
        s.lock.lock();
        try {
            if (s.closed || registry.find(ws, path) != s) {
                return false;
            }
            writer.append(s, DsEntries.encode(s.json(), json, false), streams.head(s), null, now);
            return true;
        } finally {
            s.lock.unlock();
        }
    }
}

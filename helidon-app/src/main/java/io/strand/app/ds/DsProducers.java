package io.strand.app.ds;

import io.helidon.http.Status;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;

/**
 * Stateless; called by the thread that applies a write and holds the stream's lock: the protocol's idempotent
 * producers ({@code Producer-Id}, {@code -Epoch}, {@code -Seq}) checked against the producer state
 * in the stream's row, answering duplicates, stale epochs and sequence gaps.
 */
final class DsProducers {
    private static final long MAX_SAFE = (1L << 53) - 1;

    private DsProducers() {
    }

    /** DS idempotent-producer headers: all three or none. */
    record Producer(String id, long epoch, long seq) {
        /** {@code id epoch seq}: what {@link DsStream#closedBy} holds for the append that closed the stream. */
        String key() {
            return id + ' ' + epoch + ' ' + seq;
        }
    }

    /** The request's producer, null when it names none; 400 for a partial or malformed set. */
    static Producer of(DsCall call) {
        String id = call.header(DsHeaders.PRODUCER_ID);
        String epoch = call.header(DsHeaders.PRODUCER_EPOCH);
        String seq = call.header(DsHeaders.PRODUCER_SEQ);
        if (id == null && epoch == null && seq == null) {
            return null;
        }
        if (id == null || epoch == null || seq == null) {
            throw StrandException.badRequest("Producer-Id, Producer-Epoch and Producer-Seq go together");
        }
        if (id.isEmpty()) {
            throw StrandException.badRequest("Producer-Id cannot be empty");
        }
        return new Producer(id, safeInt(epoch, "Producer-Epoch"), safeInt(seq, "Producer-Seq"));
    }

    private static long safeInt(String v, String name) {
        if (!DsRequests.DECIMAL.matcher(v).matches() || Long.parseLong(v) > MAX_SAFE) {
            throw StrandException.badRequest(name + " must be an integer from 0 to 2^53-1, not '" + v + "'");
        }
        return Long.parseLong(v);
    }

    /** Checks a producer append against its state; false when it was answered (a duplicate). Caller holds the lock. */
    static boolean accept(DsAnswer res, DsStream s, Producer p) {
        long[] state = s.producers.get(p.id());
        if (state == null) {
            if (p.seq() != 0) {
                gap(res, 0, p.seq());
            }
            return true;
        }
        if (p.epoch() < state[0]) {
            res.header(DsHeaders.PRODUCER_EPOCH, Long.toString(state[0]));
            throw new StrandException(ErrorCode.PRODUCER_EPOCH_STALE, "Producer-Epoch " + p.epoch()
                    + " is below the current epoch " + state[0]);
        }
        if (p.epoch() > state[0]) {
            if (p.seq() != 0) {
                throw StrandException.badRequest("a new Producer-Epoch starts at Producer-Seq 0");
            }
            return true;
        }
        if (p.seq() <= state[1]) {
            headers(res, state[0], state[1]);
            res.send(Status.NO_CONTENT_204);
            return false;
        }
        if (p.seq() != state[1] + 1) {
            gap(res, state[1] + 1, p.seq());
        }
        return true;
    }

    /** Records an accepted append as the producer's last; the caller holds the lock and saves the row. */
    static void record(DsStream s, Producer p) {
        s.producers.put(p.id(), new long[] {p.epoch(), p.seq()});
    }

    private static void gap(DsAnswer res, long expected, long received) {
        res.header(DsHeaders.PRODUCER_EXPECTED_SEQ, Long.toString(expected));
        res.header(DsHeaders.PRODUCER_RECEIVED_SEQ, Long.toString(received));
        throw new StrandException(ErrorCode.PRODUCER_SEQ_GAP, "Producer-Seq " + received + " skips ahead; expected " + expected);
    }

    /** The producer's epoch and seq an answer echoes. */
    static void headers(DsAnswer res, long epoch, long seq) {
        res.header(DsHeaders.PRODUCER_EPOCH, Long.toString(epoch));
        res.header(DsHeaders.PRODUCER_SEQ, Long.toString(seq));
    }
}

package io.strand.app.ws;

import io.strand.app.ApiErrors;
import io.strand.app.EntryJson;
import io.strand.app.StrandMetrics;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.logtier.LogCursor;
import io.strand.logtier.LogWatch;
import io.strand.logtier.PageInfo;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One subscription: a cursor ({@link LogCursor}), never a buffer. Its loop (one virtual thread)
 * reads a chunk from storage at the cursor, sends it (blocking while the socket drains), and when
 * it reaches the head waits for the head to move. Replay and live tail are the same loop, so a
 * subscriber that falls behind simply keeps reading from storage; at most one frame is in hand at
 * a time.
 * Entries go from storage straight into the frame's bytes ({@link EntryJson}); the frame buffer is
 * kept only while the subscription replays, so an idle subscription holds none.
 *
 * <p>Thread-safe where it must be: the loop's state belongs to its thread; {@link #credit},
 * {@link #cancel} and {@link #stop} come from the connection's thread (or the token sweeper) and touch
 * only the atomic credit and the volatile {@code active}, which {@link #stop} clears under the
 * writer's lock so that no frame of the subscription is sent after it returns. {@link #end} (any
 * thread) sets the volatile {@code endedBy}; the loop sends the {@code closed} frame itself.
 */
final class Subscription implements Runnable {
    static final int MAX_FRAME_ENTRIES = 500;
    static final int MAX_FRAME_BYTES = 256 * 1024;
    private static final long PROGRESS_EVERY_NANOS = 500_000_000L;
    /** First size of a replay's frame buffer: it grows to what a full frame needs, once per replay. */
    private static final int REPLAY_BUFFER_BYTES = 16 * 1024;
    /** First size of a live-tail frame buffer (usually a few entries). */
    private static final int LIVE_BUFFER_BYTES = 1024;

    private final String subJson;
    private final byte[] subJsonBytes;
    /** The subscription's place in its log, moved past each frame sent: its {@code next()} is the resume cursor. Only the loop reads and moves it. */
    private final LogCursor cursor;
    private final SocketWriter out;
    private final StrandMetrics metrics;
    private final long heartbeatMillis;
    private final Runnable onEnd;
    /** Remaining credit when a window was asked for; Long.MAX_VALUE when unlimited. */
    private final AtomicLong credit;
    private volatile boolean active = true;
    /** Set by {@link #end}: the loop closes the subscription with this error and the resume cursor. */
    private volatile StrandException endedBy;
    /** Completes when the loop has ended and let go of its log. */
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    /** When the loop last sent a frame (System.nanoTime); only the loop touches it. */
    private long lastSent;

    /**
     * @param subJson the client's {@code sub} as JSON text (a string or an integer), echoed in every frame
     * @param from    the first seq to deliver, already answered in the subscribe reply
     * @param watch   the log's watch, the subscription's from now on (closed when it ends)
     */
    Subscription(String subJson, long from, Long window, LogWatch watch, SocketWriter out,
                 StrandMetrics metrics, long heartbeatMillis, Runnable onEnd) {
        this.subJson = subJson;
        this.subJsonBytes = subJson.getBytes(StandardCharsets.UTF_8);
        this.cursor = watch.cursor(from);
        this.out = out;
        this.metrics = metrics;
        this.heartbeatMillis = heartbeatMillis;
        this.credit = new AtomicLong(window == null ? Long.MAX_VALUE : window);
        this.onEnd = onEnd;
    }

    /** The {@code sub} as JSON text: the key of the socket's subscriptions. */
    String id() {
        return subJson;
    }

    /**
     * Adds {@code n ≥ 1} to the window, saturating: a window that reaches {@code Long.MAX_VALUE - 1}
     * stays there (as good as unlimited) instead of wrapping negative and stalling the subscription.
     */
    void credit(long n) {
        if (n < 1) {
            throw new IllegalArgumentException("credit must be ≥ 1: " + n);
        }
        credit.accumulateAndGet(n, Subscription::addCredit);
        cursor.wake();
    }

    static long addCredit(long window, long n) {
        if (window == Long.MAX_VALUE) {
            return window; // unlimited
        }
        return n > Long.MAX_VALUE - 1 - window ? Long.MAX_VALUE - 1 : window + n;
    }

    /** Ends the loop soon, without waiting: for a closed socket or a revoked token, where nothing more is read. */
    void cancel() {
        active = false;
        cursor.wake();
    }

    /**
     * Ends the loop and returns only once no frame of this subscription can be sent any more (a frame
     * being sent has gone out): what the socket sends after this call never has one following it.
     * Waits for a send in progress, as any reply does.
     */
    void stop() {
        out.locked(() -> active = false);
        cursor.wake();
    }

    /**
     * Ends the subscription from outside (its stores are about to close): the loop sends
     * {@code {"type":"closed","reason":"error","error":why,"next":N}}, N being the first seq not
     * delivered, so the client subscribes again from N. The future completes once the loop no longer
     * reads the log (at once if it already ended).
     */
    CompletableFuture<Void> end(StrandException why) {
        endedBy = why;
        cursor.wake();
        return ended;
    }

    @Override
    public void run() {
        metrics.subscriberOpened();
        StrandMetrics.ReplayLag lag = metrics.replayLag();
        try {
            loop(lag);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // ended from outside, a read may fail on the closing stores: the reason given wins
            closeWithError(endedBy != null ? endedBy : ApiErrors.classify(e));
        } finally {
            cursor.close();
            lag.close();
            metrics.subscriberClosed();
            onEnd.run();
            ended.complete(null);
        }
    }

    private void closeWithError(StrandException e) {
        if (active && out.isOpen()) {
            // the error object as in a reply, so cold_unavailable (retry later) and corrupt stay apart
            send(frame("closed") + ",\"reason\":\"error\",\"error\":" + Json.string(ApiErrors.errorObject(e))
                    + ",\"next\":" + cursor.next() + "}");
        }
    }

    private void loop(StrandMetrics.ReplayLag lag) throws InterruptedException {
        boolean caughtUp = false;
        long started = System.nanoTime();
        long lastProgress = started;
        lastSent = started;
        long delivered = 0;
        EntryJson buffer = null;
        while (active && out.isOpen()) {
            if (endedBy != null) {
                closeWithError(endedBy);
                return;
            }
            if (cursor.deleted()) {
                send(frame("closed") + ",\"reason\":\"deleted\",\"next\":" + cursor.next() + "}");
                return;
            }
            long allowed = credit.get();
            if (allowed <= 0) {
                // out of credit: wait for credit (or cancel), beating meanwhile so the client can tell a live socket
                long head = cursor.awaitBeyond(Long.MAX_VALUE - 1, untilHeartbeatMillis());
                if (credit.get() <= 0 && heartbeatDue()) {
                    lag.set(head - cursor.next() + 1);
                    if (!heartbeat(head)) {
                        return;
                    }
                }
                continue;
            }
            if (buffer == null) {
                buffer = EntryJson.frames(caughtUp ? LIVE_BUFFER_BYTES : REPLAY_BUFFER_BYTES);
            }
            buffer.startFrame(subJsonBytes);
            PageInfo page = cursor.read((int) Math.min(MAX_FRAME_ENTRIES, allowed), MAX_FRAME_BYTES, buffer);
            if (page.gap() != null) {
                if (!send(frame("gap") + ",\"from\":" + page.gap().from() + ",\"to\":" + page.gap().to() + "}")) {
                    return;
                }
                cursor.moveTo(page.gap().to() + 1);
            }
            if (page.count() > 0) {
                long next = page.next();
                if (!send(buffer.endFrame(next))) {
                    return;
                }
                cursor.moveTo(next);
                metrics.frameSent();
                if (allowed != Long.MAX_VALUE) {
                    credit.addAndGet(-page.count());
                }
                delivered += page.count();
                long now = System.nanoTime();
                long behind = page.head() - next + 1;
                lag.set(behind);
                if (!caughtUp && behind > 0 && now - lastProgress >= PROGRESS_EVERY_NANOS) {
                    double seconds = (now - started) / 1e9;
                    long rate = seconds > 0 ? (long) (delivered / seconds) : 0;
                    long eta = rate > 0 ? behind * 1000 / rate : -1;
                    send(frame("progress") + ",\"next\":" + next + ",\"head\":" + page.head()
                            + ",\"rate\":" + rate + ",\"etaMs\":" + eta + "}");
                    lastProgress = now;
                }
                continue;
            }
            buffer = null; // at the head: wait without holding a frame buffer
            lag.set(0);
            long next = cursor.next();
            if (!caughtUp) {
                caughtUp = true;
                send(frame("caughtUp") + ",\"next\":" + next + "}");
            }
            long head = cursor.awaitBeyond(next - 1, untilHeartbeatMillis());
            if (head < next && heartbeatDue() && !heartbeat(head)) {
                return;
            }
        }
    }

    private long untilHeartbeatMillis() {
        return Math.max(1, heartbeatMillis - (System.nanoTime() - lastSent) / 1_000_000);
    }

    private boolean heartbeatDue() {
        return (System.nanoTime() - lastSent) / 1_000_000 >= heartbeatMillis;
    }

    private boolean heartbeat(long head) {
        return send(frame("heartbeat") + ",\"head\":" + head + "}");
    }

    /** Sends a frame of this subscription unless it was stopped; false when it was not sent. */
    private boolean send(String frame) {
        if (!out.sendIf(() -> active, frame)) {
            return false;
        }
        lastSent = System.nanoTime();
        return true;
    }

    /** An entries frame, from its buffer's bytes without a copy ({@link SocketWriter#sendUtf8If}). */
    private boolean send(EntryJson frame) {
        if (!out.sendUtf8If(() -> active, frame.array(), frame.offset(), frame.length())) {
            return false;
        }
        lastSent = System.nanoTime();
        return true;
    }

    private String frame(String type) {
        return "{\"sub\":" + subJson + ",\"type\":\"" + type + "\"";
    }
}

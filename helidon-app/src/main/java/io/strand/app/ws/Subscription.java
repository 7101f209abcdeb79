package io.strand.app.ws;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.ApiErrors;
import io.strand.app.EntryJson;
import io.strand.app.StrandMetrics;
import io.strand.core.Json;
import io.strand.core.StrandException;
import io.strand.logtier.LogWatch;
import io.strand.logtier.PageInfo;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One subscription: a cursor, never a buffer. Its loop (one virtual thread) reads a chunk from
 * storage at the cursor, sends it (blocking while the socket drains), and when it reaches the
 * head waits for the head to move. Replay and live tail are the same loop, so a subscriber that
 * falls behind simply keeps reading from storage; at most one frame is in hand at a time.
 * Entries go from storage straight into the frame's bytes ({@link EntryJson}); the frame buffer is
 * kept only while the subscription replays, so an idle subscription holds none.
 */
final class Subscription implements Runnable {
    static final int MAX_FRAME_ENTRIES = 500;
    static final int MAX_FRAME_BYTES = 256 * 1024;
    private static final long PROGRESS_EVERY_NANOS = 500_000_000L;
    /** First size of a replay's frame buffer: it grows to what a full frame needs, once per replay. */
    private static final int REPLAY_BUFFER_BYTES = 16 * 1024;
    /** First size of a live-tail frame buffer (usually a few entries). */
    private static final int LIVE_BUFFER_BYTES = 1024;

    private final String subId;
    private final String subJson;
    private final byte[] subJsonBytes;
    private final JsonNode requestId;
    private final LogWatch watch;
    private final SocketWriter out;
    private final StrandMetrics metrics;
    private final long heartbeatMillis;
    private final Object startFrom;
    private final Runnable onEnd;
    /** Remaining credit when a window was asked for; Long.MAX_VALUE when unlimited. */
    private final AtomicLong credit;
    private volatile boolean active = true;
    /** The resume cursor: the next seq to deliver. Only the subscription's own thread touches it. */
    private long next;

    /** @param from a seq (Long) or the string "latest" */
    Subscription(String subId, JsonNode requestId, Object from, Long window, LogWatch watch, SocketWriter out,
                 StrandMetrics metrics, long heartbeatMillis, Runnable onEnd) {
        this.subId = subId;
        StringBuilder sb = new StringBuilder();
        EntryJson.string(sb, subId);
        this.subJson = sb.toString();
        this.subJsonBytes = subJson.getBytes(StandardCharsets.UTF_8);
        this.requestId = requestId;
        this.startFrom = from;
        this.watch = watch;
        this.out = out;
        this.metrics = metrics;
        this.heartbeatMillis = heartbeatMillis;
        this.credit = new AtomicLong(window == null ? Long.MAX_VALUE : window);
        this.onEnd = onEnd;
    }

    String id() {
        return subId;
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
        watch.wake();
    }

    static long addCredit(long window, long n) {
        if (window == Long.MAX_VALUE) {
            return window; // unlimited
        }
        return n > Long.MAX_VALUE - 1 - window ? Long.MAX_VALUE - 1 : window + n;
    }

    void cancel() {
        active = false;
        watch.wake();
    }

    @Override
    public void run() {
        metrics.subscriberOpened();
        try {
            long head = watch.head();
            next = "latest".equals(startFrom) ? head + 1 : Math.max(1, (Long) startFrom);
            String reply = "{\"id\":" + requestId + ",\"ok\":true,\"sub\":" + subJson + ",\"from\":" + next + ",\"head\":" + head + "}";
            if (!out.send(reply)) {
                return;
            }
            loop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            if (active && out.isOpen()) {
                // the SPEC §2 error object too: a corrupt entry is named (ws, log, seq), not just "an exception"
                StrandException error = ApiErrors.classify(e);
                out.send(frame("closed") + ",\"reason\":\"error: " + error.code().wire() + "\",\"next\":" + next
                        + ",\"error\":" + Json.string(ApiErrors.errorObject(error)) + "}");
            }
        } finally {
            watch.close();
            metrics.subscriberClosed();
            onEnd.run();
        }
    }

    private void loop() throws InterruptedException {
        boolean caughtUp = false;
        long started = System.nanoTime();
        long lastProgress = started;
        long lastSent = started;
        long delivered = 0;
        EntryJson buffer = null;
        while (active && out.isOpen()) {
            if (watch.deleted()) {
                out.send(frame("closed") + ",\"reason\":\"deleted\",\"next\":" + next + "}");
                return;
            }
            long allowed = credit.get();
            if (allowed <= 0) {
                watch.awaitBeyond(Long.MAX_VALUE - 1, heartbeatMillis); // woken by credit or cancel
                continue;
            }
            if (buffer == null) {
                buffer = EntryJson.frames(caughtUp ? LIVE_BUFFER_BYTES : REPLAY_BUFFER_BYTES);
            }
            buffer.startFrame(subJsonBytes);
            PageInfo page = watch.read(next, (int) Math.min(MAX_FRAME_ENTRIES, allowed), MAX_FRAME_BYTES, buffer);
            if (page.gap() != null) {
                out.send(frame("gap") + ",\"from\":" + page.gap().from() + ",\"to\":" + page.gap().to() + "}");
                next = page.gap().to() + 1;
            }
            if (page.count() > 0) {
                next = page.next();
                if (!out.send(buffer.endFrame(next).text())) {
                    return;
                }
                metrics.frameSent();
                if (allowed != Long.MAX_VALUE) {
                    credit.addAndGet(-page.count());
                }
                delivered += page.count();
                long now = System.nanoTime();
                lastSent = now;
                long behind = page.head() - next + 1;
                metrics.replayLag(Math.max(0, behind));
                if (!caughtUp && behind > 0 && now - lastProgress >= PROGRESS_EVERY_NANOS) {
                    double seconds = (now - started) / 1e9;
                    long rate = seconds > 0 ? (long) (delivered / seconds) : 0;
                    long eta = rate > 0 ? behind * 1000 / rate : -1;
                    out.send(frame("progress") + ",\"next\":" + next + ",\"head\":" + page.head()
                            + ",\"rate\":" + rate + ",\"etaMs\":" + eta + "}");
                    lastProgress = now;
                }
                continue;
            }
            buffer = null; // at the head: wait without holding a frame buffer
            if (!caughtUp) {
                caughtUp = true;
                out.send(frame("caughtUp") + ",\"next\":" + next + "}");
                lastSent = System.nanoTime();
            }
            long waitMillis = Math.max(1, heartbeatMillis - (System.nanoTime() - lastSent) / 1_000_000);
            long head = watch.awaitBeyond(next - 1, waitMillis);
            if (head < next && active && (System.nanoTime() - lastSent) / 1_000_000 >= heartbeatMillis) {
                out.send(frame("heartbeat") + ",\"head\":" + head + "}");
                lastSent = System.nanoTime();
            }
        }
    }

    private String frame(String type) {
        return "{\"sub\":" + subJson + ",\"type\":\"" + type + "\"";
    }
}

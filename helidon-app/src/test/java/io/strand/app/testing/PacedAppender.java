package io.strand.app.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * Load for the cold-store fault ITs: appends batches of {@code {"n":seq}} entries to one log on its
 * own virtual thread, pausing 20 ms between batches (about 2,000 entries/s at 50 a batch), and
 * stops at the first append that fails or is numbered wrongly. Thread-safe: its state is atomics
 * written by the appender thread and read by the test thread.
 */
public final class PacedAppender {
    private final AtomicBoolean appending = new AtomicBoolean(true);
    private final AtomicLong appended = new AtomicLong(); // last acknowledged seq
    private final AtomicLong requests = new AtomicLong();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final Thread thread;

    private PacedAppender(Http http, String ws, String log, int batch, LongConsumer latencyMs) {
        thread = Thread.ofVirtual().name("appender").start(() -> {
            while (appending.get()) {
                long from = appended.get() + 1;
                try {
                    requests.incrementAndGet();
                    long t0 = System.nanoTime();
                    Http.Reply r = http.post(ColdLogs.logPath(ws, log) + "/entries", ColdLogs.batch(from, batch));
                    latencyMs.accept((System.nanoTime() - t0) / 1_000_000);
                    if (r.status() != 200 || r.json().get("firstSeq").asLong() != from) {
                        failures.add("seq " + from + ": " + r.status() + " " + r.body());
                        return;
                    }
                    appended.set(from + batch - 1);
                    Thread.sleep(20); // pacing the load, not synchronisation
                } catch (RuntimeException | InterruptedException e) {
                    failures.add("seq " + from + ": " + e);
                    return;
                }
            }
        });
    }

    /** Starts appending {@code batch}-entry batches to {@code ws/log} from seq 1. */
    public static PacedAppender start(Http http, String ws, String log, int batch) {
        return start(http, ws, log, batch, ms -> { });
    }

    /** As {@link #start(Http, String, String, int)}, telling {@code latencyMs} how long each answered append took. */
    public static PacedAppender start(Http http, String ws, String log, int batch, LongConsumer latencyMs) {
        return new PacedAppender(http, ws, log, batch, latencyMs);
    }

    /** The last acknowledged seq. */
    public long appended() {
        return appended.get();
    }

    /** Appends sent so far. */
    public long requests() {
        return requests.get();
    }

    /** What went wrong (at most one entry: the appender stops at the first). */
    public List<String> failures() {
        return failures;
    }

    /** Stops after the append in flight and waits for the thread to end. */
    public void stop() throws InterruptedException {
        appending.set(false);
        thread.join();
    }
}

package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.WsClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One WebSocket subscriber of {@link ClusterFailoverIT} that follows a log across node deaths: it
 * subscribes on its home node (another live node while home is down) from its last seq + 1, and when
 * the socket dies or the server ends the subscription it reconnects to any live node with
 * {@code from} = last + 1 (SPEC §6, §13: a cursor from one node resumes exactly on another). It
 * keeps the id of every entry it took, in seq order, and counts what breaks "each seq exactly once,
 * in order": a seq past the next one (missed), a seq already taken (repeated). Owned by its own
 * virtual thread; the test thread reads the atomics and, through {@link #received}, a copy of the ids.
 */
final class ResumingSubscriber implements AutoCloseable {
    private final ClusterNodes nodes;
    private final String home;
    private final String log;
    private final Random random;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<String> ids = new ArrayList<>(); // ids.get(k) = data id of seq k + 1
    private final AtomicLong last = new AtomicLong();
    final AtomicLong missed = new AtomicLong();
    final AtomicLong repeated = new AtomicLong();
    final AtomicLong reconnects = new AtomicLong();
    final AtomicLong refusals = new AtomicLong();
    private volatile String refused = "";
    private final Thread thread;

    ResumingSubscriber(ClusterNodes nodes, String home, String log, long seed) {
        this.nodes = nodes;
        this.home = home;
        this.log = log;
        this.random = new Random(seed);
        this.thread = Thread.ofVirtual().name("sub-" + log + "-" + home).start(this::run);
    }

    String name() {
        return log + "@" + home;
    }

    String log() {
        return log;
    }

    /** The last seq taken in order. */
    long last() {
        return last.get();
    }

    /** The last refusal of a subscribe (kept for the failure message), or "". */
    String refused() {
        return refused;
    }

    /** A copy of the ids taken so far, in seq order. */
    List<String> received() {
        synchronized (ids) {
            return List.copyOf(ids);
        }
    }

    private String pickNode() {
        List<String> up = nodes.up();
        if (up.contains(home)) {
            return home;
        }
        return up.isEmpty() ? null : up.get(random.nextInt(up.size()));
    }

    private void run() {
        while (running.get()) {
            String node = pickNode();
            String url = node == null ? null : nodes.url(node);
            if (url != null) {
                try (WsClient c = WsClient.connect(url.replace("http://", "ws://") + "/v1/ws/" + FailoverLoad.WS + "/socket")) {
                    follow(c);
                } catch (RuntimeException | AssertionError e) {
                    // connect refused, the socket died under us, or no reply in time: resume elsewhere
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (running.get()) {
                reconnects.incrementAndGet();
                pause(100); // back off before the next node, not synchronisation
            }
        }
    }

    /** One subscription on {@code c} until the socket dies, the server closes it, or {@link #close}. */
    private void follow(WsClient c) throws InterruptedException {
        long from = last.get() + 1;
        long id = c.request("subscribe", "\"log\":\"" + log + "\",\"from\":" + from + ",\"sub\":\"s\"");
        JsonNode reply = c.reply(id, 15_000);
        if (!reply.path("ok").asBoolean()) {
            // e.g. a node serving a read from its local copy while no leader answers: try again
            refused = reply.toString();
            refusals.incrementAndGet();
            return;
        }
        while (running.get()) {
            JsonNode f = c.frames.poll(200, TimeUnit.MILLISECONDS);
            if (f == null) {
                if (c.closed.isDone()) {
                    return;
                }
                continue;
            }
            switch (f.path("type").asText()) {
                case "entries" -> {
                    for (JsonNode e : f.get("entries")) {
                        take(e.get("seq").asLong(), e.path("data").path("id").asText());
                    }
                }
                case "gap" -> missed.addAndGet(f.get("to").asLong() - f.get("from").asLong() + 1);
                case "closed" -> {
                    return;
                }
                default -> { } // caughtUp, progress, heartbeat
            }
        }
    }

    private void take(long seq, String dataId) {
        long expect = last.get() + 1;
        if (seq < expect) {
            repeated.incrementAndGet();
            return;
        }
        if (seq > expect) {
            missed.addAndGet(seq - expect);
        }
        synchronized (ids) {
            while (ids.size() < seq - 1) {
                ids.add(null); // a missed seq keeps its place, so later ids stay at their seq
            }
            ids.add(dataId);
        }
        last.set(seq);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        thread.join(TimeUnit.SECONDS.toMillis(10));
    }
}

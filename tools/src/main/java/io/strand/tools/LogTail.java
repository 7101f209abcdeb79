package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.io.PrintWriter;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Follows one log over the WebSocket and keeps following across dropped connections and server
 * restarts: after a break it reconnects with exponential backoff and resubscribes from its
 * {@code next} cursor, so every entry is printed exactly once and in seq order. Delivery is
 * bounded by a credit window that is refilled as entries are printed. Owned by the thread that
 * calls {@link #run}; the socket's listener thread only hands frames over through a queue.
 */
final class LogTail {
    static final int WINDOW = 5000;
    static final long FIRST_BACKOFF_MILLIS = 100;
    static final long MAX_BACKOFF_MILLIS = 5000;
    /** No frame for this long (the server sends a heartbeat every 15 s) means the connection is dead. */
    static final long IDLE_MILLIS = 45_000;
    private static final String SUB = "tail";
    private static final Set<String> RETRYABLE = Set.of("unavailable", "internal", "too_many_connections",
            "too_many_subscriptions", "cold_unavailable");

    private final String socketUrl;
    private final String token;
    private final String log;
    private final long maxEntries;
    private final boolean json;
    private final PrintWriter out;
    private final PrintWriter err;
    /** The next seq to print; null until the server has named it for {@code from latest}. */
    private Long next;
    private long printed;
    private long backoffMillis = FIRST_BACKOFF_MILLIS;
    /** True from a lost or failed connection until the next successful subscribe. */
    private boolean outage;

    /**
     * @param from       the first seq, or null for only entries appended from now on
     * @param maxEntries stop after this many entries; 0 follows until interrupted
     */
    LogTail(String socketUrl, String token, String log, Long from, long maxEntries, boolean json, PrintWriter out, PrintWriter err) {
        this.socketUrl = socketUrl;
        this.token = token;
        this.log = log;
        this.next = from;
        this.maxEntries = maxEntries;
        this.json = json;
        this.out = out;
        this.err = err;
    }

    /** Follows until {@code maxEntries} were printed (0) or a failure that retrying cannot fix (1). */
    int run() throws InterruptedException {
        while (true) {
            StrandSocket socket;
            try {
                socket = new StrandSocket(socketUrl, token);
            } catch (StrandSocket.ConnectFailure e) {
                if (e.status / 100 == 4) {
                    return refused(e.status);
                }
                noteOutage(StrandClient.describe(e.getCause() == null ? e : e.getCause()));
                pause();
                continue;
            }
            try {
                Integer code = follow(socket);
                if (code != null) {
                    return code;
                }
            } finally {
                socket.abort();
            }
            noteOutage("connection lost");
            pause();
        }
    }

    /** One connection's life: subscribe, print, refill credit. Null to reconnect, else the exit code. */
    private Integer follow(StrandSocket socket) throws InterruptedException {
        BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();
        socket.onPush(frames::add);
        socket.closed.whenComplete((code, t) -> frames.add(closedMarker(code == null ? -1 : code)));
        JsonNode reply;
        try {
            String from = next == null ? "\"latest\"" : String.valueOf(next);
            reply = socket.call("subscribe", "\"log\":" + Json.string(log) + ",\"from\":" + from
                    + ",\"sub\":\"" + SUB + "\",\"window\":" + WINDOW).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return null;
        }
        if (!reply.path("ok").asBoolean()) {
            String code = reply.path("error").path("code").asText();
            if (RETRYABLE.contains(code)) {
                return null;
            }
            return fail(code, reply.path("error").path("message").asText());
        }
        if (next == null) {
            next = reply.path("from").asLong();
        }
        if (outage) {
            outage = false;
            err.println("strand: reconnected; resuming at seq " + next);
            err.flush();
        }
        backoffMillis = FIRST_BACKOFF_MILLIS;
        while (true) {
            JsonNode f = frames.poll(IDLE_MILLIS, TimeUnit.MILLISECONDS);
            if (f == null) {
                noteOutage("no frame for " + IDLE_MILLIS / 1000 + " s");
                return null;
            }
            switch (f.path("type").asText()) {
                case "entries" -> {
                    if (printEntries(socket, f)) {
                        socket.close();
                        return 0;
                    }
                }
                case "gap" -> {
                    err.println("strand: entries " + f.path("from").asLong() + ".." + f.path("to").asLong() + " are no longer retained");
                    next = Math.max(next, f.path("to").asLong() + 1);
                }
                case "progress" -> {
                    long head = f.path("head").asLong();
                    err.print("\rsyncing: at seq " + f.path("next").asLong() + " of " + head
                            + (head > 0 ? " (" + 100 * f.path("next").asLong() / (head + 1) + "%)" : ""));
                }
                case "caughtUp", "heartbeat" -> {
                    // live from here; a heartbeat only proves the socket is alive
                }
                case "closed" -> {
                    if ("deleted".equals(f.path("reason").asText())) {
                        return fail("not_found", "log '" + log + "' was deleted");
                    }
                    return null;
                }
                case "socketClosed" -> {
                    int code = f.path("code").asInt();
                    if (code == 4001) {
                        return fail("unauthorized", "the token expired or was revoked");
                    }
                    return null;
                }
                default -> {
                    // a frame type from a newer server: ignore
                }
            }
            err.flush();
        }
    }

    /** Prints the new entries of one frame and grants as much credit back; true when the count is reached. */
    private boolean printEntries(StrandSocket socket, JsonNode frame) {
        int n = 0;
        for (JsonNode e : frame.path("entries")) {
            long seq = e.path("seq").asLong();
            n++;
            if (seq < next) {
                continue; // already printed before a reconnect
            }
            out.println(Output.entryLine(e, json));
            next = seq + 1;
            printed++;
            if (maxEntries > 0 && printed >= maxEntries) {
                out.flush();
                return true;
            }
        }
        next = Math.max(next, frame.path("next").asLong());
        out.flush();
        if (n > 0) {
            try {
                socket.call("credit", "\"sub\":\"" + SUB + "\",\"n\":" + n);
            } catch (RuntimeException closing) {
                // the socket is going away; the reconnect resubscribes with a fresh window
            }
        }
        return false;
    }

    /** Says once per outage that the tail is reconnecting. */
    private void noteOutage(String why) {
        if (!outage) {
            outage = true;
            err.println("strand: " + why + "; reconnecting" + (next == null ? "" : " (will resume at seq " + next + ")"));
            err.flush();
        }
    }

    private void pause() throws InterruptedException {
        long jittered = (long) (backoffMillis * ThreadLocalRandom.current().nextDouble(0.8, 1.2));
        Thread.sleep(jittered); // retry delay, not synchronisation
        backoffMillis = Math.min(MAX_BACKOFF_MILLIS, backoffMillis * 2);
    }

    /** The socket was refused (401, 403, 400): asks the same URL over plain HTTP for the error's code and message. */
    private int refused(int status) {
        try {
            new StrandClient(socketUrl.replaceFirst("^ws", "http").replaceFirst("/socket$", ""), token).get("/socket");
        } catch (CliFailure f) {
            return fail(f.code(), f.getMessage().substring(f.code().length() + 2));
        }
        return fail("http_" + status, "the server refused the socket (HTTP " + status + ")");
    }

    private int fail(String code, String message) {
        err.println("strand: " + code + ": " + message);
        err.flush();
        return 1;
    }

    private static JsonNode closedMarker(int code) {
        ObjectNode marker = Json.MAPPER.createObjectNode();
        marker.put("type", "socketClosed");
        marker.put("code", code);
        return marker;
    }
}

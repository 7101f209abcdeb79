package io.strand.app.ds;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.core.StrandException;
import io.strand.logtier.LogStore;
import io.strand.logtier.LogWatch;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Stateless; each read runs on its own request thread (virtual), so a long-poll or an SSE
 * connection blocks only that thread: GET's catch-up, long-poll and SSE reads. Reads take no lock;
 * they read the closed flag before the entries, so a closed stream's reply that is up to date is
 * final, and wait on the log's head in slices so closure and deletes are noticed.
 */
final class DsReader {
    /** Cursor epoch and interval of the protocol's CDN-collapsing cursor. */
    private static final long CURSOR_EPOCH_MS = Instant.parse("2024-10-09T00:00:00Z").toEpochMilli();
    private static final long CURSOR_INTERVAL_MS = 20_000;
    /** An SSE connection ends after this long; clients reconnect from their last offset. */
    private static final long SSE_CONNECTION_MS = 60_000;
    /** Longest single wait for the head: closure and deletes are noticed within this. */
    private static final long WAIT_SLICE_MS = 100;

    private final LogStore logs;
    private final DsStreams streams;
    private final long longPollMillis;

    DsReader(LogStore logs, DsStreams streams, long longPollMillis) {
        this.logs = logs;
        this.streams = streams;
        this.longPollMillis = longPollMillis;
    }

    /** GET: {@code offset} (an offset, {@code -1} or {@code now}) and {@code live} ({@code long-poll} or {@code sse}). */
    void get(ServerRequest req, ServerResponse res, DsTarget t) {
        DsStream s = streams.readable(t, true);
        List<String> offsets = req.query().contains("offset") ? req.query().all("offset") : List.of();
        if (offsets.size() > 1) {
            throw StrandException.badRequest("send one offset parameter");
        }
        String offsetText = offsets.isEmpty() ? null : offsets.getFirst();
        String live = req.query().contains("live") ? req.query().get("live") : null;
        if (live != null && !live.equals("long-poll") && !live.equals("sse")) {
            throw StrandException.badRequest("live must be long-poll or sse, not '" + live + "'");
        }
        if (live != null && offsetText == null) {
            throw StrandException.badRequest("live reads need an offset");
        }
        boolean now = "now".equals(offsetText);
        DsOffset offset = offsetText == null || now ? DsOffset.START : DsOffset.parse(offsetText);
        long from = now ? streams.head(s) + 1 : offset.nextSeq();
        long skip = offset.sub(); // bytes into entry `from` (byte streams only)
        if (skip != 0 && s.json()) {
            throw StrandException.badRequest("offset " + offset + ": a JSON stream's offsets end in _0000000000000000"
                    + " (its entries are whole messages)");
        }
        if (live == null) {
            catchUp(req, res, s, from, skip, now);
        } else if (live.equals("long-poll")) {
            longPoll(req, res, s, from, skip);
        } else {
            sse(req, res, s, from, skip);
        }
    }

    private void catchUp(ServerRequest req, ServerResponse res, DsStream s, long from, long skip, boolean now) {
        boolean closed = s.closed;
        if (now) {
            res.header(HeaderNames.CONTENT_TYPE, s.contentType);
            res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(from - 1).toString());
            res.header(DsHeaders.UP_TO_DATE, "true");
            if (closed) {
                res.header(DsHeaders.CLOSED, "true");
            }
            res.header(HeaderNames.CACHE_CONTROL, "no-store");
            res.status(Status.OK_200).send(s.json() ? "[]".getBytes(StandardCharsets.UTF_8) : new byte[0]);
            return;
        }
        DsEntries.Chunk c = DsEntries.read(logs, s, from, skip);
        String etag = "\"" + s.logName + ":" + (from - 1) + (skip > 0 ? "+" + skip : "") + ":" + c.lastSeq()
                + (closed && c.upToDate() ? ":c" : "") + "\"";
        res.header(HeaderNames.ETAG, etag);
        chunkHeaders(res, s, c, closed);
        res.header(HeaderNames.CACHE_CONTROL, "private, max-age=60, stale-while-revalidate=300");
        String match = DsRequests.header(req, HeaderNames.IF_NONE_MATCH);
        if (etag.equals(match)) {
            res.status(Status.NOT_MODIFIED_304).send();
            return;
        }
        res.status(Status.OK_200).send(c.body());
    }

    private static void chunkHeaders(ServerResponse res, DsStream s, DsEntries.Chunk c, boolean closedBefore) {
        res.header(HeaderNames.CONTENT_TYPE, s.contentType);
        res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(c.lastSeq()).toString());
        if (c.upToDate()) {
            res.header(DsHeaders.UP_TO_DATE, "true");
            if (closedBefore) {
                res.header(DsHeaders.CLOSED, "true");
            }
        }
    }

    private void longPoll(ServerRequest req, ServerResponse res, DsStream s, long from, long skip) {
        String cursor = cursor(req.query().contains("cursor") ? req.query().get("cursor") : null);
        long deadline = System.currentTimeMillis() + longPollMillis;
        try (LogWatch watch = logs.watch(s.ws, s.logName)) {
            while (true) {
                boolean closed = s.closed;
                DsEntries.Chunk c = DsEntries.read(logs, s, from, skip);
                if (c.entries() > 0) {
                    chunkHeaders(res, s, c, closed);
                    res.header(DsHeaders.CURSOR, cursor);
                    res.header(HeaderNames.CACHE_CONTROL, "private, max-age=60, stale-while-revalidate=300");
                    res.status(Status.OK_200).send(c.body());
                    return;
                }
                long left = deadline - System.currentTimeMillis();
                if (closed || left <= 0 || streams.gone(s)) {
                    res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(c.lastSeq()).toString());
                    res.header(DsHeaders.UP_TO_DATE, "true");
                    res.header(DsHeaders.CURSOR, cursor);
                    if (closed) {
                        res.header(DsHeaders.CLOSED, "true");
                    }
                    res.header(HeaderNames.CACHE_CONTROL, "no-store");
                    res.status(Status.NO_CONTENT_204).send();
                    return;
                }
                watch.awaitBeyond(from - 1, Math.min(left, WAIT_SLICE_MS));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StrandException.stopping();
        }
    }

    private void sse(ServerRequest req, ServerResponse res, DsStream s, long from, long skip) {
        String cursor = cursor(req.query().contains("cursor") ? req.query().get("cursor") : null);
        // the first read before the stream starts: an offset that is gone or refused is an error answer
        boolean closedFirst = s.closed;
        DsEntries.Chunk first = DsEntries.read(logs, s, from, skip);
        res.header(HeaderNames.CONTENT_TYPE, "text/event-stream");
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        boolean base64 = !s.textual();
        if (base64) {
            res.header(DsHeaders.SSE_ENCODING, "base64");
        }
        res.status(Status.OK_200);
        long end = System.currentTimeMillis() + SSE_CONNECTION_MS;
        boolean toldUpToDate = false;
        try (LogWatch watch = logs.watch(s.ws, s.logName); OutputStream out = res.outputStream()) {
            while (true) {
                boolean closed = first != null ? closedFirst : s.closed;
                DsEntries.Chunk c = first != null ? first : DsEntries.read(logs, s, from);
                first = null;
                boolean finished = closed && c.upToDate();
                if (c.entries() > 0) {
                    event(out, "data", base64 ? Base64.getEncoder().encodeToString(c.body())
                            : new String(c.body(), StandardCharsets.UTF_8));
                    from = c.lastSeq() + 1;
                }
                if (c.entries() > 0 || finished || !toldUpToDate && c.upToDate()) {
                    event(out, "control", control(c, cursor, finished));
                    out.flush();
                    toldUpToDate |= c.upToDate();
                }
                if (finished || streams.gone(s) || System.currentTimeMillis() >= end) {
                    return;
                }
                if (c.upToDate()) {
                    watch.awaitBeyond(from - 1, WAIT_SLICE_MS);
                }
            }
        } catch (IOException | UncheckedIOException | io.helidon.webserver.ServerConnectionException e) {
            // the client went away (Helidon reports a write to a closed connection as the last)
        } catch (StrandException e) {
            // retention trimmed past this reader while it was connected: the connection ends without a
            // control event, and the reconnect from its last offset gets the 410
            if (e.code() != io.strand.core.ErrorCode.GONE) {
                throw e;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String control(DsEntries.Chunk c, String cursor, boolean closed) {
        StringBuilder sb = new StringBuilder("{\"streamNextOffset\":\"").append(DsOffset.after(c.lastSeq())).append('"');
        if (closed) {
            sb.append(",\"streamClosed\":true");
        } else {
            sb.append(",\"streamCursor\":\"").append(cursor).append('"');
        }
        if (c.upToDate()) {
            sb.append(",\"upToDate\":true");
        }
        return sb.append('}').toString();
    }

    /** One SSE event; every line of the payload (split on CRLF, LF or CR) gets its own {@code data:}, so payloads cannot inject events. */
    private static void event(OutputStream out, String type, String payload) throws IOException {
        StringBuilder sb = new StringBuilder(payload.length() + 32).append("event: ").append(type).append('\n');
        for (String line : payload.split("\r\n|\r|\n", -1)) {
            sb.append("data:").append(line).append('\n');
        }
        sb.append('\n');
        out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** The protocol's cursor: 20 s intervals since its epoch, moved past a client's cursor that is not behind. */
    static String cursor(String client) {
        long now = (System.currentTimeMillis() - CURSOR_EPOCH_MS) / CURSOR_INTERVAL_MS;
        if (client != null && client.matches("\\d{1,18}")) {
            long c = Long.parseLong(client);
            if (c >= now) {
                return Long.toString(c + 1 + ThreadLocalRandom.current().nextInt(180));
            }
        }
        return Long.toString(now);
    }
}

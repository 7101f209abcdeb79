package io.strand.app.ds;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.auth.Scope;
import io.strand.app.http.HttpIo;
import io.strand.core.Agent;
import io.strand.core.ErrorCode;
import io.strand.core.FailPoints;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.LogInfo;
import io.strand.logtier.LogStore;
import io.strand.logtier.LogWatch;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The Durable Streams protocol (SPEC §14) at {@code /ds/{ws}/{path…}} over Strand logs: PUT
 * creates (or forks), POST appends or closes, GET reads (catch-up, long-poll, SSE), HEAD describes,
 * DELETE removes. Each stream's changes run one at a time under its lock; reads take no lock and
 * see the committed head. Stateless apart from the registry it is given; runs on Helidon's
 * request threads (virtual), so long-polls and SSE block their own thread only.
 */
public final class DsHttp implements Handler {
    /** Cursor epoch and interval of the protocol's CDN-collapsing cursor. */
    private static final long CURSOR_EPOCH_MS = Instant.parse("2024-10-09T00:00:00Z").toEpochMilli();
    private static final long CURSOR_INTERVAL_MS = 20_000;
    /** An SSE connection ends after this long; clients reconnect from their last offset. */
    private static final long SSE_CONNECTION_MS = 60_000;
    /** Longest single wait for the head: closure and deletes are noticed within this. */
    private static final long WAIT_SLICE_MS = 100;
    /** Bodies above the limit but below this are read and discarded before the 413, so clients see the answer. */
    public static final long DRAIN_LIMIT = 64L << 20;
    private static final Pattern DECIMAL = Pattern.compile("0|[1-9][0-9]{0,15}");
    private static final long MAX_SAFE = (1L << 53) - 1;
    private static final int BATCH_ENTRIES = 1000;
    /** {@code _log/{name}}: native log {@code name}, read-only, as a JSON stream. */
    private static final String NATIVE_PREFIX = "_log/";
    private static final long BATCH_BYTES = 3L << 20;

    private final LogStore logs;
    private final DsRegistry registry;
    private final long maxBodyBytes;
    private final long longPollMillis;
    private final DsSubscriptions subscriptions;
    /** Expired streams are deleted within about this long even when no request touches them. */
    private static final long SWEEP_MILLIS = 1000;
    private final Agent sweeper;

    public DsHttp(LogStore logs, DsRegistry registry, long maxBodyBytes, Duration longPollTimeout) {
        this.logs = logs;
        this.registry = registry;
        this.maxBodyBytes = maxBodyBytes;
        this.longPollMillis = longPollTimeout.toMillis();
        this.subscriptions = new DsSubscriptions(this::tailOffset, this::appendWake);
        this.sweeper = Agent.start("ds-expiry", Duration.ofMillis(SWEEP_MILLIS), this::sweepExpired);
    }

    /** Stops the expiry sweeper and the subscriptions' timers and webhook client. */
    public void close() {
        sweeper.close();
        subscriptions.close();
    }

    /**
     * Deletes streams past their TTL or Expires-At that nobody touched since (requests expire the
     * ones they touch themselves); one pass of the {@code ds-expiry} agent. A stream that cannot be
     * deleted is skipped, the others still are; the pass then throws, so the agent counts and
     * reports it, and the stream is tried again next pass.
     */
    private void sweepExpired() {
        long now = System.currentTimeMillis();
        RuntimeException failed = null;
        String failedStream = null;
        int failures = 0;
        for (DsStream s : registry.all()) {
            try {
                if (!s.softDeleted && s.expired(now)) {
                    expire(s);
                }
            } catch (RuntimeException e) {
                failures++;
                if (failed == null) {
                    failed = e;
                    failedStream = s.ws + "/" + s.path;
                }
            }
        }
        if (failed != null) {
            throw new IllegalStateException("cannot delete " + failures + " expired stream(s), the first "
                    + failedStream + ": " + failed.getMessage(), failed);
        }
    }

    /** A stream's tail offset, the start offset when it does not exist (subscriptions compare acks with it). */
    private String tailOffset(String ws, String path) {
        DsStream s = registry.find(ws, path);
        if (s == null || s.softDeleted || s.expired(System.currentTimeMillis())) {
            return DsOffset.START.toString();
        }
        return DsOffset.after(head(s)).toString();
    }

    /** Appends a pull-wake event to a wake stream; false when it does not exist or is closed. */
    private boolean appendWake(String ws, String path, byte[] json) {
        DsStream s = registry.find(ws, path);
        if (s == null || s.softDeleted) {
            return false;
        }
        s.lock.lock();
        try {
            if (s.closed || registry.find(ws, path) != s) {
                return false;
            }
            appendAll(s, DsEntries.encode(s.json(), json, false), head(s), null);
            return true;
        } finally {
            s.lock.unlock();
        }
    }

    /** A request's workspace and decoded stream path. */
    record Target(String ws, String path) {
    }

    @Override
    public void handle(ServerRequest req, ServerResponse res) {
        try {
            if (control(req, res)) {
                return;
            }
            Target t = target(req.path().rawPath());
            Method m = req.prologue().method();
            if (m == Method.GET) {
                HttpIo.require(req, t.ws, Scope.READ);
                get(req, res, t);
            } else if (m == Method.HEAD) {
                HttpIo.require(req, t.ws, Scope.READ);
                head(res, t);
            } else if (t.path.startsWith(NATIVE_PREFIX)) {
                throw new StrandException(ErrorCode.METHOD_NOT_ALLOWED, "native logs are read-only through Durable Streams; "
                        + "append over /v1 or the socket");
            } else if (m == Method.PUT) {
                HttpIo.require(req, t.ws, Scope.RW);
                put(req, res, t);
            } else if (m == Method.POST) {
                HttpIo.require(req, t.ws, Scope.RW);
                post(req, res, t);
            } else if (m == Method.DELETE) {
                HttpIo.require(req, t.ws, Scope.RW);
                delete(res, t);
            } else {
                throw new StrandException(ErrorCode.METHOD_NOT_ALLOWED, "Durable Streams has no " + m.text());
            }
        } catch (RuntimeException e) {
            if (!res.isSent()) {
                HttpIo.error(res, e);
            }
        }
    }

    // ---------------------------------------------------------------- reserved control APIs (__ds)

    /**
     * Serves {@code /ds/{ws}/{root…}/__ds/…} (subscriptions and their JWKS); false for any other
     * path. Streams a subscription names are relative to {@code root}.
     */
    private boolean control(ServerRequest req, ServerResponse res) {
        String raw = req.path().rawPath();
        String rest = raw.substring("/ds/".length());
        int slash = rest.indexOf('/');
        if (slash <= 0) {
            return false;
        }
        String[] segs = rest.substring(slash + 1).split("/", -1);
        int at = Arrays.asList(segs).indexOf("__ds");
        if (at < 0) {
            return false;
        }
        String ws = Names.workspace(decode(rest.substring(0, slash)));
        String rawRoot = String.join("/", Arrays.copyOfRange(segs, 0, at));
        String root = at == 0 ? "" : streamPath(rawRoot);
        List<String> tail = Arrays.asList(Arrays.copyOfRange(segs, at + 1, segs.length));
        Method m = req.prologue().method();
        String base = "http://" + req.headers().first(HeaderNames.HOST).orElse("localhost") + "/ds/" + rest.substring(0, slash)
                + (rawRoot.isEmpty() ? "" : "/" + rawRoot);
        try {
            if (tail.equals(List.of("jwks.json")) && m == Method.GET) {
                res.header(HeaderNames.CONTENT_TYPE, "application/jwk-set+json");
                res.header(HeaderNames.CACHE_CONTROL, "public, max-age=300");
                res.status(Status.OK_200).send(io.strand.core.Json.bytes(subscriptions.jwks()));
                return true;
            }
            if (tail.size() < 2 || !tail.getFirst().equals("subscriptions") || tail.get(1).isEmpty()) {
                throw new DsFailure(404, "SUBSCRIPTION_NOT_FOUND", "Durable Streams control route not found");
            }
            String id = decode(tail.get(1));
            List<String> action = tail.subList(2, tail.size());
            if (action.isEmpty() && m == Method.PUT) {
                HttpIo.require(req, ws, Scope.RW);
                var created = subscriptions.createOrConfirm(ws, root, id, jsonBody(req), base,
                        (w, r) -> registry.all().stream().filter(s -> s.ws.equals(w) && !s.softDeleted)
                                .map(s -> r.isEmpty() ? s.path : s.path.startsWith(r + "/") ? s.path.substring(r.length() + 1) : null)
                                .filter(Objects::nonNull).toList());
                HttpIo.send(res, created.getKey() ? 201 : 200, io.strand.core.Json.bytes(created.getValue()));
            } else if (action.isEmpty() && m == Method.GET) {
                HttpIo.require(req, ws, Scope.READ);
                HttpIo.send(res, 200, io.strand.core.Json.bytes(subscriptions.get(ws, root, id)));
            } else if (action.isEmpty() && m == Method.DELETE) {
                HttpIo.require(req, ws, Scope.RW);
                subscriptions.delete(ws, root, id);
                res.status(Status.NO_CONTENT_204).send();
            } else if (action.equals(List.of("streams")) && m == Method.POST) {
                HttpIo.require(req, ws, Scope.RW);
                subscriptions.addStreams(ws, root, id, jsonBody(req));
                res.status(Status.NO_CONTENT_204).send();
            } else if (action.size() > 1 && action.getFirst().equals("streams") && m == Method.DELETE) {
                HttpIo.require(req, ws, Scope.RW);
                subscriptions.removeStream(ws, root, id, decode(String.join("/", action.subList(1, action.size()))));
                res.status(Status.NO_CONTENT_204).send();
            } else if (action.equals(List.of("claim")) && m == Method.POST) {
                HttpIo.require(req, ws, Scope.RW);
                HttpIo.send(res, 200, io.strand.core.Json.bytes(subscriptions.claim(ws, root, id, jsonBody(req))));
            } else if (action.equals(List.of("callback")) && m == Method.POST) {
                HttpIo.send(res, 200, io.strand.core.Json.bytes(subscriptions.callback(ws, root, id, wakeToken(req), jsonBody(req))));
            } else if (action.equals(List.of("ack")) && m == Method.POST) {
                HttpIo.send(res, 200, io.strand.core.Json.bytes(subscriptions.ack(ws, root, id, wakeToken(req), jsonBody(req))));
            } else if (action.equals(List.of("release")) && m == Method.POST) {
                subscriptions.release(ws, root, id, wakeToken(req), jsonBody(req));
                res.status(Status.NO_CONTENT_204).send();
            } else {
                throw new DsFailure(404, "SUBSCRIPTION_NOT_FOUND", "Durable Streams control route not found");
            }
        } catch (DsFailure f) {
            HttpIo.send(res, f.status, io.strand.core.Json.bytes(f.body()));
        }
        return true;
    }

    /** The wake's callback token: callbacks authenticate with it instead of a Strand token. */
    private static String wakeToken(ServerRequest req) {
        String v = header(req, HeaderNames.AUTHORIZATION);
        if (v == null || !v.startsWith("Bearer ")) {
            throw new DsFailure(401, "TOKEN_INVALID", "Missing or malformed Authorization header");
        }
        return v.substring(7);
    }

    private com.fasterxml.jackson.databind.JsonNode jsonBody(ServerRequest req) {
        byte[] b = body(req);
        if (b.length == 0) {
            return io.strand.core.Json.MAPPER.createObjectNode();
        }
        try {
            return io.strand.core.Json.parse(b);
        } catch (RuntimeException e) {
            throw new DsFailure(400, "INVALID_REQUEST", "Invalid JSON body");
        }
    }

    // ---------------------------------------------------------------- paths

    /** {@code /ds/{ws}/{seg}/…}: segments decoded once; empty, {@code .} and {@code ..} segments refused. */
    static Target target(String rawPath) {
        String rest = rawPath.substring("/ds/".length());
        int slash = rest.indexOf('/');
        if (slash <= 0 || slash == rest.length() - 1) {
            throw StrandException.notFound("a Durable Streams URL is /ds/{workspace}/{stream path}");
        }
        String ws = Names.workspace(decode(rest.substring(0, slash)));
        return new Target(ws, streamPath(rest.substring(slash + 1)));
    }

    /** A raw, root-relative stream path, decoded and checked. */
    static String streamPath(String raw) {
        StringBuilder path = new StringBuilder();
        for (String seg : raw.split("/", -1)) {
            String s = decode(seg);
            if (s.isEmpty() || s.equals(".") || s.equals("..") || s.indexOf('\0') >= 0 || s.indexOf('/') >= 0) {
                throw new StrandException(ErrorCode.BAD_PATH, "invalid stream path '" + raw
                        + "': segments cannot be empty, '.', '..', or contain '/' or NUL");
            }
            if (s.equals("__ds")) {
                throw StrandException.notFound("'__ds' is reserved for protocol APIs this server does not offer");
            }
            if (!path.isEmpty()) {
                path.append('/');
            }
            path.append(s);
        }
        return path.toString();
    }

    private static String decode(String seg) {
        try {
            return java.net.URLDecoder.decode(seg.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new StrandException(ErrorCode.BAD_PATH, "bad percent-encoding in '" + seg + "'");
        }
    }

    /** A stream that may be used now: 404 when absent or expired (expiring it), 410 when deleted but kept for its forks. */
    private DsStream live(Target t) {
        if (t.path.startsWith(NATIVE_PREFIX)) {
            String log = t.path.substring(NATIVE_PREFIX.length());
            if (!Names.isObject(log) || logs.info(t.ws, log).isEmpty()) {
                throw StrandException.notFound("log '" + log + "' does not exist in workspace '" + t.ws + "'");
            }
            return DsStream.nativeView(t.ws, t.path, log);
        }
        DsStream s = registry.find(t.ws, t.path);
        if (s != null && s.expired(System.currentTimeMillis())) {
            expire(s);
            s = registry.find(t.ws, t.path);
        }
        if (s == null || s.softDeleted && s.expired(System.currentTimeMillis())) {
            throw StrandException.notFound("stream '" + t.path + "' does not exist");
        }
        if (s.softDeleted) {
            throw new StrandException(ErrorCode.GONE, "stream '" + t.path + "' was deleted; forks still read it");
        }
        return s;
    }

    private void expire(DsStream s) {
        synchronized (registry.workspaceLock(s.ws)) {
            if (registry.find(s.ws, s.path) == s && !s.softDeleted) {
                remove(s);
            }
        }
    }

    // ---------------------------------------------------------------- PUT

    private void put(ServerRequest req, ServerResponse res, Target t) {
        String ct = header(req, HeaderNames.CONTENT_TYPE);
        Long ttl = ttl(req);
        Instant expiresAt = expiresAt(req);
        if (ttl != null && expiresAt != null) {
            throw StrandException.badRequest("send Stream-TTL or Stream-Expires-At, not both");
        }
        boolean close = closedFlag(req);
        String forkFrom = header(req, DsHeaders.FORKED_FROM);
        String forkOffset = header(req, DsHeaders.FORK_OFFSET);
        String forkSub = header(req, DsHeaders.FORK_SUB_OFFSET);
        if (forkFrom == null && (forkOffset != null || forkSub != null)) {
            throw StrandException.badRequest("Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From");
        }
        long sub = 0;
        if (forkSub != null) {
            if (!DECIMAL.matcher(forkSub).matches()) {
                throw StrandException.badRequest("Stream-Fork-Sub-Offset must be a non-negative integer");
            }
            sub = Long.parseLong(forkSub);
            if (sub > 0 && forkOffset == null) {
                throw StrandException.badRequest("a Stream-Fork-Sub-Offset above 0 needs Stream-Fork-Offset");
            }
        }
        DsOffset forkAt = forkOffset == null ? null : DsOffset.parse(forkOffset);
        byte[] body = body(req);
        synchronized (registry.workspaceLock(t.ws)) {
            DsStream existing = registry.find(t.ws, t.path);
            if (existing != null && existing.expired(System.currentTimeMillis()) && !existing.softDeleted) {
                remove(existing);
                existing = null;
            }
            if (existing != null) {
                if (existing.softDeleted) {
                    throw new StrandException(ErrorCode.STREAM_CONFLICT, "stream '" + t.path + "' was deleted and is kept for its forks");
                }
                String point = forkFrom == null ? null : forkPoint(forkAt, sub);
                boolean inherited = forkFrom != null && ttl == null && expiresAt == null; // a fork's expiry may come from its source
                boolean same = (ct == null || Objects.equals(DsStream.normalize(ct), DsStream.normalize(existing.contentType)))
                        && (inherited || Objects.equals(ttl, existing.ttlSeconds) && Objects.equals(expiresAt, existing.expiresAt))
                        && close == existing.closed
                        && Objects.equals(forkFrom == null ? null : sourcePath(t.ws, forkFrom), existing.forkedFrom)
                        && (forkFrom == null || forkAt == null || Objects.equals(point, existing.forkPoint));
                if (!same) {
                    throw new StrandException(ErrorCode.STREAM_CONFLICT, "stream '" + t.path + "' exists with a different configuration");
                }
                describe(res, existing, tailOf(existing));
                res.status(Status.OK_200).send();
                return;
            }
            DsStream s = forkFrom == null
                    ? new DsStream(t.ws, t.path, DsRegistry.newLogName(), System.currentTimeMillis(),
                    ct == null ? "application/octet-stream" : ct, ttl, expiresAt, null)
                    : fork(t, ct, ttl, expiresAt, sourcePath(t.ws, forkFrom), forkAt, sub);
            long head;
            try { // the row is the commit point: a crash before it leaves only an unnamed ds-… log
                List<byte[]> entries = DsEntries.encode(s.json(), body, true);
                checkSizes(entries);
                head = appendAll(s, entries, head(s), null).head;
                s.closed = close;
                registry.add(s);
            } catch (RuntimeException e) {
                logs.delete(s.ws, s.logName);
                throw e;
            }
            if (s.forkedFrom != null) {
                DsStream src = registry.find(s.ws, s.forkedFrom);
                src.lock.lock();
                try {
                    src.forks++;
                    registry.save(src);
                } finally {
                    src.lock.unlock();
                }
            }
            describe(res, s, head);
            res.header(HeaderNames.LOCATION, location(req));
            res.status(Status.CREATED_201).send();
        }
        subscriptions.onAppend(t.ws, t.path);
    }

    private static String forkPoint(DsOffset at, long sub) {
        return (at == null ? "head" : at.toString()) + "/" + sub;
    }

    /** The source path a {@code Stream-Forked-From} names: root-relative, or a full {@code /ds/{ws}/…} path. */
    private static String sourcePath(String ws, String header) {
        String v = header;
        int scheme = v.indexOf("://");
        if (scheme > 0) {
            int slash = v.indexOf('/', scheme + 3);
            v = slash < 0 ? "/" : v.substring(slash);
        }
        String prefix = "/ds/" + ws + "/";
        if (v.startsWith(prefix)) {
            v = v.substring(prefix.length());
        }
        while (v.startsWith("/")) {
            v = v.substring(1);
        }
        return streamPath(v);
    }

    /** A new fork of {@code srcPath}: a log holding copies of the source's entries up to the fork point. */
    private DsStream fork(Target t, String ct, Long ttl, Instant expiresAt, String srcPath, DsOffset at, long sub) {
        DsStream src = registry.find(t.ws, srcPath);
        if (src == null || src.expired(System.currentTimeMillis()) && !src.softDeleted) {
            if (src != null) {
                remove(src);
            }
            throw StrandException.notFound("fork source '" + srcPath + "' does not exist");
        }
        if (src.softDeleted) {
            throw new StrandException(ErrorCode.STREAM_CONFLICT, "fork source '" + srcPath + "' was deleted");
        }
        if (ct != null && !Objects.equals(DsStream.normalize(ct), DsStream.normalize(src.contentType))) {
            throw new StrandException(ErrorCode.STREAM_CONFLICT, "a fork keeps its source's content type " + src.contentType);
        }
        long srcHead = head(src);
        long upTo = at == null ? srcHead : at.seq();
        if (upTo > srcHead || at != null && at.sub() != 0) {
            throw StrandException.badRequest("fork offset " + at + " is beyond the source's tail");
        }
        boolean inheritExpiry = ttl == null && expiresAt == null;
        DsStream fork = new DsStream(t.ws, t.path, DsRegistry.newLogName(), System.currentTimeMillis(),
                ct == null ? src.contentType : ct, inheritExpiry ? src.ttlSeconds : ttl,
                inheritExpiry ? src.expiresAt : expiresAt, srcPath);
        fork.forkPoint = forkPoint(at, sub);
        List<byte[]> partial = sub > 0 ? subOffsetEntries(src, upTo, sub) : List.of(); // validated before anything is written
        try {
            long from = 1;
            while (from <= upTo) { // copy in batches: the source's cold segments stream through, never all in memory
                List<byte[]> batch = new ArrayList<>();
                long[] last = {from - 1};
                logs.readChunk(src.ws, src.logName, from, BATCH_ENTRIES, BATCH_BYTES, (seq, ts, key, data, offset, length) -> {
                    if (seq <= upTo) {
                        batch.add(Arrays.copyOfRange(data, offset, offset + length));
                        last[0] = seq;
                    }
                });
                if (batch.isEmpty()) {
                    throw new StrandException(ErrorCode.UNAVAILABLE, "fork source '" + srcPath + "' ended at seq " + last[0]
                            + " before the fork offset " + upTo);
                }
                appendAll(fork, batch, 0, null);
                from = last[0] + 1;
            }
            appendAll(fork, partial, 0, null);
        } catch (RuntimeException e) {
            logs.delete(fork.ws, fork.logName);
            throw e;
        }
        return fork;
    }

    /** The part of the source past {@code upTo} a sub-offset inherits: {@code sub} bytes, or {@code sub} JSON messages. */
    private List<byte[]> subOffsetEntries(DsStream src, long upTo, long sub) {
        List<byte[]> after = new ArrayList<>();
        logs.readChunk(src.ws, src.logName, upTo + 1, src.json() ? (int) Math.min(sub, BATCH_ENTRIES) : 1, Long.MAX_VALUE,
                (seq, ts, key, data, offset, length) -> after.add(Arrays.copyOfRange(data, offset, offset + length)));
        if (src.json()) {
            if (after.size() < sub) {
                throw StrandException.badRequest("Stream-Fork-Sub-Offset " + sub + " overshoots the messages after the fork offset");
            }
            return after;
        }
        if (after.isEmpty()) {
            throw StrandException.badRequest("Stream-Fork-Sub-Offset " + sub + " overshoots the source");
        }
        byte[] entry = after.getFirst();
        byte[] raw = Base64.getDecoder().decode(Arrays.copyOfRange(entry, 1, entry.length - 1));
        if (sub > raw.length) {
            throw StrandException.badRequest("Stream-Fork-Sub-Offset " + sub + " overshoots the " + raw.length + "-byte append");
        }
        return DsEntries.encode(false, Arrays.copyOf(raw, (int) sub), false);
    }

    // ---------------------------------------------------------------- POST

    private void post(ServerRequest req, ServerResponse res, Target t) {
        DsStream s = live(t);
        s.touch();
        String ct = header(req, HeaderNames.CONTENT_TYPE);
        boolean close = closedFlag(req);
        Producer producer = producer(req);
        String streamSeq = header(req, DsHeaders.SEQ);
        byte[] body = body(req);
        s.lock.lock();
        try {
            if (registry.find(t.ws, t.path) != s) {
                throw StrandException.notFound("stream '" + t.path + "' does not exist");
            }
            if (s.closed) {
                if (producer != null && producer.key().equals(s.closedBy)) {
                    producerHeaders(res, producer.epoch, producer.seq);
                    res.header(DsHeaders.CLOSED, "true");
                    res.status(Status.NO_CONTENT_204).send();
                    return;
                }
                res.header(DsHeaders.CLOSED, "true");
                if (producer == null && close && body.length == 0) { // closing is idempotent
                    res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(head(s)).toString());
                    res.status(Status.NO_CONTENT_204).send();
                    return;
                }
                res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(head(s)).toString());
                throw new StrandException(ErrorCode.STREAM_CLOSED, "stream '" + t.path + "' is closed");
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
            if (producer != null && !acceptProducer(res, s, producer)) {
                return;
            }
            if (streamSeq != null && s.lastStreamSeq != null && streamSeq.compareTo(s.lastStreamSeq) <= 0) {
                throw new StrandException(ErrorCode.SEQ_MISMATCH, "Stream-Seq '" + streamSeq
                        + "' is not above the last one, '" + s.lastStreamSeq + "'");
            }
            List<byte[]> entries = DsEntries.encode(s.json(), body, false);
            checkSizes(entries);
            Appended appended = appendAll(s, entries, head(s), producer);
            FailPoints.hit("ds.afterAppend"); // the log has the append, the stream's row not yet its producer state
            long head = appended.head;
            if (appended.replayed) { // acknowledged before a crash lost the row's producer state: a duplicate
                s.producers.put(producer.id, new long[] {producer.epoch, producer.seq});
                registry.save(s);
                producerHeaders(res, producer.epoch, producer.seq);
                res.status(Status.NO_CONTENT_204).send();
                return;
            }
            boolean changed = false;
            if (producer != null) {
                s.producers.put(producer.id, new long[] {producer.epoch, producer.seq});
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
                producerHeaders(res, producer.epoch, producer.seq);
                res.status(body.length > 0 ? Status.OK_200 : Status.NO_CONTENT_204).send();
            } else {
                res.status(Status.NO_CONTENT_204).send();
            }
        } finally {
            s.lock.unlock();
        }
        if (close) {
            wake(s);
        }
        if (body.length > 0) {
            subscriptions.onAppend(t.ws, t.path);
        }
    }

    /** DS idempotent-producer headers: all three or none. */
    record Producer(String id, long epoch, long seq) {
        String key() {
            return id + ' ' + epoch + ' ' + seq;
        }
    }

    private static Producer producer(ServerRequest req) {
        String id = header(req, DsHeaders.PRODUCER_ID);
        String epoch = header(req, DsHeaders.PRODUCER_EPOCH);
        String seq = header(req, DsHeaders.PRODUCER_SEQ);
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
        if (!DECIMAL.matcher(v).matches() || Long.parseLong(v) > MAX_SAFE) {
            throw StrandException.badRequest(name + " must be an integer from 0 to 2^53-1, not '" + v + "'");
        }
        return Long.parseLong(v);
    }

    /** Checks a producer append against its state; false when it was answered (a duplicate). Caller holds the lock. */
    private static boolean acceptProducer(ServerResponse res, DsStream s, Producer p) {
        long[] state = s.producers.get(p.id);
        if (state == null) {
            if (p.seq != 0) {
                gap(res, 0, p.seq);
            }
            return true;
        }
        if (p.epoch < state[0]) {
            res.header(DsHeaders.PRODUCER_EPOCH, Long.toString(state[0]));
            throw new StrandException(ErrorCode.PRODUCER_EPOCH_STALE, "Producer-Epoch " + p.epoch
                    + " is below the current epoch " + state[0]);
        }
        if (p.epoch > state[0]) {
            if (p.seq != 0) {
                throw StrandException.badRequest("a new Producer-Epoch starts at Producer-Seq 0");
            }
            return true;
        }
        if (p.seq <= state[1]) {
            producerHeaders(res, state[0], state[1]);
            res.status(Status.NO_CONTENT_204).send();
            return false;
        }
        if (p.seq != state[1] + 1) {
            gap(res, state[1] + 1, p.seq);
        }
        return true;
    }

    private static void gap(ServerResponse res, long expected, long received) {
        res.header(DsHeaders.PRODUCER_EXPECTED_SEQ, Long.toString(expected));
        res.header(DsHeaders.PRODUCER_RECEIVED_SEQ, Long.toString(received));
        throw new StrandException(ErrorCode.PRODUCER_SEQ_GAP, "Producer-Seq " + received + " skips ahead; expected " + expected);
    }

    private static void producerHeaders(ServerResponse res, long epoch, long seq) {
        res.header(DsHeaders.PRODUCER_EPOCH, Long.toString(epoch));
        res.header(DsHeaders.PRODUCER_SEQ, Long.toString(seq));
    }

    private void checkSizes(List<byte[]> entries) {
        int max = logs.config().maxEntryBytes();
        for (byte[] e : entries) {
            if (e.length > max) {
                throw StrandException.tooLarge("a JSON message is " + e.length + " bytes; the limit is " + max);
            }
        }
    }

    /** The head after an append, and whether the log had already applied it (a producer retry). */
    record Appended(long head, boolean replayed) {
    }

    /**
     * Appends in batches within the log's limits. A producer append's last batch carries the
     * native producer pair ({@code ds <id> <epoch>}, seq): the log stores it with the batch, so
     * a retry of an append acknowledged just before a crash (which the stream's row may not
     * show yet) is recognised by the log as a duplicate instead of being appended twice.
     */
    private Appended appendAll(DsStream s, List<byte[]> entries, long head, Producer producer) {
        int i = 0;
        boolean replayed = false;
        while (i < entries.size()) {
            List<byte[]> batch = new ArrayList<>();
            long bytes = 0;
            while (i < entries.size() && batch.size() < BATCH_ENTRIES
                    && (batch.isEmpty() || bytes + entries.get(i).length <= BATCH_BYTES)) {
                bytes += entries.get(i).length;
                batch.add(entries.get(i++));
            }
            List<String> keys = new ArrayList<>(batch.size());
            batch.forEach(b -> keys.add(null));
            boolean last = i == entries.size();
            AppendRequest req = last && producer != null
                    ? new AppendRequest(batch, keys, null, "ds " + producer.id + " " + producer.epoch, producer.seq)
                    : new AppendRequest(batch, keys, null, null, null);
            AppendResult r = logs.append(s.ws, s.logName, req).join();
            head = Math.max(head, r.lastSeq());
            replayed = r.duplicate();
        }
        return new Appended(head, replayed);
    }

    // ---------------------------------------------------------------- DELETE / HEAD

    private void delete(ServerResponse res, Target t) {
        synchronized (registry.workspaceLock(t.ws)) {
            DsStream s = live(t);
            s.lock.lock();
            try {
                remove(s);
            } finally {
                s.lock.unlock();
            }
        }
        res.status(Status.NO_CONTENT_204).send();
    }

    /**
     * Deletes a stream, or only marks it deleted while forks still read it; a fork's delete
     * releases its source, collecting sources that were waiting for their last fork. Caller holds the
     * workspace's lock.
     */
    private void remove(DsStream s) {
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
            collect = src.forks == 0 && (src.softDeleted || src.expired(System.currentTimeMillis()));
            if (!collect) {
                registry.save(src);
            }
        } finally {
            src.lock.unlock();
        }
        if (collect) {
            remove(src);
        }
    }

    private void head(ServerResponse res, Target t) {
        DsStream s = live(t);
        describe(res, s, tailOf(s));
        res.header(HeaderNames.CACHE_CONTROL, "no-store");
        res.status(Status.OK_200).send();
    }

    /** Content type, tail offset, expiry and closure of a stream. */
    private static void describe(ServerResponse res, DsStream s, long head) {
        res.header(HeaderNames.CONTENT_TYPE, s.contentType);
        res.header(DsHeaders.NEXT_OFFSET, DsOffset.after(head).toString());
        if (s.ttlSeconds != null) {
            res.header(DsHeaders.TTL, Long.toString(s.ttlSeconds));
        }
        if (s.expiresAt != null) {
            res.header(DsHeaders.EXPIRES_AT, s.expiresAt.toString());
        }
        if (s.closed) {
            res.header(DsHeaders.CLOSED, "true");
        }
    }

    private long head(DsStream s) {
        return logs.info(s.ws, s.logName).map(LogInfo::head).orElse(0L);
    }

    /** The head, read after the closed flag so a closed stream's head is final. */
    private long tailOf(DsStream s) {
        return head(s);
    }

    // ---------------------------------------------------------------- GET

    private void get(ServerRequest req, ServerResponse res, Target t) {
        DsStream s = live(t);
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
        s.touch();
        long from = now ? head(s) + 1 : offset.nextSeq();
        if (live == null) {
            catchUp(req, res, s, from, now);
        } else if (live.equals("long-poll")) {
            longPoll(req, res, s, from);
        } else {
            sse(req, res, s, from);
        }
    }

    private void catchUp(ServerRequest req, ServerResponse res, DsStream s, long from, boolean now) {
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
        DsEntries.Chunk c = DsEntries.read(logs, s, from);
        String etag = "\"" + s.logName + ":" + (from - 1) + ":" + c.lastSeq() + (closed && c.upToDate() ? ":c" : "") + "\"";
        res.header(HeaderNames.ETAG, etag);
        chunkHeaders(res, s, c, closed);
        res.header(HeaderNames.CACHE_CONTROL, "private, max-age=60, stale-while-revalidate=300");
        String match = header(req, HeaderNames.IF_NONE_MATCH);
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

    private void longPoll(ServerRequest req, ServerResponse res, DsStream s, long from) {
        String cursor = cursor(req.query().contains("cursor") ? req.query().get("cursor") : null);
        long deadline = System.currentTimeMillis() + longPollMillis;
        try (LogWatch watch = logs.watch(s.ws, s.logName)) {
            while (true) {
                boolean closed = s.closed;
                DsEntries.Chunk c = DsEntries.read(logs, s, from);
                if (c.entries() > 0) {
                    chunkHeaders(res, s, c, closed);
                    res.header(DsHeaders.CURSOR, cursor);
                    res.header(HeaderNames.CACHE_CONTROL, "private, max-age=60, stale-while-revalidate=300");
                    res.status(Status.OK_200).send(c.body());
                    return;
                }
                long left = deadline - System.currentTimeMillis();
                if (closed || left <= 0 || gone(s)) {
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
            throw new StrandException(ErrorCode.UNAVAILABLE, "the server is stopping");
        }
    }

    private boolean gone(DsStream s) {
        if (s.nativeView) {
            return logs.info(s.ws, s.logName).isEmpty();
        }
        return registry.find(s.ws, s.path) != s || s.softDeleted;
    }

    private void sse(ServerRequest req, ServerResponse res, DsStream s, long from) {
        String cursor = cursor(req.query().contains("cursor") ? req.query().get("cursor") : null);
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
                boolean closed = s.closed;
                DsEntries.Chunk c = DsEntries.read(logs, s, from);
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
                if (finished || gone(s) || System.currentTimeMillis() >= end) {
                    return;
                }
                if (c.upToDate()) {
                    watch.awaitBeyond(from - 1, WAIT_SLICE_MS);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // the client went away
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

    /** Wakes long-polls and SSE loops following a stream (after closure or delete). */
    private void wake(DsStream s) {
        try (LogWatch w = logs.watch(s.ws, s.logName)) {
            w.wake();
        }
    }

    // ---------------------------------------------------------------- headers and bodies

    private static String header(ServerRequest req, HeaderName name) {
        return req.headers().first(name).orElse(null);
    }

    private static boolean closedFlag(ServerRequest req) {
        String v = header(req, DsHeaders.CLOSED);
        return v != null && v.trim().equalsIgnoreCase("true");
    }

    private static Long ttl(ServerRequest req) {
        String v = header(req, DsHeaders.TTL);
        if (v == null) {
            return null;
        }
        if (!DECIMAL.matcher(v).matches()) {
            throw StrandException.badRequest("Stream-TTL must be whole seconds without sign or leading zeros, not '" + v + "'");
        }
        return Long.parseLong(v);
    }

    private static Instant expiresAt(ServerRequest req) {
        String v = header(req, DsHeaders.EXPIRES_AT);
        if (v == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(v, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            throw StrandException.badRequest("Stream-Expires-At must be an RFC 3339 timestamp, not '" + v + "'");
        }
    }

    private static String location(ServerRequest req) {
        String host = req.headers().first(HeaderNames.HOST).orElse("localhost");
        return "http://" + host + req.path().rawPath();
    }

    /** The body, refused with 413 past the limit after reading it (up to a bound) so the client sees the answer. */
    private byte[] body(ServerRequest req) {
        if (!req.content().hasEntity()) {
            return new byte[0];
        }
        try (InputStream in = req.content().inputStream()) {
            byte[] b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBodyBytes + 1));
            if (b.length > maxBodyBytes) {
                long left = DRAIN_LIMIT;
                byte[] sink = new byte[64 * 1024];
                int n;
                while (left > 0 && (n = in.read(sink)) > 0) {
                    left -= n;
                }
                throw StrandException.tooLarge("request body exceeds the limit of " + maxBodyBytes + " bytes");
            }
            return b;
        } catch (IOException e) {
            throw StrandException.badRequest("cannot read the request body: " + e.getMessage());
        }
    }
}

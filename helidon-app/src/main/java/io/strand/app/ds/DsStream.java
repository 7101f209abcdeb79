package io.strand.app.ds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Mutable fields change only while {@link #lock} is held (every change of the stream, its append
 * included, is one turn under it); readers see the volatile ones without it. One Durable Streams
 * stream: its path, the Strand log holding its entries, and the protocol state the log does not
 * carry (content type, TTL, closure, producer epochs, Stream-Seq, forks).
 */
final class DsStream {
    final String ws;
    final String path;
    final String logName;
    final long createdMs;
    final ReentrantLock lock = new ReentrantLock();
    final String contentType;
    final Long ttlSeconds;
    final Instant expiresAt;
    /** Source stream path and the seq this fork inherited up to (entries 1..forkSeq are copies). */
    final String forkedFrom;
    /** The fork point as requested ({@code offset/subOffset}), compared by an idempotent re-create. */
    String forkPoint;
    volatile boolean closed;
    /** {@code id epoch seq} of the producer append that closed the stream, so its retry is a duplicate. */
    String closedBy;
    String lastStreamSeq;
    /** Producer-Id → {epoch, lastSeq}: DS producer state, apart from the log's native producer window. */
    final Map<String, long[]> producers = new LinkedHashMap<>();
    /** Live forks of this stream; a delete while positive only marks it deleted. */
    int forks;
    volatile boolean softDeleted;
    volatile long lastAccessMs;
    /** {@link #lastAccessMs} as the row on disk has it (see {@link DsRegistry#saveTouched}). */
    long savedAccessMs;
    /** True for the read-only view of a native log ({@code _log/{name}}): no row, never closed, never expires. */
    final boolean nativeView;

    DsStream(String ws, String path, String logName, long createdMs, String contentType, Long ttlSeconds,
             Instant expiresAt, String forkedFrom) {
        this(ws, path, logName, createdMs, contentType, ttlSeconds, expiresAt, forkedFrom, false);
    }

    /** The read-only DS view of native log {@code log}: its entries are JSON, so it reads as a JSON stream. */
    static DsStream nativeView(String ws, String path, String log) {
        return new DsStream(ws, path, log, 0, "application/json", null, null, null, true);
    }

    private DsStream(String ws, String path, String logName, long createdMs, String contentType, Long ttlSeconds,
             Instant expiresAt, String forkedFrom, boolean nativeView) {
        this.nativeView = nativeView;
        this.ws = ws;
        this.path = path;
        this.logName = logName;
        this.createdMs = createdMs;
        this.contentType = contentType;
        this.ttlSeconds = ttlSeconds;
        this.expiresAt = expiresAt;
        this.forkedFrom = forkedFrom;
        this.lastAccessMs = createdMs;
    }

    /** The media type without parameters, lower case: what content types are compared by. */
    static String normalize(String contentType) {
        if (contentType == null) {
            return null;
        }
        int semi = contentType.indexOf(';');
        return (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    }

    boolean json() {
        return "application/json".equals(normalize(contentType));
    }

    /** True for streams whose SSE data events are sent as text (JSON and {@code text/*}); the rest go base64. */
    boolean textual() {
        String n = normalize(contentType);
        return json() || n.startsWith("text/");
    }

    boolean expired(long nowMs) {
        if (expiresAt != null && nowMs >= expiresAt.toEpochMilli()) {
            return true;
        }
        return ttlSeconds != null && nowMs >= lastAccessMs + ttlSeconds * 1000;
    }

    void touch(long now) {
        lastAccessMs = Math.max(lastAccessMs, now);
    }

    ObjectNode toJson() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("path", path);
        o.put("log", logName);
        o.put("created", createdMs);
        o.put("contentType", contentType);
        if (ttlSeconds != null) {
            o.put("ttl", ttlSeconds);
        }
        if (expiresAt != null) {
            o.put("expiresAt", expiresAt.toString());
        }
        if (forkedFrom != null) {
            o.put("forkedFrom", forkedFrom);
            o.put("forkPoint", forkPoint);
        }
        o.put("closed", closed);
        o.put("closedBy", closedBy);
        o.put("lastStreamSeq", lastStreamSeq);
        ObjectNode p = o.putObject("producers");
        producers.forEach((id, s) -> p.putArray(id).add(s[0]).add(s[1]));
        o.put("forks", forks);
        o.put("softDeleted", softDeleted);
        o.put("lastAccess", lastAccessMs);
        return o;
    }

    /** A row read back; {@code replicated}: a cluster replica's, whose last access is exactly as saved. */
    static DsStream fromJson(String ws, JsonNode o, boolean replicated) {
        DsStream s = new DsStream(ws, o.get("path").asText(), o.get("log").asText(), o.get("created").asLong(),
                o.get("contentType").asText(), o.hasNonNull("ttl") ? o.get("ttl").asLong() : null,
                o.hasNonNull("expiresAt") ? Instant.parse(o.get("expiresAt").asText()) : null,
                o.hasNonNull("forkedFrom") ? o.get("forkedFrom").asText() : null);
        s.forkPoint = o.hasNonNull("forkPoint") ? o.get("forkPoint").asText() : null;
        s.closed = o.path("closed").asBoolean();
        s.closedBy = o.hasNonNull("closedBy") ? o.get("closedBy").asText() : null;
        s.lastStreamSeq = o.hasNonNull("lastStreamSeq") ? o.get("lastStreamSeq").asText() : null;
        o.path("producers").properties().forEach(e -> s.producers.put(e.getKey(),
                new long[] {e.getValue().get(0).asLong(), e.getValue().get(1).asLong()}));
        s.forks = o.path("forks").asInt();
        s.softDeleted = o.path("softDeleted").asBoolean();
        // a restart is an access: a sliding TTL never expires a stream while the server was down. Not on a
        // cluster replica: replicas restart at different times, and all of them must decide an expiry alike
        s.lastAccessMs = replicated ? o.path("lastAccess").asLong() : Math.max(o.path("lastAccess").asLong(), System.currentTimeMillis());
        s.savedAccessMs = o.path("lastAccess").asLong();
        return s;
    }
}

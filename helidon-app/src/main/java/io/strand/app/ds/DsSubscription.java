package io.strand.app.ds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.time.Instant;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;

/**
 * Guarded by the {@link DsSubscriptions} monitor (every read and change of its mutable fields holds
 * it): one subscription under a root, its configuration (immutable once made), the streams it
 * follows with their acked offsets, and the state of its current wake (generation, snapshot,
 * token, holder, lease and retry timers).
 */
final class DsSubscription {
    private static final long DEFAULT_LEASE_MS = 30_000;

    enum Link { EXPLICIT, GLOB }

    /** A followed stream: how it was linked, and the offset acked so far. */
    static final class StreamLink {
        final EnumSet<Link> kinds = EnumSet.noneOf(Link.class);
        String acked;
    }

    final String ws;
    final String root;
    final String id;
    final String type;
    final String pattern;
    final String webhookUrl;
    final String wakeStream;
    final long leaseMs;
    final String description;
    /** Everything a PUT configures, so an identical PUT confirms and a different one is refused. */
    final String configKey;
    final String created = Instant.now().toString();
    final Map<String, StreamLink> streams = new LinkedHashMap<>();
    private final DsSubscriptions.Tails tails;
    String status = "active";
    long generation;
    String wakeId;
    /** The tail of each stream when the current wake started: what a webhook's {@code done} acks. */
    Map<String, String> snapshot = new LinkedHashMap<>();
    String token;
    String holder;
    ScheduledFuture<?> lease;
    ScheduledFuture<?> retry;
    int retries;
    /** The base URL ({@code http://host/ds/ws/root}) callbacks and the JWKS are announced under. */
    String baseUrl;

    DsSubscription(String ws, String root, String id, JsonNode in, List<String> explicit, DsSubscriptions.Tails tails) {
        this.ws = ws;
        this.root = root;
        this.id = id;
        this.tails = tails;
        this.type = in.path("type").asText();
        this.pattern = text(in, "pattern");
        this.webhookUrl = text(in.path("webhook"), "url");
        this.wakeStream = text(in, "wake_stream");
        this.leaseMs = in.path("lease_ttl_ms").asLong(DEFAULT_LEASE_MS);
        this.description = text(in, "description");
        this.configKey = type + '\0' + pattern + '\0' + explicit.stream().sorted().distinct().toList() + '\0'
                + webhookUrl + '\0' + wakeStream + '\0' + leaseMs + '\0' + description;
    }

    /** A non-empty text field without leading and trailing slashes; null when absent or empty. */
    static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v != null && v.isTextual() && !v.asText().isEmpty() ? trimSlashes(v.asText()) : null;
    }

    static String trimSlashes(String p) {
        return p.replaceAll("^/+", "").replaceAll("/+$", "");
    }

    /** The registry key of subscription {@code id} under {@code root}; also a callback token's subject. */
    static String key(String ws, String root, String id) {
        return ws + '\0' + root + '\0' + id;
    }

    String key() {
        return key(ws, root, id);
    }

    /** A stream path under a subscription root. */
    static String full(String root, String rel) {
        return root.isEmpty() ? rel : root + "/" + rel;
    }

    /** The path relative to this subscription's root, or null when it is not under it. */
    String relative(String ws, String path) {
        if (!this.ws.equals(ws)) {
            return null;
        }
        if (root.isEmpty()) {
            return path;
        }
        return path.startsWith(root + "/") ? path.substring(root.length() + 1) : null;
    }

    /** Follows {@code path} (root-relative) as {@code kind}; a new link starts at {@code acked}. */
    void link(String path, Link kind, String acked) {
        StreamLink link = streams.computeIfAbsent(trimSlashes(path), p -> {
            StreamLink l = new StreamLink();
            l.acked = acked;
            return l;
        });
        link.kinds.add(kind);
    }

    /** The tail offset of a followed stream (root-relative path). */
    String tail(String rel) {
        return tails.tail(ws, full(root, rel));
    }

    /** True when a followed stream's tail is past its acked offset. */
    boolean pending() {
        for (Map.Entry<String, StreamLink> e : streams.entrySet()) {
            if (tail(e.getKey()).compareTo(e.getValue().acked) > 0) {
                return true;
            }
        }
        return false;
    }

    /** The first followed stream with pending work ("" when none). */
    String firstPending() {
        for (Map.Entry<String, StreamLink> e : streams.entrySet()) {
            if (tail(e.getKey()).compareTo(e.getValue().acked) > 0) {
                return e.getKey();
            }
        }
        return "";
    }

    ArrayNode streamInfos(boolean withTail) {
        ArrayNode out = Json.MAPPER.createArrayNode();
        streams.forEach((path, link) -> {
            ObjectNode o = out.addObject().put("path", path)
                    .put("link_type", link.kinds.contains(Link.EXPLICIT) ? "explicit" : "glob").put("acked_offset", link.acked);
            if (withTail) {
                String tail = tail(path);
                o.put("tail_offset", tail).put("has_pending", tail.compareTo(link.acked) > 0);
            }
        });
        return out;
    }

    /** The subscription as the API shows it; {@code kid} names the key its webhook deliveries are signed with. */
    ObjectNode toJson(String kid) {
        ObjectNode o = Json.MAPPER.createObjectNode().put("id", id).put("subscription_id", id).put("type", type);
        if (pattern != null) {
            o.put("pattern", pattern);
        }
        o.set("streams", streamInfos(false));
        if (webhookUrl != null) {
            ObjectNode w = o.putObject("webhook").put("url", webhookUrl);
            w.putObject("signing").put("alg", "ed25519").put("kid", kid).put("jwks_url", baseUrl + "/__ds/jwks.json");
        }
        if (wakeStream != null) {
            o.put("wake_stream", wakeStream);
        }
        o.put("lease_ttl_ms", leaseMs).put("created_at", created).put("status", status);
        if (description != null) {
            o.put("description", description);
        }
        return o;
    }
}

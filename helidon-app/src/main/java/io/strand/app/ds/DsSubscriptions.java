package io.strand.app.ds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;

/**
 * Thread-safe: every state change runs under this object's monitor (the {@link DsSubscription}
 * rows and the wake cycle of {@link DsWakes} included); webhook requests are sent outside it, on
 * virtual threads; lease and retry timers run on the {@code ds-subscriptions} thread
 * ({@link DsWakeTimers}). The registry of the Durable Streams reserved subscription APIs
 * ({@code …/__ds/subscriptions/{id}}): webhook and pull-wake subscriptions over stream paths
 * (explicit or glob), wakes with generations that fence stale callbacks, per-stream acked offsets,
 * leases. Kept in memory, as the reference server does: a restart forgets subscriptions (clients
 * re-confirm with an idempotent PUT). Each subscription lives under a root (the path before
 * {@code __ds}) and names streams relative to it.
 */
final class DsSubscriptions implements AutoCloseable {
    /** Reads a stream's tail offset (ws, root-relative full path) → offset, the start offset when absent. */
    interface Tails {
        String tail(String ws, String path);
    }

    /** Appends one JSON message to a stream; false when it does not exist. */
    interface WakeWriter {
        boolean append(String ws, String path, byte[] json);
    }

    private final Map<String, DsSubscription> subs = new LinkedHashMap<>();
    private final Tails tails;
    private final DsWakeTokens tokens = new DsWakeTokens();
    private final DsWakeTimers timers = new DsWakeTimers();
    private final DsWebhookClient webhooks = new DsWebhookClient(tokens);
    private final DsWakes wakes;

    DsSubscriptions(Tails tails, WakeWriter wakeWriter) {
        this.tails = tails;
        this.wakes = new DsWakes(this, tokens, timers, webhooks, wakeWriter);
    }

    /** True while {@code sub} is registered (not deleted, nor replaced); the caller holds the monitor. */
    boolean isCurrent(DsSubscription sub) {
        return subs.get(sub.key()) == sub;
    }

    // ---------------------------------------------------------------- subscription rows

    /** PUT: creates (true) or confirms an identical one (false); 409 for a different configuration. */
    synchronized Map.Entry<Boolean, ObjectNode> createOrConfirm(String ws, String root, String id, JsonNode in, String baseUrl,
                                                           BiFunction<String, String, List<String>> streamsUnderRoot) {
        String type = in.path("type").asText();
        if (!type.equals("webhook") && !type.equals("pull-wake")) {
            throw new DsFailure(400, "INVALID_REQUEST", "type must be \"webhook\" or \"pull-wake\"");
        }
        List<String> explicit = new ArrayList<>();
        for (JsonNode s : in.path("streams")) {
            if (!s.isTextual()) {
                throw new DsFailure(400, "INVALID_REQUEST", "streams must contain only strings");
            }
            explicit.add(DsSubscription.trimSlashes(s.asText()));
        }
        String pattern = DsSubscription.text(in, "pattern");
        if (pattern == null && explicit.isEmpty()) {
            throw new DsFailure(400, "INVALID_REQUEST", "At least one of pattern or streams is required");
        }
        JsonNode lease = in.get("lease_ttl_ms");
        if (lease != null && (!lease.canConvertToLong() || !lease.isIntegralNumber() || lease.asLong() < 1000 || lease.asLong() > 600_000)) {
            throw new DsFailure(400, "INVALID_REQUEST", "lease_ttl_ms must be an integer from 1000 to 600000");
        }
        DsSubscription sub = new DsSubscription(ws, root, id, in, explicit, tails);
        DsSubscription existing = subs.get(sub.key());
        if (existing != null) {
            if (!existing.configKey.equals(sub.configKey)) {
                throw new DsFailure(409, "SUBSCRIPTION_ALREADY_EXISTS", "Subscription already exists with different configuration");
            }
            return Map.entry(false, existing.toJson(tokens.kid()));
        }
        if (type.equals("webhook")) {
            if (sub.webhookUrl == null) {
                throw new DsFailure(400, "INVALID_REQUEST", "webhook subscriptions require webhook.url");
            }
            String rejected = DsWebhookClient.rejectUrl(in.path("webhook").path("url").asText());
            if (rejected != null) {
                throw new DsFailure(400, "WEBHOOK_URL_REJECTED", rejected);
            }
        }
        if (type.equals("pull-wake") && sub.wakeStream == null) {
            throw new DsFailure(400, "INVALID_REQUEST", "pull-wake subscriptions require wake_stream");
        }
        sub.baseUrl = baseUrl;
        for (String s : explicit) {
            sub.link(s, DsSubscription.Link.EXPLICIT, sub.tail(s));
        }
        if (pattern != null) {
            for (String s : streamsUnderRoot.apply(ws, root)) {
                if (DsGlob.matches(pattern, s)) {
                    sub.link(s, DsSubscription.Link.GLOB, sub.tail(s));
                }
            }
        }
        subs.put(sub.key(), sub);
        return Map.entry(true, sub.toJson(tokens.kid()));
    }

    synchronized ObjectNode get(String ws, String root, String id) {
        return find(ws, root, id).toJson(tokens.kid());
    }

    synchronized void delete(String ws, String root, String id) {
        DsSubscription s = subs.remove(DsSubscription.key(ws, root, id));
        if (s != null) {
            timers.cancelAll(s);
        }
    }

    synchronized void addStreams(String ws, String root, String id, JsonNode body) {
        DsSubscription sub = find(ws, root, id);
        JsonNode streams = body.path("streams");
        if (!streams.isArray() || streams.isEmpty()) {
            throw new DsFailure(400, "INVALID_REQUEST", "streams must be a non-empty string array");
        }
        for (JsonNode s : streams) {
            if (!s.isTextual() || s.asText().isEmpty()) {
                throw new DsFailure(400, "INVALID_REQUEST", "streams must be a non-empty string array");
            }
        }
        for (JsonNode s : streams) {
            String path = DsSubscription.trimSlashes(s.asText());
            sub.link(path, DsSubscription.Link.EXPLICIT, sub.tail(path));
        }
    }

    synchronized void removeStream(String ws, String root, String id, String path) {
        DsSubscription sub = find(ws, root, id);
        DsSubscription.StreamLink link = sub.streams.get(DsSubscription.trimSlashes(path));
        if (link != null) {
            link.kinds.remove(DsSubscription.Link.EXPLICIT);
            if (link.kinds.isEmpty()) {
                sub.streams.remove(DsSubscription.trimSlashes(path));
            }
        }
    }

    private DsSubscription find(String ws, String root, String id) {
        DsSubscription s = subs.get(DsSubscription.key(ws, root, id));
        if (s == null) {
            throw new DsFailure(404, "SUBSCRIPTION_NOT_FOUND", "Subscription not found");
        }
        return s;
    }

    ObjectNode jwks() {
        return tokens.jwks();
    }

    // ---------------------------------------------------------------- stream events

    /** After an append to (or creation of) stream {@code path}: links glob matches and wakes idle subscriptions. */
    void onAppend(String ws, String path) {
        List<Runnable> deliveries = new ArrayList<>();
        synchronized (this) {
            for (DsSubscription sub : subs.values()) {
                String rel = sub.relative(ws, path);
                if (rel == null) {
                    continue;
                }
                if (rel.equals("__ds") || rel.startsWith("__ds/")) {
                    continue;
                }
                if (sub.pattern != null && DsGlob.matches(sub.pattern, rel)) {
                    DsSubscription.StreamLink existing = sub.streams.get(rel);
                    sub.link(rel, DsSubscription.Link.GLOB, existing == null ? "-1" : existing.acked);
                }
                if (sub.streams.containsKey(rel) && sub.wakeId == null && sub.holder == null && sub.pending()) {
                    Runnable d = wakes.wake(sub, rel);
                    if (d != null) {
                        deliveries.add(d);
                    }
                }
            }
        }
        deliveries.forEach(Runnable::run);
    }

    synchronized void onDelete(String ws, String path) {
        for (DsSubscription sub : subs.values()) {
            String rel = sub.relative(ws, path);
            if (rel != null) {
                sub.streams.remove(rel);
            }
        }
    }

    // ---------------------------------------------------------------- callbacks, acks, claims

    /** The webhook callback: acks, lease extension, and on {@code done} the next wake when work is pending. */
    ObjectNode callback(String ws, String root, String id, String token, JsonNode req) {
        return settle(ws, root, id, token, req, null);
    }

    ObjectNode ack(String ws, String root, String id, String token, JsonNode req) {
        return settle(ws, root, id, token, req, "pull-wake");
    }

    private ObjectNode settle(String ws, String root, String id, String token, JsonNode req, String requiredType) {
        Runnable delivery = null;
        boolean nextWake = false;
        synchronized (this) {
            DsSubscription sub = find(ws, root, id);
            if (requiredType != null && !sub.type.equals(requiredType)) {
                throw new DsFailure(400, "INVALID_REQUEST", "Subscription is not pull-wake");
            }
            fence(sub, token, req);
            applyAcks(sub, req.path("acks"));
            wakes.extendLease(sub);
            if (req.path("done").asBoolean(false)) {
                wakes.endWake(sub);
                if (sub.pending()) {
                    nextWake = true;
                    delivery = wakes.nextWake(sub);
                }
            }
        }
        if (delivery != null) {
            delivery.run();
        }
        return Json.MAPPER.createObjectNode().put("ok", true).put("next_wake", nextWake);
    }

    synchronized ObjectNode claim(String ws, String root, String id, JsonNode req) {
        String worker = req.path("worker").isTextual() ? req.path("worker").asText() : "";
        if (worker.isEmpty()) {
            throw new DsFailure(400, "INVALID_REQUEST", "worker must be a non-empty string");
        }
        DsSubscription sub = find(ws, root, id);
        if (!sub.type.equals("pull-wake")) {
            throw new DsFailure(400, "INVALID_REQUEST", "Subscription is not pull-wake");
        }
        if (sub.holder != null) {
            throw new DsFailure(409, "ALREADY_CLAIMED", "Subscription is claimed by " + sub.holder, sub.holder);
        }
        if (!sub.pending()) {
            throw new DsFailure(409, "NO_PENDING_WORK", "Subscription has no pending work");
        }
        if (sub.wakeId == null) {
            wakes.wake(sub, sub.firstPending());
        }
        sub.holder = worker;
        sub.token = tokens.issue(sub);
        wakes.extendLease(sub);
        ObjectNode out = Json.MAPPER.createObjectNode().put("wake_id", sub.wakeId).put("generation", sub.generation)
                .put("token", sub.token);
        out.set("streams", sub.streamInfos(true));
        out.put("lease_ttl_ms", sub.leaseMs);
        return out;
    }

    void release(String ws, String root, String id, String token, JsonNode req) {
        synchronized (this) {
            DsSubscription sub = find(ws, root, id);
            if (!sub.type.equals("pull-wake")) {
                throw new DsFailure(400, "INVALID_REQUEST", "Subscription is not pull-wake");
            }
            fence(sub, token, req);
            wakes.endWake(sub);
            wakes.nextWake(sub);
        }
    }

    private void fence(DsSubscription sub, String token, JsonNode req) {
        long epoch = tokens.verify(sub, token);
        if (epoch != sub.generation || req.path("generation").asLong(-1) != sub.generation
                || !Objects.equals(req.path("wake_id").asText(null), sub.wakeId)) {
            throw new DsFailure(409, "FENCED", "Wake generation is stale");
        }
    }

    private void applyAcks(DsSubscription sub, JsonNode acks) {
        if (!acks.isArray()) {
            return;
        }
        for (JsonNode a : acks) {
            String stream = DsSubscription.trimSlashes(a.path("stream").asText(a.path("path").asText("")));
            DsSubscription.StreamLink link = sub.streams.get(stream);
            String offset = a.path("offset").asText("");
            if (stream.isEmpty() || link == null) {
                throw new DsFailure(409, "INVALID_OFFSET", "Ack references an unknown subscription stream");
            }
            if (offset.equals("-1") || offset.compareTo(link.acked) < 0 || offset.compareTo(sub.tail(stream)) > 0) {
                throw new DsFailure(409, "INVALID_OFFSET", "Ack offset " + offset + " is before the committed cursor or beyond the tail");
            }
        }
        for (JsonNode a : acks) {
            sub.streams.get(DsSubscription.trimSlashes(a.path("stream").asText(a.path("path").asText("")))).acked =
                    a.path("offset").asText();
        }
    }

    /** Stops the lease and retry timers and the webhook client. */
    @Override
    public void close() {
        timers.close();
        webhooks.close();
    }
}

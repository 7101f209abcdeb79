package io.strand.app.ds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The Durable Streams reserved subscription APIs ({@code …/__ds/subscriptions/{id}}): webhook and
 * pull-wake subscriptions over stream paths (explicit or glob), wakes with generations that fence
 * stale callbacks, per-stream acked offsets, leases, Ed25519-signed webhook deliveries. Kept in
 * memory, as the reference server does: a restart forgets subscriptions (clients re-confirm with
 * an idempotent PUT). Each subscription lives under a root (the path before {@code __ds}) and
 * names streams relative to it. Thread-safe: every state change runs under this object's monitor;
 * webhook requests are sent outside it, on virtual threads; lease and retry timers run on the
 * {@code ds-subscriptions} thread.
 */
final class DsSubscriptions implements AutoCloseable {
    static final String ZERO = DsOffset.START.toString();
    private static final long DEFAULT_LEASE_MS = 30_000;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Reads a stream's tail offset (ws, root-relative full path) → offset, ZERO when absent. */
    interface Tails {
        String tail(String ws, String path);
    }

    /** Appends one JSON message to a stream; false when it does not exist. */
    interface WakeWriter {
        boolean append(String ws, String path, byte[] json);
    }

    /** A failure with the protocol's own code (upper case, as the reference server spells them). */
    static final class Failure extends RuntimeException {
        final int status;
        final String code;
        final String holder;

        Failure(int status, String code, String message) {
            this(status, code, message, null);
        }

        Failure(int status, String code, String message, String holder) {
            super(message);
            this.status = status;
            this.code = code;
            this.holder = holder;
        }

        ObjectNode body() {
            ObjectNode b = Json.MAPPER.createObjectNode();
            ObjectNode e = b.putObject("error").put("code", code).put("message", getMessage());
            if (holder != null) {
                e.put("current_holder", holder);
            }
            return b;
        }
    }

    enum Link { EXPLICIT, GLOB }

    static final class StreamLink {
        final EnumSet<Link> kinds = EnumSet.noneOf(Link.class);
        String acked;
    }

    static final class Sub {
        final String ws;
        final String root;
        final String id;
        final String type;
        final String pattern;
        final String webhookUrl;
        final String wakeStream;
        final long leaseMs;
        final String description;
        final String configKey;
        final String created = Instant.now().toString();
        final Map<String, StreamLink> streams = new LinkedHashMap<>();
        String status = "active";
        long generation;
        String wakeId;
        Map<String, String> snapshot = new LinkedHashMap<>();
        String token;
        String holder;
        ScheduledFuture<?> lease;
        ScheduledFuture<?> retry;
        int retries;
        /** The base URL ({@code http://host/ds/ws/root}) callbacks and the JWKS are announced under. */
        String baseUrl;

        Sub(String ws, String root, String id, JsonNode in, List<String> explicit) {
            this.ws = ws;
            this.root = root;
            this.id = id;
            this.type = in.path("type").asText();
            this.pattern = text(in, "pattern");
            this.webhookUrl = text(in.path("webhook"), "url");
            this.wakeStream = text(in, "wake_stream");
            this.leaseMs = in.path("lease_ttl_ms").asLong(DEFAULT_LEASE_MS);
            this.description = text(in, "description");
            this.configKey = type + '\0' + pattern + '\0' + explicit.stream().sorted().distinct().toList() + '\0'
                    + webhookUrl + '\0' + wakeStream + '\0' + leaseMs + '\0' + description;
        }
    }

    private final Map<String, Sub> subs = new LinkedHashMap<>();
    private final Tails tails;
    private final WakeWriter wakeWriter;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
            .executor(Executors.newVirtualThreadPerTaskExecutor()).build();
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ds-subscriptions");
        t.setDaemon(true);
        return t;
    });
    private final KeyPair signingKey;
    private final String kid;
    private final String jwkX;
    private final byte[] tokenKey = new byte[32];

    DsSubscriptions(Tails tails, WakeWriter wakeWriter) {
        this.tails = tails;
        this.wakeWriter = wakeWriter;
        RANDOM.nextBytes(tokenKey);
        try {
            signingKey = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            byte[] spki = signingKey.getPublic().getEncoded();
            jwkX = b64url(Arrays.copyOfRange(spki, spki.length - 32, spki.length));
            String thumbprint = "{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"" + jwkX + "\"}";
            kid = "ds_" + b64url(MessageDigest.getInstance("SHA-256").digest(thumbprint.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is not available: " + e.getMessage(), e);
        }
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v != null && v.isTextual() && !v.asText().isEmpty() ? trimSlashes(v.asText()) : null;
    }

    static String trimSlashes(String p) {
        return p.replaceAll("^/+", "").replaceAll("/+$", "");
    }

    private static String key(String ws, String root, String id) {
        return ws + '\0' + root + '\0' + id;
    }

    // ---------------------------------------------------------------- subscription rows

    /** PUT: creates (true) or confirms an identical one (false); 409 for a different configuration. */
    synchronized Map.Entry<Boolean, ObjectNode> createOrConfirm(String ws, String root, String id, JsonNode in, String baseUrl,
                                                           BiFunction<String, String, List<String>> streamsUnderRoot) {
        String type = in.path("type").asText();
        if (!type.equals("webhook") && !type.equals("pull-wake")) {
            throw new Failure(400, "INVALID_REQUEST", "type must be \"webhook\" or \"pull-wake\"");
        }
        List<String> explicit = new ArrayList<>();
        for (JsonNode s : in.path("streams")) {
            if (!s.isTextual()) {
                throw new Failure(400, "INVALID_REQUEST", "streams must contain only strings");
            }
            explicit.add(trimSlashes(s.asText()));
        }
        String pattern = text(in, "pattern");
        if (pattern == null && explicit.isEmpty()) {
            throw new Failure(400, "INVALID_REQUEST", "At least one of pattern or streams is required");
        }
        JsonNode lease = in.get("lease_ttl_ms");
        if (lease != null && (!lease.canConvertToLong() || !lease.isIntegralNumber() || lease.asLong() < 1000 || lease.asLong() > 600_000)) {
            throw new Failure(400, "INVALID_REQUEST", "lease_ttl_ms must be an integer from 1000 to 600000");
        }
        Sub sub = new Sub(ws, root, id, in, explicit);
        Sub existing = subs.get(key(ws, root, id));
        if (existing != null) {
            if (!existing.configKey.equals(sub.configKey)) {
                throw new Failure(409, "SUBSCRIPTION_ALREADY_EXISTS", "Subscription already exists with different configuration");
            }
            return Map.entry(false, serialize(existing));
        }
        if (type.equals("webhook")) {
            if (sub.webhookUrl == null) {
                throw new Failure(400, "INVALID_REQUEST", "webhook subscriptions require webhook.url");
            }
            String rejected = rejectWebhookUrl(in.path("webhook").path("url").asText());
            if (rejected != null) {
                throw new Failure(400, "WEBHOOK_URL_REJECTED", rejected);
            }
        }
        if (type.equals("pull-wake") && sub.wakeStream == null) {
            throw new Failure(400, "INVALID_REQUEST", "pull-wake subscriptions require wake_stream");
        }
        sub.baseUrl = baseUrl;
        for (String s : explicit) {
            link(sub, s, Link.EXPLICIT, tail(sub, s));
        }
        if (pattern != null) {
            for (String s : streamsUnderRoot.apply(ws, root)) {
                if (DsGlob.matches(pattern, s)) {
                    link(sub, s, Link.GLOB, tail(sub, s));
                }
            }
        }
        subs.put(key(ws, root, id), sub);
        return Map.entry(true, serialize(sub));
    }

    synchronized ObjectNode get(String ws, String root, String id) {
        return serialize(find(ws, root, id));
    }

    synchronized void delete(String ws, String root, String id) {
        Sub s = subs.remove(key(ws, root, id));
        if (s != null) {
            cancel(s.lease);
            cancel(s.retry);
        }
    }

    synchronized void addStreams(String ws, String root, String id, JsonNode body) {
        Sub sub = find(ws, root, id);
        JsonNode streams = body.path("streams");
        if (!streams.isArray() || streams.isEmpty()) {
            throw new Failure(400, "INVALID_REQUEST", "streams must be a non-empty string array");
        }
        for (JsonNode s : streams) {
            if (!s.isTextual() || s.asText().isEmpty()) {
                throw new Failure(400, "INVALID_REQUEST", "streams must be a non-empty string array");
            }
        }
        for (JsonNode s : streams) {
            String path = trimSlashes(s.asText());
            link(sub, path, Link.EXPLICIT, tail(sub, path));
        }
    }

    synchronized void removeStream(String ws, String root, String id, String path) {
        Sub sub = find(ws, root, id);
        StreamLink link = sub.streams.get(trimSlashes(path));
        if (link != null) {
            link.kinds.remove(Link.EXPLICIT);
            if (link.kinds.isEmpty()) {
                sub.streams.remove(trimSlashes(path));
            }
        }
    }

    private Sub find(String ws, String root, String id) {
        Sub s = subs.get(key(ws, root, id));
        if (s == null) {
            throw new Failure(404, "SUBSCRIPTION_NOT_FOUND", "Subscription not found");
        }
        return s;
    }

    // ---------------------------------------------------------------- stream events

    /** After an append to (or creation of) stream {@code path}: links glob matches and wakes idle subscriptions. */
    void onAppend(String ws, String path) {
        List<Runnable> deliveries = new ArrayList<>();
        synchronized (this) {
            for (Sub sub : subs.values()) {
                String rel = relative(sub, ws, path);
                if (rel == null) {
                    continue;
                }
                if (rel.equals("__ds") || rel.startsWith("__ds/")) {
                    continue;
                }
                if (sub.pattern != null && DsGlob.matches(sub.pattern, rel)) {
                    StreamLink existing = sub.streams.get(rel);
                    link(sub, rel, Link.GLOB, existing == null ? "-1" : existing.acked);
                }
                if (sub.streams.containsKey(rel) && sub.wakeId == null && sub.holder == null && pending(sub)) {
                    Runnable d = wake(sub, rel);
                    if (d != null) {
                        deliveries.add(d);
                    }
                }
            }
        }
        deliveries.forEach(Runnable::run);
    }

    synchronized void onDelete(String ws, String path) {
        for (Sub sub : subs.values()) {
            String rel = relative(sub, ws, path);
            if (rel != null) {
                sub.streams.remove(rel);
            }
        }
    }

    // ---------------------------------------------------------------- wakes, callbacks, leases

    /** Starts a wake: a new generation and snapshot; returns the webhook delivery to run outside the lock (null for pull-wake). */
    private Runnable wake(Sub sub, String triggeredBy) {
        sub.generation++;
        sub.wakeId = "w_" + HexFormat.of().formatHex(randomBytes(12));
        sub.snapshot = new LinkedHashMap<>();
        for (String s : sub.streams.keySet()) {
            sub.snapshot.put(s, tail(sub, s));
        }
        if (sub.type.equals("webhook")) {
            sub.token = token(sub);
            extendLease(sub);
            byte[] body = Json.bytes(notification(sub));
            return () -> deliver(sub, body);
        }
        if (sub.wakeStream != null) {
            ObjectNode event = Json.MAPPER.createObjectNode().put("type", "wake").put("subscription_id", sub.id)
                    .put("stream", triggeredBy).put("generation", sub.generation).put("ts", System.currentTimeMillis());
            String wakePath = full(sub.root, sub.wakeStream);
            Thread.ofVirtual().name("ds-wake-" + sub.id).start(() -> wakeWriter.append(sub.ws, wakePath, Json.bytes(event)));
        }
        return null;
    }

    private ObjectNode notification(Sub sub) {
        ObjectNode n = Json.MAPPER.createObjectNode().put("subscription_id", sub.id).put("wake_id", sub.wakeId)
                .put("generation", sub.generation);
        n.set("streams", streamInfos(sub, true));
        n.put("callback_url", sub.baseUrl + "/__ds/subscriptions/" + urlEncode(sub.id) + "/callback");
        n.put("callback_token", sub.token);
        return n;
    }

    private void deliver(Sub sub, byte[] body) {
        long ts = System.currentTimeMillis() / 1000;
        String signature;
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(signingKey.getPrivate());
            s.update((ts + ".").getBytes(StandardCharsets.UTF_8));
            s.update(body);
            signature = "t=" + ts + ",kid=" + kid + ",ed25519=" + b64url(s.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        HttpRequest req = HttpRequest.newBuilder(URI.create(sub.webhookUrl)).timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json").header("webhook-signature", signature)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        http.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray()).whenComplete((res, error) -> {
            List<Runnable> next = new ArrayList<>();
            synchronized (this) {
                if (subs.get(key(sub.ws, sub.root, sub.id)) != sub) {
                    return;
                }
                if (error != null || res.statusCode() / 100 != 2) {
                    scheduleRetry(sub, body);
                    return;
                }
                sub.status = "active";
                sub.retries = 0;
                JsonNode answer;
                try {
                    answer = Json.parse(res.body());
                } catch (RuntimeException e) {
                    answer = Json.MAPPER.createObjectNode();
                }
                if (answer.path("done").asBoolean(false)) {
                    sub.snapshot.forEach((s, tail) -> {
                        StreamLink link = sub.streams.get(s);
                        if (link != null) {
                            link.acked = tail;
                        }
                    });
                    endWake(sub);
                    Runnable d = nextWake(sub);
                    if (d != null) {
                        next.add(d);
                    }
                }
            }
            next.forEach(Runnable::run);
        });
    }

    private void scheduleRetry(Sub sub, byte[] body) {
        sub.retries++;
        long delay = Math.min(1000L << Math.min(sub.retries - 1, 16), 60_000);
        sub.status = "failed";
        cancel(sub.retry);
        sub.retry = timers.schedule(() -> deliver(sub, body), delay, TimeUnit.MILLISECONDS);
    }

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
            Sub sub = find(ws, root, id);
            if (requiredType != null && !sub.type.equals(requiredType)) {
                throw new Failure(400, "INVALID_REQUEST", "Subscription is not pull-wake");
            }
            fence(sub, token, req);
            applyAcks(sub, req.path("acks"));
            extendLease(sub);
            if (req.path("done").asBoolean(false)) {
                endWake(sub);
                if (pending(sub)) {
                    nextWake = true;
                    delivery = nextWake(sub);
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
            throw new Failure(400, "INVALID_REQUEST", "worker must be a non-empty string");
        }
        Sub sub = find(ws, root, id);
        if (!sub.type.equals("pull-wake")) {
            throw new Failure(400, "INVALID_REQUEST", "Subscription is not pull-wake");
        }
        if (sub.holder != null) {
            throw new Failure(409, "ALREADY_CLAIMED", "Subscription is claimed by " + sub.holder, sub.holder);
        }
        if (!pending(sub)) {
            throw new Failure(409, "NO_PENDING_WORK", "Subscription has no pending work");
        }
        if (sub.wakeId == null) {
            wake(sub, firstPending(sub));
        }
        sub.holder = worker;
        sub.token = token(sub);
        extendLease(sub);
        ObjectNode out = Json.MAPPER.createObjectNode().put("wake_id", sub.wakeId).put("generation", sub.generation)
                .put("token", sub.token);
        out.set("streams", streamInfos(sub, true));
        out.put("lease_ttl_ms", sub.leaseMs);
        return out;
    }

    void release(String ws, String root, String id, String token, JsonNode req) {
        synchronized (this) {
            Sub sub = find(ws, root, id);
            if (!sub.type.equals("pull-wake")) {
                throw new Failure(400, "INVALID_REQUEST", "Subscription is not pull-wake");
            }
            fence(sub, token, req);
            endWake(sub);
            nextWake(sub);
        }
    }

    private Runnable nextWake(Sub sub) {
        return pending(sub) ? wake(sub, firstPending(sub)) : null;
    }

    private void endWake(Sub sub) {
        cancel(sub.lease);
        sub.lease = null;
        sub.token = null;
        sub.holder = null;
        sub.wakeId = null;
        sub.snapshot.clear();
    }

    private void extendLease(Sub sub) {
        cancel(sub.lease);
        sub.lease = timers.schedule(() -> {
            Runnable d;
            synchronized (this) {
                if (subs.get(key(sub.ws, sub.root, sub.id)) != sub) {
                    return;
                }
                endWake(sub);
                d = nextWake(sub);
            }
            if (d != null) {
                d.run();
            }
        }, sub.leaseMs, TimeUnit.MILLISECONDS);
    }

    private void fence(Sub sub, String token, JsonNode req) {
        long epoch = verifyToken(sub, token);
        if (epoch != sub.generation || req.path("generation").asLong(-1) != sub.generation
                || !Objects.equals(req.path("wake_id").asText(null), sub.wakeId)) {
            throw new Failure(409, "FENCED", "Wake generation is stale");
        }
    }

    private void applyAcks(Sub sub, JsonNode acks) {
        if (!acks.isArray()) {
            return;
        }
        for (JsonNode a : acks) {
            String stream = trimSlashes(a.path("stream").asText(a.path("path").asText("")));
            StreamLink link = sub.streams.get(stream);
            String offset = a.path("offset").asText("");
            if (stream.isEmpty() || link == null) {
                throw new Failure(409, "INVALID_OFFSET", "Ack references an unknown subscription stream");
            }
            if (offset.equals("-1") || offset.compareTo(link.acked) < 0 || offset.compareTo(tail(sub, stream)) > 0) {
                throw new Failure(409, "INVALID_OFFSET", "Ack offset " + offset + " is before the committed cursor or beyond the tail");
            }
        }
        for (JsonNode a : acks) {
            sub.streams.get(trimSlashes(a.path("stream").asText(a.path("path").asText("")))).acked = a.path("offset").asText();
        }
    }

    // ---------------------------------------------------------------- helpers

    private void link(Sub sub, String path, Link kind, String acked) {
        StreamLink link = sub.streams.computeIfAbsent(trimSlashes(path), p -> {
            StreamLink l = new StreamLink();
            l.acked = acked;
            return l;
        });
        link.kinds.add(kind);
    }

    private String tail(Sub sub, String rel) {
        return tails.tail(sub.ws, full(sub.root, rel));
    }

    /** A stream path under a subscription root. */
    static String full(String root, String rel) {
        return root.isEmpty() ? rel : root + "/" + rel;
    }

    /** The path relative to the subscription's root, or null when it is not under it. */
    private static String relative(Sub sub, String ws, String path) {
        if (!sub.ws.equals(ws)) {
            return null;
        }
        if (sub.root.isEmpty()) {
            return path;
        }
        return path.startsWith(sub.root + "/") ? path.substring(sub.root.length() + 1) : null;
    }

    private boolean pending(Sub sub) {
        for (Map.Entry<String, StreamLink> e : sub.streams.entrySet()) {
            if (tail(sub, e.getKey()).compareTo(e.getValue().acked) > 0) {
                return true;
            }
        }
        return false;
    }

    private String firstPending(Sub sub) {
        for (Map.Entry<String, StreamLink> e : sub.streams.entrySet()) {
            if (tail(sub, e.getKey()).compareTo(e.getValue().acked) > 0) {
                return e.getKey();
            }
        }
        return "";
    }

    private ArrayNode streamInfos(Sub sub, boolean withTail) {
        ArrayNode out = Json.MAPPER.createArrayNode();
        sub.streams.forEach((path, link) -> {
            ObjectNode o = out.addObject().put("path", path)
                    .put("link_type", link.kinds.contains(Link.EXPLICIT) ? "explicit" : "glob").put("acked_offset", link.acked);
            if (withTail) {
                String tail = tail(sub, path);
                o.put("tail_offset", tail).put("has_pending", tail.compareTo(link.acked) > 0);
            }
        });
        return out;
    }

    private ObjectNode serialize(Sub sub) {
        ObjectNode o = Json.MAPPER.createObjectNode().put("id", sub.id).put("subscription_id", sub.id).put("type", sub.type);
        if (sub.pattern != null) {
            o.put("pattern", sub.pattern);
        }
        o.set("streams", streamInfos(sub, false));
        if (sub.webhookUrl != null) {
            ObjectNode w = o.putObject("webhook").put("url", sub.webhookUrl);
            w.putObject("signing").put("alg", "ed25519").put("kid", kid).put("jwks_url", sub.baseUrl + "/__ds/jwks.json");
        }
        if (sub.wakeStream != null) {
            o.put("wake_stream", sub.wakeStream);
        }
        o.put("lease_ttl_ms", sub.leaseMs).put("created_at", sub.created).put("status", sub.status);
        if (sub.description != null) {
            o.put("description", sub.description);
        }
        return o;
    }

    ObjectNode jwks() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.putArray("keys").addObject().put("kty", "OKP").put("crv", "Ed25519").put("x", jwkX).put("kid", kid)
                .put("use", "sig").put("alg", "EdDSA");
        return o;
    }

    /** A callback token: {@code base64url(json{sub,epoch,exp}).base64url(hmac)}. */
    private String token(Sub sub) {
        byte[] payload = Json.bytes(Json.MAPPER.createObjectNode().put("sub", key(sub.ws, sub.root, sub.id))
                .put("epoch", sub.generation).put("exp", System.currentTimeMillis() / 1000 + 3600));
        String p = b64url(payload);
        return p + "." + b64url(hmac(p));
    }

    /** The wake generation a valid token was issued for; 401 for a forged, foreign or expired one. */
    private long verifyToken(Sub sub, String token) {
        String[] parts = token == null ? new String[0] : token.split("\\.");
        if (parts.length != 2 || !MessageDigest.isEqual(hmac(parts[0]), b64urlDecode(parts[1]))) {
            throw new Failure(401, "TOKEN_INVALID", "Token invalid");
        }
        JsonNode claims = Json.parse(b64urlDecode(parts[0]));
        if (!key(sub.ws, sub.root, sub.id).equals(claims.path("sub").asText())) {
            throw new Failure(401, "TOKEN_INVALID", "Token invalid");
        }
        if (claims.path("exp").asLong() < System.currentTimeMillis() / 1000) {
            throw new Failure(401, "TOKEN_EXPIRED", "Token expired");
        }
        return claims.path("epoch").asLong();
    }

    private byte[] hmac(String text) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(tokenKey, "HmacSHA256"));
            return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Why a webhook URL is refused (null when accepted): https to public hosts, or http to localhost / 127.x for development. */
    static String rejectWebhookUrl(String raw) {
        URI uri;
        try {
            uri = URI.create(raw);
        } catch (IllegalArgumentException e) {
            return "webhook.url must be a valid URL";
        }
        String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(java.util.Locale.ROOT);
        boolean localDev = host.equals("localhost") || host.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
        if ("http".equals(uri.getScheme())) {
            return localDev ? null : "http webhook URLs are only allowed for localhost or 127.0.0.x";
        }
        if (!"https".equals(uri.getScheme()) || host.isEmpty()) {
            return "webhook.url must use https";
        }
        if (host.equals("localhost")) {
            return "localhost webhook URLs must use http for dev";
        }
        if (host.matches("(10|127|0)\\..*|172\\.(1[6-9]|2\\d|3[01])\\..*|192\\.168\\..*|169\\.254\\..*") || host.startsWith("[")) {
            return "webhook.url must not target private, link-local or IPv6 literal hosts";
        }
        return null;
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static String b64url(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    private static byte[] b64urlDecode(String s) {
        try {
            return Base64.getUrlDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            return new byte[0];
        }
    }

    private static String urlEncode(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static void cancel(ScheduledFuture<?> f) {
        if (f != null) {
            f.cancel(false);
        }
    }

    @Override
    public void close() {
        timers.shutdownNow();
        http.close();
    }
}

package io.strand.app.ds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Guarded by the {@link DsSubscriptions} monitor: its methods are called with it held, and the
 * lease timer and the webhook's answer take it before they touch a subscription. Runs the wake
 * cycle: a wake starts a new generation with a snapshot of the tails and is delivered (a signed
 * webhook POST, retried with back-off, or an event appended to the pull-wake stream); it ends on
 * {@code done}, release or lease expiry, and the next starts at once while work is pending. A
 * webhook delivery is returned as a {@link Runnable} for the caller to run after leaving the
 * monitor, so no HTTP request is sent under it.
 */
final class DsWakes {
    private final DsSubscriptions owner;
    private final DsWakeTokens tokens;
    private final DsWakeTimers timers;
    private final DsWebhookClient webhooks;
    private final DsSubscriptions.WakeWriter wakeWriter;

    DsWakes(DsSubscriptions owner, DsWakeTokens tokens, DsWakeTimers timers, DsWebhookClient webhooks,
            DsSubscriptions.WakeWriter wakeWriter) {
        this.owner = owner;
        this.tokens = tokens;
        this.timers = timers;
        this.webhooks = webhooks;
        this.wakeWriter = wakeWriter;
    }

    /** Starts a wake: a new generation and snapshot; returns the webhook delivery to run outside the lock (null for pull-wake). */
    Runnable wake(DsSubscription sub, String triggeredBy) {
        sub.generation++;
        sub.wakeId = "w_" + HexFormat.of().formatHex(DsWakeTokens.randomBytes(12));
        sub.snapshot = new LinkedHashMap<>();
        for (String s : sub.streams.keySet()) {
            sub.snapshot.put(s, sub.tail(s));
        }
        if (sub.type.equals("webhook")) {
            sub.token = tokens.issue(sub);
            extendLease(sub);
            byte[] body = Json.bytes(notification(sub));
            return () -> deliver(sub, body);
        }
        if (sub.wakeStream != null) {
            ObjectNode event = Json.MAPPER.createObjectNode().put("type", "wake").put("subscription_id", sub.id)
                    .put("stream", triggeredBy).put("generation", sub.generation).put("ts", System.currentTimeMillis());
            String wakePath = DsSubscription.full(sub.root, sub.wakeStream);
            Thread.ofVirtual().name("ds-wake-" + sub.id).start(() -> wakeWriter.append(sub.ws, wakePath, Json.bytes(event)));
        }
        return null;
    }

    /** The next wake when work is pending (its delivery, as {@link #wake}), else null. */
    Runnable nextWake(DsSubscription sub) {
        return sub.pending() ? wake(sub, sub.firstPending()) : null;
    }

    /** Ends the current wake: no lease, token, holder or snapshot. */
    void endWake(DsSubscription sub) {
        timers.endLease(sub);
        sub.token = null;
        sub.holder = null;
        sub.wakeId = null;
        sub.snapshot.clear();
    }

    /** (Re)starts the current wake's lease; when it runs out the wake ends and the next starts if work is pending. */
    void extendLease(DsSubscription sub) {
        timers.extendLease(sub, () -> {
            Runnable d;
            synchronized (owner) {
                if (!owner.isCurrent(sub)) {
                    return;
                }
                endWake(sub);
                d = nextWake(sub);
            }
            if (d != null) {
                d.run();
            }
        });
    }

    private ObjectNode notification(DsSubscription sub) {
        ObjectNode n = Json.MAPPER.createObjectNode().put("subscription_id", sub.id).put("wake_id", sub.wakeId)
                .put("generation", sub.generation);
        n.set("streams", sub.streamInfos(true));
        n.put("callback_url", sub.baseUrl + "/__ds/subscriptions/" + urlEncode(sub.id) + "/callback");
        n.put("callback_token", sub.token);
        return n;
    }

    private void deliver(DsSubscription sub, byte[] body) {
        webhooks.send(sub.webhookUrl, body).whenComplete((res, error) -> delivered(sub, body, res, error));
    }

    /**
     * The receiver's answer: a failure retries later; a 2xx with {@code done} acks the snapshot,
     * ends the wake and starts the next when work is pending. A deleted subscription is left alone.
     */
    private void delivered(DsSubscription sub, byte[] body, HttpResponse<byte[]> res, Throwable error) {
        List<Runnable> next = new ArrayList<>();
        synchronized (owner) {
            if (!owner.isCurrent(sub)) {
                return;
            }
            if (error != null || res.statusCode() / 100 != 2) {
                timers.retryLater(sub, () -> deliver(sub, body));
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
                    DsSubscription.StreamLink link = sub.streams.get(s);
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
    }

    private static String urlEncode(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}

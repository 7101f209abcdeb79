package io.strand.app.ws;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.common.buffers.BufferData;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.websocket.WsCloseCodes;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;
import io.helidon.websocket.WsUpgradeException;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.ApiErrors;
import io.strand.app.LogRequests;
import io.strand.app.StrandMetrics;
import io.strand.app.auth.Authenticator;
import io.strand.app.auth.BearerToken;
import io.strand.app.auth.Principal;
import io.strand.app.auth.Scope;
import io.strand.app.EntryJson;
import io.strand.app.http.HttpIo;
import io.strand.app.http.LogsHttp;
import io.strand.app.http.Replies;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.RequestJson;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import io.strand.app.stores.Placement;
import io.strand.app.stores.Stores;
import io.strand.logtier.LogWatch;
import io.strand.logtier.PageInfo;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One WebSocket connection ({@code /v1/ws/{ws}/socket}): every log and doc op of a workspace
 * over one socket (SPEC §6). Frames are parsed on the connection's thread and write ops are
 * queued to the writer right there, so appends keep the order they were sent in; replies go out
 * on virtual threads as their results complete, so requests pipeline.
 */
public final class SocketEndpoint implements WsListener {
    /** A request frame's own fields, besides its op's: {@code id}, {@code op}, and the {@code log} it names. */
    private static final java.util.Set<String> FRAME_ENVELOPE = java.util.Set.of("id", "op", "log");
    private static final Executor REPLIES = Executors.newVirtualThreadPerTaskExecutor();

    private final SocketContext ctx;
    private final ConcurrentHashMap<String, Subscription> subscriptions = new ConcurrentHashMap<>();
    private final AtomicLong subCounter = new AtomicLong();
    private final StringBuilder partial = new StringBuilder();
    private final int maxMessageBytes;
    private long partialBytes;
    private String ws;
    /** The upgrade's raw path and query, and its Authorization header (what a relay sends on). */
    private String pathAndQuery;
    private String authorization;
    /** Set in {@link #onOpen} when this node does not replicate the workspace's shard: every frame goes through it. */
    private SocketRelay relay;
    private Principal principal;
    private SocketWriter out;
    /** The connection, when it is Strand's own (it can then run a step off its event loop, {@link StrictWsConnection#runHolding}). */
    private StrictWsConnection connection;
    private boolean counted;

    /**
     * What every connection shares: stores, auth, limits, the per-workspace connection counts, the
     * registry of open sockets that the token sweeper walks, and the event loops or platform threads that read sockets.
     */
    public record SocketContext(Placement placement, DocOps docs, Authenticator auth, StrandMetrics metrics,
                                int maxConnectionsPerWorkspace, int maxSubscriptions, long heartbeatMillis,
                                ConcurrentHashMap<String, AtomicLong> connections, OpenSockets sockets, ReaderThreads readers,
                                WsEventLoops loops) {
        /** With its own registry of open sockets, and every socket read by its virtual thread (tests). */
        public SocketContext(Placement placement, DocOps docs, Authenticator auth, StrandMetrics metrics,
                             int maxConnectionsPerWorkspace, int maxSubscriptions, long heartbeatMillis,
                             ConcurrentHashMap<String, AtomicLong> connections) {
            this(placement, docs, auth, metrics, maxConnectionsPerWorkspace, maxSubscriptions, heartbeatMillis, connections,
                    new OpenSockets(), ReaderThreads.NONE, WsEventLoops.NONE);
        }
    }

    /** The workspace named by the upgrade's path (null before {@link #onHttpUpgrade}). */
    String workspace() {
        return ws;
    }

    /** The event loops this connection may be read by ({@link StrictWsConnection#handle}). */
    WsEventLoops eventLoops() {
        return ctx.loops();
    }

    /** The platform threads this connection may be read by ({@link StrictWsConnection#handle}). */
    ReaderThreads readerThreads() {
        return ctx.readers();
    }

    /** Doc ops over the socket; null until the doc store is wired. */
    public interface DocOps {
        CompletableFuture<JsonNode> handle(String op, String ws, JsonNode frame, Principal principal);
    }

    public SocketEndpoint(SocketContext ctx) {
        this(ctx, 1 << 20);
    }

    /** @param maxMessageBytes the WebSocket message limit, also for messages sent as several fragments */
    public SocketEndpoint(SocketContext ctx, int maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
        this.ctx = ctx;
    }

    @Override
    public java.util.Optional<Headers> onHttpUpgrade(HttpPrologue prologue, Headers headers) throws WsUpgradeException {
        String path = prologue.uriPath().path();
        String[] parts = path.split("/");
        // /v1/ws/{ws}/socket
        if (parts.length != 5 || !(Names.isWorkspace(parts[3]) || Names.SYSTEM_WORKSPACE.equals(parts[3]))) {
            throw new WsUpgradeException("invalid workspace in " + path);
        }
        ws = parts[3];
        String query = prologue.query().rawValue();
        pathAndQuery = prologue.uriPath().rawPath() + (query.isEmpty() ? "" : "?" + query);
        authorization = headers.first(io.helidon.http.HeaderNames.AUTHORIZATION).orElse(null);
        try {
            // a backstop: AuthFilter has already authenticated this upgrade with the same parser
            principal = ctx.auth().authenticate(BearerToken.of(headers, prologue.query(), path, prologue.method()));
            principal.require(ws, Scope.READ);
        } catch (StrandException e) {
            throw new WsUpgradeException(e.code().wire() + ": " + e.getMessage());
        }
        return java.util.Optional.empty();
    }

    /**
     * A plain GET of the socket path (no Upgrade): the same checks as an upgrade, answered with the
     * SPEC §2 status and error body. Upgrade requests pass the HTTP filters first (Helidon 4.5
     * routes upgrades), so the auth filter already answers their 401/403 and an invalid workspace
     * name's 400 with an error body; {@link #onHttpUpgrade} repeats those checks as a backstop only.
     */
    public static void refusedUpgrade(ServerRequest req, ServerResponse res) {
        String workspace = Names.workspace(HttpIo.path(req, "ws"));
        HttpIo.require(req, workspace, Scope.READ);
        throw StrandException.badRequest("this is the WebSocket endpoint: connect with an Upgrade: websocket request");
    }

    @Override
    public void onOpen(WsSession session) {
        out = new SocketWriter(session);
        connection = session instanceof StrictWsConnection c ? c : null;
        AtomicLong count = ctx.connections().computeIfAbsent(ws, k -> new AtomicLong());
        if (count.incrementAndGet() > ctx.maxConnectionsPerWorkspace()) {
            count.decrementAndGet();
            out.close(4029, "too many connections for workspace " + ws);
            return;
        }
        counted = true;
        ctx.sockets().add(this);
        try { // a cluster node that does not replicate the workspace's shard relays the socket to a node that does
            java.util.Optional<String> replica = ctx.placement().relayFor(ws);
            if (replica.isPresent()) {
                relay = SocketRelay.open(replica.get(), pathAndQuery, authorization, out);
            }
        } catch (StrandException e) {
            out.close(1013, e.getMessage().length() > 120 ? e.getMessage().substring(0, 120) : e.getMessage()); // try again later
        }
    }

    /**
     * Called by the token sweeper (its own thread): when this socket's token has expired or was
     * revoked, ends every subscription and closes with 4001. True when the socket is now closed.
     */
    boolean revalidate() {
        if (out == null || !out.isOpen()) {
            return true;
        }
        if (ctx.auth().stillValid(principal)) {
            return false;
        }
        subscriptions.values().forEach(Subscription::cancel);
        // on its own thread: the close waits for a send in progress, which a stalled client can hold up
        Thread.ofVirtual().name("close-" + ws).start(() -> out.close(4001, "token expired or revoked"));
        return true;
    }

    /**
     * Called from a shard's apply thread just before its stores close (cluster mode): when this
     * socket's workspace matches, ends each of its subscriptions with a {@code closed} frame carrying
     * {@code why} and the subscription's {@code next}. The futures complete as each loop lets go.
     */
    List<CompletableFuture<Void>> endSubscriptions(java.util.function.Predicate<String> workspace, StrandException why) {
        if (ws == null || !workspace.test(ws)) {
            return List.of();
        }
        return subscriptions.values().stream().map(s -> s.end(why)).toList();
    }

    @Override
    public void onMessage(WsSession session, String text, boolean last) {
        if (relay != null) {
            relay.toUpstream(text, last);
            return;
        }
        // The connection limits each frame; the fragments of one message must not add up past the limit either.
        if (!partial.isEmpty() || !last) {
            partialBytes += utf8Length(text);
            if (partialBytes > maxMessageBytes) {
                partial.setLength(0);
                partialBytes = 0;
                out.close(WsCloseCodes.TOO_BIG, "message exceeds " + maxMessageBytes + " bytes");
                return;
            }
        }
        if (!last) {
            partial.append(text);
            return;
        }
        String frame = text;
        if (!partial.isEmpty()) {
            frame = partial.append(text).toString();
            partial.setLength(0);
            partialBytes = 0;
        }
        handle(frame);
    }

    @Override
    public void onMessage(WsSession session, BufferData buffer, boolean last) {
        reply(NullNode.getInstance(), new StrandException(ErrorCode.BAD_FRAME, "binary frames are not supported; send JSON text frames"));
    }

    @Override
    public void onClose(WsSession session, int status, String reason) {
        if (relay != null) {
            relay.close(status);
        }
        end();
    }

    @Override
    public void onError(WsSession session, Throwable t) {
        if (relay != null) {
            relay.close(1011);
        }
        end();
    }

    private void end() {
        if (out != null) {
            out.markClosed();
        }
        subscriptions.values().forEach(Subscription::cancel);
        ctx.sockets().remove(this);
        if (counted) {
            counted = false;
            ctx.connections().get(ws).decrementAndGet();
        }
    }

    private static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            n += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        }
        return n;
    }

    private void handle(String text) {
        JsonNode req;
        try {
            req = RequestJson.parse(text.getBytes(StandardCharsets.UTF_8)); // an append's payloads stay the client's bytes
        } catch (StrandException e) {
            reply(NullNode.getInstance(), new StrandException(ErrorCode.BAD_FRAME, e.getMessage()));
            return;
        }
        if (!req.isObject()) {
            reply(NullNode.getInstance(), new StrandException(ErrorCode.BAD_FRAME, "a request must be a JSON object"));
            return;
        }
        JsonNode id = req.has("id") ? req.get("id") : NullNode.getInstance();
        if (!id.isNull() && !id.isNumber() && !id.isTextual() && RequestJson.rawBytes(id) == null) { // raw: a number kept as sent
            reply(NullNode.getInstance(), new StrandException(ErrorCode.BAD_FRAME, "'id' must be a number or a string"));
            return;
        }
        try {
            if (!ctx.auth().stillValid(principal)) {
                reply(id, Authenticator.unauthorized("the token has expired or was revoked"));
                out.close(4001, "token no longer valid");
                return;
            }
            JsonNode opNode = req.get("op");
            if (opNode == null || !opNode.isTextual()) {
                throw new StrandException(ErrorCode.BAD_FRAME, "a request needs a string 'op'");
            }
            dispatch(opNode.asText(), id, req, text.length());
        } catch (RuntimeException e) {
            reply(id, ApiErrors.classify(e));
        }
    }

    /** {@code frameChars}: the frame's length, the weight of its writes for the loop ({@link WsEventLoop#deferringWrites}). */
    private void dispatch(String op, JsonNode id, JsonNode req, int frameChars) {
        switch (op) {
            case "append" -> {
                AppendRequest append;
                String log;
                try {
                    principal.require(ws, Scope.RW);
                    log = logName(req);
                    append = LogRequests.append(req, FRAME_ENVELOPE);
                } catch (RuntimeException e) {
                    ctx.metrics().appendRefused();
                    throw e;
                }
                String idJson = idJson(id);
                WsEventLoop.deferringWrites(frameChars, () -> ctx.metrics().timeAppend(append, ctx.placement().writes().append(ws, log, append)).whenComplete((r, t) -> {
                    if (t != null) {
                        out.sendLater(ApiErrors.socketReply(id, ApiErrors.classify(t)));
                    } else {
                        String ack = Replies.appendJson(r); // "{…}" → merged into the reply object
                        out.sendLater("{\"id\":" + idJson + ",\"ok\":true," + ack.substring(1));
                    }
                }));
            }
            case "read" -> {
                principal.require(ws, Scope.READ);
                String log = logName(req);
                LogRequests.ReadSpec spec = LogRequests.read(name -> field(req, name));
                EntryJson reply = EntryJson.reply(idJson(id), spec.limit());
                if (spec.from() != null && !ctx.placement().clustered()) {
                    // A forward page of the open hot queue is served right here: handing it to another
                    // thread would cost more than the read. Anything that may open files or reach the
                    // object store (a closed log, older cycles, cold entries) still goes to a reply thread.
                    PageInfo page = ctx.placement().local(ws).logs().readForwardInPlace(ws, log, spec.from(), spec.limit(), reply);
                    if (page != null) {
                        out.send(reply.endPage(page, false));
                        reply.release();
                        return;
                    }
                }
                REPLIES.execute(() -> {
                    try {
                        ctx.placement().awaitCaughtUp(ws); // a cluster replica first applies what was acknowledged before
                        PageInfo page = LogsHttp.read(ctx.placement().local(ws).logs(), ws, log, spec, reply); // nothing was read into reply yet
                        out.send(reply.endPage(page, spec.before() != null));
                        reply.release();
                    } catch (RuntimeException e) {
                        reply(id, ApiErrors.classify(e));
                    }
                });
            }
            case "subscribe" -> subscribe(id, req);
            case "credit" -> {
                Subscription s = subscription(req);
                Long n = LogRequests.optionalLong(req, "n", 1);
                if (n == null) {
                    throw StrandException.badRequest("'n' is required");
                }
                s.credit(n);
                ok(id, Json.MAPPER.createObjectNode());
            }
            case "unsubscribe" -> {
                Subscription s = subscription(req);
                s.stop(); // nothing of the subscription is sent after this, so none of it follows the reply
                subscriptions.remove(s.id(), s);
                ok(id, Json.MAPPER.createObjectNode());
            }
            case "ping" -> ok(id, Json.MAPPER.createObjectNode().put("pong", true).put("ts", System.currentTimeMillis()));
            default -> {
                if (op.startsWith("doc.") || op.equals("txn")) {
                    principal.requireDocs(ws, "doc.get".equals(op) ? Scope.READ : Scope.RW); // auth before routing
                    if (ctx.docs() == null) {
                        throw new StrandException(ErrorCode.UNKNOWN_OP, "op '" + op + "' is not available on this server");
                    }
                    WsEventLoop.deferringWrites(frameChars, () -> complete(id, ctx.docs().handle(op, ws, req, principal)));
                } else {
                    throw new StrandException(ErrorCode.UNKNOWN_OP, "unknown op '" + op + "'");
                }
            }
        }
    }

    private void subscribe(JsonNode id, JsonNode req) {
        principal.require(ws, Scope.READ);
        String log = logName(req);
        JsonNode fromNode = req.get("from");
        Object from;
        if (fromNode == null || fromNode.isNull()) {
            from = 1L;
        } else if (fromNode.isTextual() && fromNode.asText().equals("latest")) {
            from = "latest";
        } else if (fromNode.isIntegralNumber() && fromNode.canConvertToLong() && fromNode.asLong() >= 0) {
            from = fromNode.asLong(); // canConvertToLong: 2^64 must not wrap to 0 and replay from the start
        } else {
            throw StrandException.badRequest("'from' must be a seq from 0 to 2^63-1, or \"latest\"");
        }
        Long window = LogRequests.optionalLong(req, "window", 1);
        JsonNode subNode = req.get("sub");
        String subJson; // the key: the id as JSON text, echoed as given (a string stays a string, a number a number)
        if (subNode == null || subNode.isNull()) {
            subJson = Json.string("s" + subCounter.incrementAndGet());
        } else {
            subJson = subKey(subNode);
            if (subJson == null) {
                throw StrandException.badRequest("'sub' must be a non-empty string or an integer, of at most 128 characters");
            }
        }
        if (subscriptions.containsKey(subJson)) {
            throw new StrandException(ErrorCode.SUB_IN_USE, "subscription " + subJson
                    + " is already open on this socket: unsubscribe it first or pick another 'sub'");
        }
        if (subscriptions.size() >= ctx.maxSubscriptions()) {
            throw new StrandException(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "a socket holds at most " + ctx.maxSubscriptions() + " subscriptions");
        }
        // Nothing was opened until here; from now on the watch is the subscription's (its loop closes it), or closed below.
        ctx.placement().awaitCaughtUp(ws); // a cursor from another node resumes exactly on this one
        Stores stores = ctx.placement().local(ws);
        if (connection != null && !stores.logs().isOpen(ws, log)) {
            // the head is read from the log, which opens it first (files, and the cold manifest from the
            // object store, which may take long), or waits for the thread opening it now; never on an
            // event loop, where it would stall every socket
            connection.runHolding(REPLIES, () -> {
                try {
                    start(id, log, from, window, subJson, stores);
                } catch (RuntimeException e) {
                    reply(id, ApiErrors.classify(e));
                }
            });
            return;
        }
        start(id, log, from, window, subJson, stores);
    }

    /**
     * The rest of a {@code subscribe}, once its request was checked: the watch, the reply, then the
     * subscription's own thread. No other frame of the socket is handled meanwhile.
     */
    private void start(JsonNode id, String log, Object from, Long window, String subJson, Stores stores) {
        LogWatch watch = stores.logs().watch(ws, log);
        Subscription sub;
        try {
            long head = watch.head();
            long next;
            if (from instanceof Long seq) {
                if (seq > head + 1) {
                    // a cursor past the next entry would wait silently for entries that may never get that far
                    throw StrandException.badRequest("'from' " + seq + " is beyond the log's next seq " + (head + 1)
                            + "; subscribe from at most head+1, or from \"latest\"").with("head", head);
                }
                next = Math.max(1, seq);
            } else {
                next = head + 1;
            }
            Subscription[] holder = new Subscription[1];
            sub = new Subscription(subJson, next, window, watch, out, ctx.metrics(), ctx.heartbeatMillis(),
                    () -> subscriptions.remove(subJson, holder[0]));
            holder[0] = sub;
            subscriptions.put(subJson, sub); // only the thread handling this socket's frames (or its held step) adds
            // the reply goes out before the loop starts, so every frame of the subscription follows it
            if (!out.send("{\"id\":" + idJson(id) + ",\"ok\":true,\"sub\":" + subJson + ",\"from\":" + next + ",\"head\":" + head + "}")) {
                subscriptions.remove(subJson, sub);
                watch.close();
                return;
            }
        } catch (RuntimeException e) {
            subscriptions.remove(subJson);
            watch.close();
            throw e;
        }
        Thread.ofVirtual().name("sub-" + ws + "-" + log).start(sub);
        if (ctx.placement().clustered() && !current(stores)) {
            // the stores closed (a snapshot replaced them) between the lookup and the registration above,
            // so endSubscriptions may have missed this one: it ends the same way
            sub.end(new StrandException(ErrorCode.UNAVAILABLE, "this node's copy of workspace " + ws
                    + " was replaced while subscribing: subscribe again from 'next'", java.util.Map.of("retryable", true)));
        }
    }

    /** True while {@code stores} is still this node's copy of the socket's workspace. */
    private boolean current(Stores stores) {
        try {
            return ctx.placement().local(ws) == stores;
        } catch (StrandException e) {
            return false; // being replaced right now
        }
    }

    /** A {@code sub} as JSON text, the key of {@link #subscriptions}; null when it is not a usable id. */
    private static String subKey(JsonNode subNode) {
        if (subNode.isTextual() && !subNode.asText().isEmpty() && subNode.asText().length() <= 128) {
            return Json.string(subNode.asText());
        }
        if (subNode.isIntegralNumber() && subNode.asText().length() <= 128) {
            return subNode.asText();
        }
        return null;
    }

    private Subscription subscription(JsonNode req) {
        JsonNode subNode = req.get("sub");
        String key = subNode == null ? null : subKey(subNode);
        if (key == null) {
            throw StrandException.badRequest("'sub' is required: the string or integer given to subscribe");
        }
        Subscription s = subscriptions.get(key);
        if (s == null) {
            throw StrandException.notFound("no subscription " + key + " on this socket");
        }
        return s;
    }

    private static String logName(JsonNode req) {
        JsonNode log = req.get("log");
        if (log == null || !log.isTextual()) {
            throw StrandException.badRequest("'log' is required");
        }
        return Names.object("log", log.asText());
    }

    /** A read op's field as the text its HTTP query parameter would be; a number with a fraction (1.0) is refused, as HTTP refuses "1.0". */
    private static String field(JsonNode req, String name) {
        JsonNode v = req.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isNumber() && !v.isIntegralNumber()) {
            throw StrandException.badRequest("'" + name + "' must be an integer, not " + v);
        }
        return v.asText();
    }

    /** Replies once {@code result} completes (usually on a writer thread: see {@link SocketWriter#sendLater}). */
    private void complete(JsonNode id, CompletableFuture<? extends JsonNode> result) {
        result.whenComplete((body, t) -> out.sendLater(t != null
                ? ApiErrors.socketReply(id, ApiErrors.classify(t)) : okReply(id, body)));
    }

    private void ok(JsonNode id, JsonNode body) {
        out.send(okReply(id, body));
    }

    /** The request's id as JSON: a number as is; anything else through Jackson ({@code JsonNode.toString} builds a writer per call). */
    private static String idJson(JsonNode id) {
        return id.isIntegralNumber() ? id.asText() : Json.string(id);
    }

    private static String okReply(JsonNode id, JsonNode body) {
        ObjectNode reply = Json.MAPPER.createObjectNode();
        reply.set("id", id);
        reply.put("ok", true);
        if (body instanceof ObjectNode o) {
            reply.setAll(o);
        }
        return Json.string(reply);
    }

    private void reply(JsonNode id, StrandException e) {
        out.send(ApiErrors.socketReply(id, e));
    }
}

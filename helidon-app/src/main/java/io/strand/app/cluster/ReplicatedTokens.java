package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.Scope;
import io.strand.app.auth.TokenRegistry;
import io.strand.app.stores.Placement;
import io.strand.core.Agent;
import io.strand.core.Entry;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.Page;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * Thread-safe: the view is a concurrent map, and following the log holds one lock (the follower
 * agent and a request that catches up take turns). The cluster's token registry (SPEC §13): every
 * mint and revocation is an entry of the log {@value #LOG} in the reserved workspace
 * {@code _system}, appended through the node's write path, so the mint or revoke is answered only
 * once a majority of that workspace's shard replicas hold it. Every node follows the log from its own
 * replica into a map of the tokens it knows: an {@link Agent} ({@code strand-token-follower})
 * catches up every {@link #FOLLOW_PERIOD}, and a lookup of an unknown id first waits for a read
 * barrier on the shard and catches up ({@link #findCurrent}), so a token minted on another node
 * works here as soon as its mint was answered. Revocations reach this node's sockets within one
 * follow period (plus the replication lag); {@link #onRevoked} re-checks them at once.
 *
 * <p>Entry data (JSON, one record per entry, in log order):
 * <pre>
 * | record  | data                                                            |
 * |---------|-----------------------------------------------------------------|
 * | mint    | {@code {"op":"mint","jti":"9f…","ws":"acme","scope":"rw","exp":1764453600}} |
 * | revoke  | {@code {"op":"revoke","jti":"9f…"}}                                        |
 * </pre>
 * {@code ws} is a workspace or {@code *}; {@code exp} is epoch seconds. Commit point: the Raft
 * commit of the append. A mint of an already expired token is skipped; a revoke of a token this view
 * does not hold (expired and tidied) changes nothing. An entry that does not parse is corruption: the
 * follower stops at it and reports it through its agent, never skipping it.
 */
final class ReplicatedTokens implements TokenRegistry {
    static final String LOG = "tokens";
    static final Duration FOLLOW_PERIOD = Duration.ofMillis(200);
    private static final String SYSTEM = Names.SYSTEM_WORKSPACE;
    private static final Pattern JTI = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final int PAGE = 512;
    private static final long TIDY_EVERY_SECONDS = 60;

    private final Placement placement;
    private final LongSupplier nowSeconds;
    private final Map<String, TokenRecord> tokens = new ConcurrentHashMap<>();
    private final ReentrantLock followLock = new ReentrantLock();
    /** The next seq of the log to apply; guarded by {@link #followLock}. */
    private long next = 1;
    /** When expired tokens were last dropped; guarded by {@link #followLock}. */
    private long tidiedAt;
    private volatile Runnable revokedListener = () -> { };
    private Agent follower;

    ReplicatedTokens(Placement placement, LongSupplier nowSeconds) {
        this.placement = placement;
        this.nowSeconds = nowSeconds;
        this.tidiedAt = nowSeconds.getAsLong();
    }

    /** Starts the follower: each pass runs {@code beforeEachPass}, then catches up. Idempotent. */
    synchronized void follow(Runnable beforeEachPass) {
        if (follower == null) {
            follower = Agent.start("strand-token-follower", FOLLOW_PERIOD, () -> {
                beforeEachPass.run();
                catchUp();
            }, true);
        }
    }

    @Override
    public Optional<TokenRecord> find(String jti) {
        return Optional.ofNullable(tokens.get(jti));
    }

    @Override
    public Optional<TokenRecord> findCurrent(String jti) {
        Optional<TokenRecord> known = find(jti);
        if (known.isPresent()) {
            return known;
        }
        placement.awaitCaughtUp(SYSTEM);
        catchUp();
        return find(jti);
    }

    @Override
    public void minted(TokenRecord t) {
        ObjectNode r = Json.MAPPER.createObjectNode().put("op", "mint").put("jti", t.jti()).put("ws", t.ws())
                .put("scope", t.scope().wire()).put("exp", t.exp());
        append(r);
        tokens.putIfAbsent(t.jti(), t); // the follower may have applied it, and a revocation after it, already
    }

    @Override
    public boolean revoke(String jti) {
        Optional<TokenRecord> t = findCurrent(jti);
        if (t.isEmpty()) {
            return false;
        }
        if (!t.get().revoked()) {
            append(Json.MAPPER.createObjectNode().put("op", "revoke").put("jti", jti));
            tokens.computeIfPresent(jti, (k, v) -> v.revoke());
            revokedListener.run();
        }
        return true;
    }

    @Override
    public void onRevoked(Runnable listener) {
        revokedListener = listener;
    }

    /** Appends one record and waits until a quorum of the shard holds it. */
    private void append(ObjectNode record) {
        try {
            placement.writes().append(SYSTEM, LOG, AppendRequest.of(Json.bytes(record))).join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    /** Applies every entry of this node's replica of the log that this view has not applied yet. */
    void catchUp() {
        followLock.lock();
        boolean revoked = false;
        try {
            long now = nowSeconds.getAsLong();
            Page page;
            do {
                page = placement.local(SYSTEM).logs().readForward(SYSTEM, LOG, next, PAGE);
                if (page.gap() != null) {
                    throw new StrandException(ErrorCode.CORRUPT, "the token log " + SYSTEM + "/" + LOG + " lost seqs "
                            + page.gap().from() + ".." + page.gap().to() + ": revocations in them cannot be known");
                }
                for (Entry e : page.entries()) {
                    revoked |= apply(e, now);
                    next = e.seq() + 1;
                }
            } while (page.entries().size() == PAGE);
            if (now - tidiedAt >= TIDY_EVERY_SECONDS) {
                tokens.values().removeIf(t -> t.exp() <= now);
                tidiedAt = now;
            }
        } finally {
            followLock.unlock();
            if (revoked) {
                revokedListener.run();
            }
        }
    }

    /** Applies one record; true when it revoked a token this view holds. */
    private boolean apply(Entry e, long now) {
        JsonNode r;
        try {
            r = Json.parseStored(e.data());
        } catch (StrandException bad) {
            throw corrupt(e, "not JSON");
        }
        if (r == null || !r.isObject()) {
            throw corrupt(e, "not a JSON object");
        }
        String jti = r.path("jti").asText("");
        if (!JTI.matcher(jti).matches()) {
            throw corrupt(e, "no valid jti");
        }
        switch (r.path("op").asText("")) {
            case "mint" -> {
                String ws = r.path("ws").asText("");
                if (!"*".equals(ws) && !Names.isWorkspace(ws) || !r.path("exp").canConvertToLong()) {
                    throw corrupt(e, "a mint needs ws and exp");
                }
                Scope scope;
                try {
                    scope = Scope.parse(r.path("scope").asText(""));
                } catch (IllegalArgumentException bad) {
                    throw corrupt(e, bad.getMessage());
                }
                long exp = r.path("exp").asLong();
                if (exp > now) {
                    tokens.putIfAbsent(jti, new TokenRecord(jti, ws, scope, exp, false));
                }
                return false;
            }
            case "revoke" -> {
                TokenRecord before = tokens.get(jti);
                tokens.computeIfPresent(jti, (k, v) -> v.revoke());
                return before != null && !before.revoked();
            }
            default -> throw corrupt(e, "unknown op");
        }
    }

    private static StrandException corrupt(Entry e, String why) {
        return new StrandException(ErrorCode.CORRUPT, "corrupt record at seq " + e.seq() + " of the token log "
                + SYSTEM + "/" + LOG + " (" + why + "): the token follower stops there");
    }

    /** The next seq to apply (tests). */
    long next() {
        followLock.lock();
        try {
            return next;
        } finally {
            followLock.unlock();
        }
    }

    @Override
    public synchronized void close() {
        if (follower != null) {
            follower.close();
            follower = null;
        }
    }
}

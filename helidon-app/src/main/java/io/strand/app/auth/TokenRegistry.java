package io.strand.app.auth;

import java.util.Optional;

/**
 * Every token minted and every revocation, as {@link JwtAuthenticator} needs them: the node's own
 * file on a single node ({@link TokenJournal}), the cluster's {@code _system} log followed into a
 * local view in a cluster ({@link ReplicatedTokens}). Implementations are thread-safe.
 */
public interface TokenRegistry extends AutoCloseable {
    /** One minted token. */
    record TokenRecord(String jti, String ws, Scope scope, long exp, boolean revoked) {
        public TokenRecord revoke() {
            return new TokenRecord(jti, ws, scope, exp, true);
        }
    }

    /** What this node knows of {@code jti} now. */
    Optional<TokenRecord> find(String jti);

    /**
     * As {@link #find}, but a registry that can lag behind other nodes first catches up with every
     * record acknowledged before the call: a token minted elsewhere is known here once its mint was
     * answered. The same as {@link #find} where nothing lags.
     */
    default Optional<TokenRecord> findCurrent(String jti) {
        return find(jti);
    }

    /** Records a new token; returns once the record is durable. */
    void minted(TokenRecord t);

    /** Marks {@code jti} revoked, durably; false when the token is unknown. Idempotent. */
    boolean revoke(String jti);

    /**
     * Runs {@code listener} whenever a revocation reaches this node (open sockets re-check their
     * token at once). Single-node revocations are seen by the socket sweeper's next pass instead.
     */
    default void onRevoked(Runnable listener) {
    }

    @Override
    void close();
}

package io.strand.app.cluster;

import io.strand.app.auth.AuthFiles;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.stores.Placement;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Owned by the thread of the {@code strand-token-follower} agent, which runs {@link #run} before
 * each catch-up. Auth as cluster state (SPEC §13): wires a node's {@link JwtAuthenticator} to the
 * reserved workspace {@code _system}, which one shard's Raft group replicates like any workspace.
 * The signing secret is the doc {@code _system/auth} ({@link SharedSecret}), tokens and
 * revocations the log {@code _system/tokens} ({@link ReplicatedTokens}), admin actions the log
 * {@code _system/audit} (already written through the node's write path). The follower first loads
 * the secret (then every node writes the same derived root token to its {@code DATA/root.token}),
 * then follows the token log. Until the secret is loaded (a new cluster waiting for a quorum) the
 * node answers every authenticated request {@code 503 unavailable} and its {@code auth} readiness
 * check is DOWN; it also waits, after loading the secret, until its token view has caught up through
 * a read barrier, so a restarted node never accepts a token revoked while it was down. Nothing of single-node auth ({@code DATA/secret}, {@code DATA/tokens.journal}) is
 * used.
 */
public final class ClusterAuth implements Runnable {
    /** After a proposal of the secret got no quorum, the next one waits this long (a replicated doc is read every pass meanwhile). */
    static final Duration PROPOSAL_BACKOFF = Duration.ofSeconds(5);
    private final Placement placement;
    private final JwtAuthenticator auth;
    private final ReplicatedTokens tokens;
    private final LongSupplier nowSeconds;
    private long nextProposalNanos = System.nanoTime();

    ClusterAuth(Placement placement, JwtAuthenticator auth, ReplicatedTokens tokens, LongSupplier nowSeconds) {
        this.placement = placement;
        this.auth = auth;
        this.tokens = tokens;
        this.nowSeconds = nowSeconds;
    }

    /** The authenticator of a cluster node whose data directory is {@code dataDir}; close it before the placement. */
    public static JwtAuthenticator open(Path dataDir, Placement placement) {
        return open(dataDir, placement, () -> System.currentTimeMillis() / 1000);
    }

    static JwtAuthenticator open(Path dataDir, Placement placement, LongSupplier nowSeconds) {
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data dir " + dataDir, e);
        }
        ReplicatedTokens tokens = new ReplicatedTokens(placement, nowSeconds);
        JwtAuthenticator auth = JwtAuthenticator.awaitingSharedSecret(tokens, dataDir.resolve(AuthFiles.ROOT_TOKEN), nowSeconds);
        tokens.follow(new ClusterAuth(placement, auth, tokens, nowSeconds));
        return auth;
    }

    /** Loads the secret while this node has none: this replica's copy, else (at most every {@link #PROPOSAL_BACKOFF} while the shard has no quorum) a proposal. */
    @Override
    public void run() {
        if (auth.keyed()) {
            return;
        }
        Optional<SharedSecret.Key> key = SharedSecret.readLocal(placement);
        if (key.isEmpty() && System.nanoTime() - nextProposalNanos >= 0) {
            key = SharedSecret.propose(placement, nowSeconds.getAsLong());
            if (key.isEmpty()) {
                nextProposalNanos = System.nanoTime() + PROPOSAL_BACKOFF.toNanos();
            }
        }
        if (key.isPresent() && tokensCurrent()) {
            auth.useSharedSecret(key.get().secret(), key.get().createdAt());
        }
    }

    /**
     * True once the token view holds every mint and revocation acknowledged before this call: a read
     * barrier on {@code _system}'s shard, then a catch-up. A node restarted while a token was revoked
     * would otherwise accept it from its own stale replica until the follower caught up (found by
     * ClusterAuthIT). While the barrier cannot be had (no majority reachable, or this replica not
     * caught up in time) the node stays unkeyed: 503, and the next pass asks again.
     */
    private boolean tokensCurrent() {
        try {
            if (!placement.awaitCaughtUp(io.strand.core.Names.SYSTEM_WORKSPACE)) {
                return false;
            }
        } catch (io.strand.core.StrandException e) {
            if (e.code() == io.strand.core.ErrorCode.UNAVAILABLE) {
                return false;
            }
            throw e;
        }
        tokens.catchUp();
        return true;
    }
}

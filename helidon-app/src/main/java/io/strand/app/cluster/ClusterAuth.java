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
 * check is DOWN. Nothing of single-node auth ({@code DATA/secret}, {@code DATA/tokens.journal}) is
 * used.
 */
public final class ClusterAuth implements Runnable {
    /** After a proposal of the secret got no quorum, the next one waits this long (a replicated doc is read every pass meanwhile). */
    static final Duration PROPOSAL_BACKOFF = Duration.ofSeconds(5);
    private final Placement placement;
    private final JwtAuthenticator auth;
    private final LongSupplier nowSeconds;
    private long nextProposalNanos = System.nanoTime();

    ClusterAuth(Placement placement, JwtAuthenticator auth, LongSupplier nowSeconds) {
        this.placement = placement;
        this.auth = auth;
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
        tokens.follow(new ClusterAuth(placement, auth, nowSeconds));
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
        key.ifPresent(k -> auth.useSharedSecret(k.secret(), k.createdAt()));
    }
}

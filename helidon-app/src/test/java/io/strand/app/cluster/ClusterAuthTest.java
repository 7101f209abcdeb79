package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.auth.Principal;
import io.strand.app.stores.Placement;
import io.strand.app.stores.SingleNode;
import io.strand.app.stores.Stores;
import io.strand.app.stores.WritePath;
import io.strand.core.Durability;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.docstore.DocId;
import io.strand.logtier.AppendRequest;
import io.strand.logtier.AppendResult;
import io.strand.logtier.Retention;
import io.strand.logtier.RetentionPolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading the cluster's secret: a node waiting for a quorum proposes rarely and picks up a replicated key at once. */
class ClusterAuthTest {
    @TempDir
    Path dir;
    Stores stores;
    SingleNode replica;

    @BeforeEach
    void open() {
        stores = Stores.open("t", ServerConfig.from(Map.of()), dir.resolve("replica"), Durability.OS, 1, new StrandMetrics(), null);
        replica = new SingleNode(stores);
    }

    @AfterEach
    void close() {
        stores.close();
    }

    /** This node's replica, with a shard that has no quorum: every proposal is refused with 503. */
    final class NoQuorum implements Placement {
        final AtomicInteger proposals = new AtomicInteger();
        /** What a read barrier on the shard gives: false = no majority reachable, the local copy may be stale. */
        volatile boolean current = true;

        @Override
        public Stores local(String ws) {
            return stores;
        }

        @Override
        public boolean awaitCaughtUp(String ws) {
            return current;
        }

        @Override
        public WritePath writes() {
            return new WritePath() {
                @Override
                public CompletableFuture<AppendResult> append(String ws, String log, AppendRequest req) {
                    return CompletableFuture.failedFuture(new StrandException(ErrorCode.UNAVAILABLE, "no quorum"));
                }

                @Override
                public CompletableFuture<ObjectNode> doc(String op, DocId id, JsonNode body) {
                    proposals.incrementAndGet();
                    return CompletableFuture.failedFuture(new StrandException(ErrorCode.UNAVAILABLE, "no quorum"));
                }

                @Override
                public CompletableFuture<ObjectNode> txn(String ws, JsonNode body, Principal who) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public CompletableFuture<Boolean> deleteLog(String ws, String log) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public CompletableFuture<Retention.Trimmed> trim(String ws, String log, long before) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public CompletableFuture<RetentionPolicy> retention(String ws, String log, RetentionPolicy policy) {
                    throw new UnsupportedOperationException();
                }
            };
        }

        @Override
        public List<Stores> all() {
            return List.of(stores);
        }

        @Override
        public String durableWire() {
            return "quorum";
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aNodeWithoutQuorumShouldProposeOncePerBackoffAndLoadAReplicatedKeyAtOnce() throws Exception {
        NoQuorum placement = new NoQuorum();
        ReplicatedTokens tokens = new ReplicatedTokens(placement, () -> 1_800_000_000L);
        Path rootFile = dir.resolve("node/root.token");
        JwtAuthenticator auth = JwtAuthenticator.awaitingSharedSecret(tokens, rootFile, () -> 1_800_000_000L);
        ClusterAuth loader = new ClusterAuth(placement, auth, tokens, () -> 1_800_000_000L);
        loader.run();
        loader.run();
        loader.run();
        assertEquals(1, placement.proposals.get(), "one proposal per back-off while the shard has no quorum");
        assertFalse(auth.keyed());
        assertFalse(Files.exists(rootFile));
        // another node's proposal reaches this replica through the log
        replica.writes().doc("put", DocId.of("_system", SharedSecret.DOC), SharedSecret.proposal(1_700_000_000L)).join();
        loader.run();
        assertTrue(auth.keyed());
        assertEquals(1, placement.proposals.get());
        Principal root = auth.authenticate(Files.readString(rootFile).trim());
        assertTrue(root.isRoot());
        assertEquals(1_700_000_000L + JwtAuthenticator.ROOT_TTL_SECONDS, root.expEpochSeconds());
    }

    @Test
    void aNodeShouldStayUnkeyedUntilItsTokenViewIsCurrent() throws Exception {
        NoQuorum placement = new NoQuorum();
        ReplicatedTokens tokens = new ReplicatedTokens(placement, () -> 1_800_000_000L);
        JwtAuthenticator auth = JwtAuthenticator.awaitingSharedSecret(tokens, dir.resolve("node/root.token"), () -> 1_800_000_000L);
        ClusterAuth loader = new ClusterAuth(placement, auth, tokens, () -> 1_800_000_000L);
        replica.writes().doc("put", DocId.of("_system", SharedSecret.DOC), SharedSecret.proposal(1_700_000_000L)).join();
        for (String op : List.of("{\"op\":\"mint\",\"jti\":\"gone\",\"ws\":\"acme\",\"scope\":\"read\",\"exp\":1900000000}",
                "{\"op\":\"revoke\",\"jti\":\"gone\"}")) {
            replica.writes().append("_system", ReplicatedTokens.LOG, AppendRequest.of(op.getBytes(java.nio.charset.StandardCharsets.UTF_8))).join();
        }
        placement.current = false; // restarted, no read barrier yet: its replica may miss a revocation
        loader.run();
        assertFalse(auth.keyed(), "no token is accepted from a view that may be stale");
        placement.current = true;
        loader.run();
        assertTrue(auth.keyed());
        assertTrue(tokens.find("gone").orElseThrow().revoked(), "the view caught up before the key was published");
    }
}

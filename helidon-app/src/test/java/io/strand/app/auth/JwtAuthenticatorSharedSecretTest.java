package io.strand.app.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.auth.TokenRegistry.TokenRecord;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A cluster node's authenticator (SPEC §13): the cluster's secret, the derived root token, lookups that catch up. */
class JwtAuthenticatorSharedSecretTest {
    @TempDir
    Path dir;
    final AtomicLong now = new AtomicLong(1_800_000_000L);
    /** The cluster's token log as every node's registry sees it once caught up. */
    final Map<String, TokenRecord> cluster = new ConcurrentHashMap<>();
    static final byte[] SECRET = new byte[32];

    static {
        Arrays.fill(SECRET, (byte) 7);
    }

    /** One node's view: knows what it minted itself, learns the others' only when it catches up. */
    final class NodeView implements TokenRegistry {
        final Map<String, TokenRecord> known = new ConcurrentHashMap<>();
        final AtomicInteger catchUps = new AtomicInteger();

        @Override
        public Optional<TokenRecord> find(String jti) {
            return Optional.ofNullable(known.get(jti));
        }

        @Override
        public Optional<TokenRecord> findCurrent(String jti) {
            catchUps.incrementAndGet();
            known.putAll(cluster);
            return find(jti);
        }

        @Override
        public void minted(TokenRecord t) {
            cluster.put(t.jti(), t);
            known.put(t.jti(), t);
        }

        @Override
        public boolean revoke(String jti) {
            if (findCurrent(jti).isEmpty()) {
                return false;
            }
            cluster.computeIfPresent(jti, (k, v) -> v.revoke());
            known.computeIfPresent(jti, (k, v) -> v.revoke());
            return true;
        }

        @Override
        public void close() {
        }
    }

    private JwtAuthenticator node(String id, NodeView view) {
        return JwtAuthenticator.awaitingSharedSecret(view, dir.resolve(id).resolve("root.token"), now::get);
    }

    @Test
    void useSharedSecretShouldWriteByteIdenticalRootTokensOnEveryNode() throws Exception {
        long createdAt = now.get() - 5000;
        JwtAuthenticator n1 = node("n1", new NodeView());
        now.addAndGet(17); // another node, another moment: the root token depends on the secret's creation only
        JwtAuthenticator n2 = node("n2", new NodeView());
        n1.useSharedSecret(SECRET, createdAt);
        n2.useSharedSecret(SECRET, createdAt);
        byte[] one = Files.readAllBytes(dir.resolve("n1/root.token"));
        assertTrue(Arrays.equals(one, Files.readAllBytes(dir.resolve("n2/root.token"))), "the same root.token bytes");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("n2/root.token"))));
        Principal root = n2.authenticate(new String(one).trim());
        assertTrue(root.isRoot());
        assertEquals(JwtAuthenticator.ROOT_JTI, root.jti());
        assertEquals(createdAt + JwtAuthenticator.ROOT_TTL_SECONDS, root.expEpochSeconds());
        assertTrue(n1.stillValid(root));
    }

    @Test
    void aNodeShouldAnswerUnavailableUntilItHasTheSharedSecret() {
        JwtAuthenticator n1 = node("n1", new NodeView());
        assertFalse(n1.keyed());
        assertEquals(ErrorCode.UNAVAILABLE, assertThrows(StrandException.class, () -> n1.authenticate("a.b.c")).code());
        assertEquals(ErrorCode.UNAVAILABLE, assertThrows(StrandException.class, () -> n1.mint("acme", Scope.READ, 60)).code());
        assertFalse(Files.exists(dir.resolve("n1/root.token")), "no root token before the secret is known");
        n1.useSharedSecret(SECRET, now.get());
        assertTrue(n1.keyed());
        n1.mint("acme", Scope.READ, 60);
    }

    @Test
    void aTokenMintedOnAnotherNodeShouldBeAcceptedAfterOneCatchUp() {
        NodeView view1 = new NodeView();
        NodeView view2 = new NodeView();
        JwtAuthenticator n1 = node("n1", view1);
        JwtAuthenticator n2 = node("n2", view2);
        n1.useSharedSecret(SECRET, now.get());
        n2.useSharedSecret(SECRET, now.get());
        JwtAuthenticator.Minted t = n1.mint("acme", Scope.RW, 3600);
        assertEquals("acme", n2.authenticate(t.token()).ws());
        assertEquals(1, view2.catchUps.get(), "an unknown id costs one catch-up");
        n2.authenticate(t.token());
        assertEquals(1, view2.catchUps.get(), "a known id costs none");
        assertTrue(n1.revoke(t.jti()));
        view2.findCurrent(t.jti()); // n2 follows the log
        StrandException e = assertThrows(StrandException.class, () -> n2.authenticate(t.token()));
        assertEquals(ErrorCode.UNAUTHORIZED, e.code());
        assertEquals("the token was revoked", e.getMessage());
    }

    @Test
    void theDerivedRootTokenShouldNotBeRevocableNorReminted() {
        JwtAuthenticator n1 = node("n1", new NodeView());
        n1.useSharedSecret(SECRET, now.get());
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(StrandException.class, () -> n1.revoke(JwtAuthenticator.ROOT_JTI)).code());
        assertThrows(IllegalArgumentException.class, () -> n1.mint("*", Scope.ADMIN, 60, JwtAuthenticator.ROOT_JTI));
        assertTrue(n1.token(JwtAuthenticator.ROOT_JTI).isPresent());
    }

    @Test
    void useSharedSecretShouldRefuseASecondDifferentSecret() {
        JwtAuthenticator n1 = node("n1", new NodeView());
        n1.useSharedSecret(SECRET, now.get());
        n1.useSharedSecret(SECRET, now.get()); // the same again: nothing changes
        byte[] other = SECRET.clone();
        other[0] ^= 1;
        assertThrows(IllegalStateException.class, () -> n1.useSharedSecret(other, now.get()));
    }
}

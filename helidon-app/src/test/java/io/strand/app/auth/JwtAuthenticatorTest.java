package io.strand.app.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import io.strand.app.testing.Tokens;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JwtAuthenticatorTest {
    @TempDir
    Path dir;
    final AtomicLong now = new AtomicLong(1_800_000_000L);

    private JwtAuthenticator open() {
        return JwtAuthenticator.open(dir, now::get);
    }

    private static void assertUnauthorized(JwtAuthenticator auth, String token, String why) {
        StrandException e = assertThrows(StrandException.class, () -> auth.authenticate(token), why);
        assertEquals(ErrorCode.UNAUTHORIZED, e.code(), why + ": " + e.getMessage());
    }

    /** A CLI takes a jti as an argument: one starting with '-' (1 in 64 base64url ids did) would read as an option. */
    @Test
    void jtisShouldBeHexSoTheCliTakesThemAsArguments() {
        try (JwtAuthenticator auth = open()) {
            for (int i = 0; i < 256; i++) {
                String jti = auth.mint("acme", Scope.READ, 60).jti();
                assertTrue(jti.matches("[0-9a-f]{32}"), jti);
            }
        }
    }

    @Test
    void openShouldCreateOwnerOnlySecretAndRootTokenWhenTheDataDirIsNew() throws Exception {
        try (JwtAuthenticator auth = open()) {
            for (String name : new String[] {"secret", "root.token", "tokens.journal"}) {
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(name))), name);
            }
            assertEquals(32, Files.size(dir.resolve("secret")));
            var lines = Files.readAllLines(dir.resolve("root.token"));
            assertEquals(1, lines.size());
            Principal root = auth.authenticate(lines.getFirst());
            assertTrue(root.isRoot());
            assertTrue(root.expEpochSeconds() - now.get() > 9L * 365 * 24 * 3600, "a long-lived root token");
        }
    }

    @Test
    void openShouldKeepTheSecretAndRootTokenWhenRestarted() throws Exception {
        open().close();
        byte[] secret = Files.readAllBytes(dir.resolve("secret"));
        String token = Files.readString(dir.resolve("root.token"));
        open().close();
        assertEquals(token, Files.readString(dir.resolve("root.token")));
        assertEquals(new String(secret, StandardCharsets.ISO_8859_1),
                new String(Files.readAllBytes(dir.resolve("secret")), StandardCharsets.ISO_8859_1));
    }

    @Test
    void authenticateShouldRefuseEveryBadTokenWith401() throws Exception {
        try (JwtAuthenticator auth = open()) {
            byte[] secret = Files.readAllBytes(dir.resolve("secret"));
            JwtAuthenticator.Minted rw = auth.mint("acme", Scope.RW, 3600);
            assertEquals("acme", auth.authenticate(rw.token()).ws());
            assertUnauthorized(auth, null, "missing");
            assertUnauthorized(auth, "", "empty");
            assertUnauthorized(auth, "not-a-token", "malformed");
            assertUnauthorized(auth, "a.b.c", "malformed parts");
            assertUnauthorized(auth, "x".repeat(5000), "oversize");
            assertUnauthorized(auth, Tokens.tampered(rw.token()), "tampered claims");
            assertUnauthorized(auth, rw.token().substring(0, rw.token().length() - 2) + "AA", "tampered signature");
            assertUnauthorized(auth, Tokens.algNone(rw.token()), "alg none");
            byte[] longKey = new byte[64];
            System.arraycopy(secret, 0, longKey, 0, 32);
            System.arraycopy(secret, 0, longKey, 32, 32);
            assertUnauthorized(auth, Tokens.sign(longKey, JWSAlgorithm.HS512, "acme", "rw", rw.jti(), rw.exp()), "HS512");
            assertUnauthorized(auth, Tokens.sign(secret, JWSAlgorithm.HS256, "acme", "rw", rw.jti(), now.get() - 1), "expired");
            assertUnauthorized(auth, Tokens.sign(secret, JWSAlgorithm.HS256, "acme", "rw", "neverMinted", rw.exp()), "unknown jti");
            assertUnauthorized(auth, Tokens.sign(secret, JWSAlgorithm.HS256, "acme", "owner", rw.jti(), rw.exp()), "bad scope");
            assertUnauthorized(auth, Tokens.sign(new byte[32], JWSAlgorithm.HS256, "acme", "rw", rw.jti(), rw.exp()), "other key");
            assertTrue(auth.revoke(rw.jti()));
            assertUnauthorized(auth, rw.token(), "revoked");
        }
    }

    @Test
    void stillValidShouldTurnFalseWhenTheTokenExpiresOrIsRevoked() {
        try (JwtAuthenticator auth = open()) {
            JwtAuthenticator.Minted shortLived = auth.mint("acme", Scope.READ, 10);
            JwtAuthenticator.Minted revoked = auth.mint("acme", Scope.READ, 3600);
            Principal p1 = auth.authenticate(shortLived.token());
            Principal p2 = auth.authenticate(revoked.token());
            assertTrue(auth.stillValid(p1));
            assertTrue(auth.stillValid(p2));
            auth.revoke(revoked.jti());
            assertFalse(auth.stillValid(p2));
            now.addAndGet(10);
            assertFalse(auth.stillValid(p1));
            assertUnauthorized(auth, shortLived.token(), "expired");
        }
    }

    @Test
    void revocationShouldSurviveARestart() {
        JwtAuthenticator.Minted t;
        try (JwtAuthenticator auth = open()) {
            t = auth.mint("acme", Scope.ADMIN, 3600);
            assertTrue(auth.revoke(t.jti()));
            assertTrue(auth.revoke(t.jti()), "revoking twice is fine");
            assertFalse(auth.revoke("neverMinted"));
        }
        try (JwtAuthenticator auth = open()) {
            assertUnauthorized(auth, t.token(), "revoked before the restart");
            assertTrue(auth.token(t.jti()).orElseThrow().revoked());
        }
    }

    @Test
    void openShouldCutATornLastRecordAndKeepAppending() throws Exception {
        JwtAuthenticator.Minted t;
        try (JwtAuthenticator auth = open()) {
            t = auth.mint("acme", Scope.RW, 3600);
        }
        Files.writeString(dir.resolve("tokens.journal"), "r " + t.jti(), StandardOpenOption.APPEND); // crash mid-revoke
        try (JwtAuthenticator auth = open()) {
            assertEquals("acme", auth.authenticate(t.token()).ws(), "the torn revoke was never acknowledged");
            assertTrue(auth.revoke(t.jti()));
        }
        try (JwtAuthenticator auth = open()) {
            assertUnauthorized(auth, t.token(), "revoked after the repair");
        }
    }

    @Test
    void openShouldRefuseACorruptJournalRecord() throws Exception {
        open().close();
        Files.writeString(dir.resolve("tokens.journal"), "m bad record\n", StandardOpenOption.APPEND);
        IllegalStateException e = assertThrows(IllegalStateException.class, this::open);
        assertTrue(e.getMessage().contains("corrupt token journal"), e.getMessage());
    }

    @Test
    void openShouldReplaceTheRootTokenWhenItWasRevokedAndDropExpiredRecords() throws Exception {
        String first;
        try (JwtAuthenticator auth = open()) {
            first = Files.readString(dir.resolve("root.token")).trim();
            auth.mint("acme", Scope.READ, 5);
            auth.revoke(Tokens.jti(first));
        }
        now.addAndGet(60);
        try (JwtAuthenticator auth = open()) {
            String second = Files.readString(dir.resolve("root.token")).trim();
            assertNotEquals(first, second);
            assertTrue(auth.authenticate(second).isRoot());
            long mints = Files.readAllLines(dir.resolve("tokens.journal")).stream().filter(l -> l.startsWith("m ")).count();
            assertEquals(2, mints, "the expired read token is tidied away; the revoked root stays until it expires");
        }
    }

    @Test
    void mintShouldRefuseABadWorkspaceOrLifetime() {
        try (JwtAuthenticator auth = open()) {
            assertEquals(ErrorCode.INVALID_NAME, assertThrows(StrandException.class, () -> auth.mint("_system", Scope.READ, 60)).code());
            assertEquals(ErrorCode.BAD_REQUEST, assertThrows(StrandException.class, () -> auth.mint("acme", Scope.READ, 0)).code());
        }
    }
}

package io.strand.app.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.strand.app.auth.TokenJournal.TokenRecord;
import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.text.ParseException;
import java.util.Date;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Signed tokens (SPEC §8): HS256 JWTs with claims {@code ws} (a workspace or {@code *}),
 * {@code scope}, {@code exp} and {@code jti}, signed with the data directory's 256-bit secret
 * (nimbus-jose-jwt does the crypto). A token is accepted only if it is HS256, its signature checks,
 * it has not expired, and its {@code jti} was minted here and not revoked ({@link TokenJournal}).
 * Thread-safe: the key material is immutable and token state lives in the journal.
 */
public final class JwtAuthenticator implements Authenticator, AutoCloseable {
    /** The root token's lifetime: ten years. */
    public static final long ROOT_TTL_SECONDS = 10L * 366 * 24 * 3600;
    static final int MAX_TOKEN_CHARS = 4096;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final MACSigner signer;
    private final MACVerifier verifier;
    private final TokenJournal journal;
    private final LongSupplier nowSeconds;
    private final Path rootTokenFile;

    /** What a mint returns: the token, its id and its expiry (epoch seconds). */
    public record Minted(String token, String jti, long exp) {
    }

    /** Who holds a token: its workspace (or {@code *}) and scope, and whether it was revoked. */
    public record TokenInfo(String jti, String ws, Scope scope, long exp, boolean revoked) {
    }

    private JwtAuthenticator(byte[] secret, TokenJournal journal, LongSupplier nowSeconds, Path rootTokenFile) {
        try {
            this.signer = new MACSigner(secret);
            this.verifier = new MACVerifier(secret);
        } catch (JOSEException e) {
            throw new IllegalStateException("the signing key is unusable: " + e.getMessage(), e);
        }
        this.journal = journal;
        this.nowSeconds = nowSeconds;
        this.rootTokenFile = rootTokenFile;
    }

    /**
     * Opens the auth state in {@code dataDir}: the secret (created on first start), the token
     * journal, and {@code root.token}, which is (re)written whenever it is missing or no longer
     * valid (expired, revoked, or from another secret).
     */
    public static JwtAuthenticator open(Path dataDir) {
        return open(dataDir, () -> System.currentTimeMillis() / 1000);
    }

    /** As {@link #open(Path)} with a clock in epoch seconds, for tests. */
    public static JwtAuthenticator open(Path dataDir, LongSupplier nowSeconds) {
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data dir " + dataDir, e);
        }
        byte[] secret = AuthFiles.secret(dataDir);
        TokenJournal journal = TokenJournal.open(dataDir, nowSeconds.getAsLong());
        JwtAuthenticator auth = new JwtAuthenticator(secret, journal, nowSeconds, dataDir.resolve(AuthFiles.ROOT_TOKEN));
        auth.ensureRootToken();
        return auth;
    }

    private void ensureRootToken() {
        try {
            if (Files.exists(rootTokenFile)) {
                String existing = Files.readString(rootTokenFile, StandardCharsets.US_ASCII).trim();
                try {
                    if (authenticate(existing).isRoot()) {
                        return;
                    }
                } catch (StrandException stale) {
                    // replaced below
                }
            }
            Minted root = mint("*", Scope.ADMIN, ROOT_TTL_SECONDS);
            AuthFiles.writePrivate(rootTokenFile, (root.token() + "\n").getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + rootTokenFile, e);
        }
    }

    public Path rootTokenFile() {
        return rootTokenFile;
    }

    /** Signs a new token for {@code ws} (a workspace or {@code *}), recorded durably before it is returned. */
    public Minted mint(String ws, Scope scope, long ttlSeconds) {
        return mint(ws, scope, ttlSeconds, newJti());
    }

    /** A fresh token id, so a caller can name the token (in the audit log) before {@link #mint(String, Scope, long, String)}. */
    public static String newJti() {
        byte[] id = new byte[16];
        RANDOM.nextBytes(id);
        return java.util.HexFormat.of().formatHex(id); // hex: a base64url jti may start with '-', which a CLI reads as an option
    }

    /** As {@link #mint(String, Scope, long)} with the id {@code jti} from {@link #newJti()}. */
    public Minted mint(String ws, Scope scope, long ttlSeconds, String jti) {
        if (!TokenJournal.isJti(jti) || journal.find(jti).isPresent()) {
            throw new IllegalArgumentException("not a fresh token id: " + jti);
        }
        if (!"*".equals(ws) && !Names.isWorkspace(ws)) {
            throw new StrandException(ErrorCode.INVALID_NAME, "a token is for a workspace or '*', not '" + ws + "'");
        }
        if (ttlSeconds < 1 || ttlSeconds > ROOT_TTL_SECONDS) {
            throw StrandException.badRequest("ttlSeconds must be 1.." + ROOT_TTL_SECONDS + ", not " + ttlSeconds);
        }
        long now = nowSeconds.getAsLong();
        long exp = now + ttlSeconds;
        JWTClaimsSet claims = new JWTClaimsSet.Builder()
                .claim("ws", ws)
                .claim("scope", scope.wire())
                .issueTime(new Date(now * 1000))
                .expirationTime(new Date(exp * 1000))
                .jwtID(jti)
                .build();
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new IllegalStateException("cannot sign a token: " + e.getMessage(), e);
        }
        journal.minted(new TokenRecord(jti, ws, scope, exp, false));
        return new Minted(jwt.serialize(), jti, exp);
    }

    /** The token with this id, if this server minted it and it has not been tidied away after expiry. */
    public Optional<TokenInfo> token(String jti) {
        if (!TokenJournal.isJti(jti)) {
            return Optional.empty();
        }
        return journal.find(jti).map(t -> new TokenInfo(t.jti(), t.ws(), t.scope(), t.exp(), t.revoked()));
    }

    /** Revokes durably; false if the id is unknown. Open sockets notice within a sweep. */
    public boolean revoke(String jti) {
        return TokenJournal.isJti(jti) && journal.revoke(jti);
    }

    @Override
    public Principal authenticate(String token) {
        if (token == null || token.isEmpty()) {
            throw Authenticator.unauthorized("missing bearer token");
        }
        if (token.length() > MAX_TOKEN_CHARS) {
            throw Authenticator.unauthorized("malformed token: longer than " + MAX_TOKEN_CHARS + " characters");
        }
        SignedJWT jwt;
        JWTClaimsSet claims;
        try {
            jwt = SignedJWT.parse(token);
            claims = jwt.getJWTClaimsSet();
        } catch (ParseException | RuntimeException e) {
            throw Authenticator.unauthorized("malformed token");
        }
        if (!JWSAlgorithm.HS256.equals(jwt.getHeader().getAlgorithm())) {
            throw Authenticator.unauthorized("tokens must be signed with HS256, not " + jwt.getHeader().getAlgorithm());
        }
        try {
            if (!jwt.verify(verifier)) {
                throw Authenticator.unauthorized("bad token signature");
            }
        } catch (JOSEException e) {
            throw Authenticator.unauthorized("bad token signature");
        }
        Principal p = principal(claims);
        if (p.expEpochSeconds() <= nowSeconds.getAsLong()) {
            throw Authenticator.unauthorized("the token has expired");
        }
        TokenRecord known = journal.find(p.jti()).orElseThrow(() -> Authenticator.unauthorized("unknown token"));
        if (known.revoked()) {
            throw Authenticator.unauthorized("the token was revoked");
        }
        return p;
    }

    private static Principal principal(JWTClaimsSet claims) {
        try {
            String ws = claims.getStringClaim("ws");
            String scope = claims.getStringClaim("scope");
            String jti = claims.getJWTID();
            Date exp = claims.getExpirationTime();
            if (ws == null || scope == null || jti == null || exp == null
                    || (!"*".equals(ws) && !Names.isWorkspace(ws)) || !TokenJournal.isJti(jti)) {
                throw Authenticator.unauthorized("malformed token: it needs ws, scope, exp and jti");
            }
            return new Principal(ws, Scope.parse(scope), jti, exp.getTime() / 1000);
        } catch (ParseException | IllegalArgumentException e) {
            throw Authenticator.unauthorized("malformed token claims");
        }
    }

    /** False once the token expired or was revoked: the socket sweeper closes such sockets. */
    @Override
    public boolean stillValid(Principal principal) {
        if (principal.expEpochSeconds() <= nowSeconds.getAsLong()) {
            return false;
        }
        return journal.find(principal.jti()).map(t -> !t.revoked()).orElse(false);
    }

    @Override
    public void close() {
        journal.close();
    }
}

package io.strand.app.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.strand.app.auth.TokenRegistry.TokenRecord;
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
import java.util.Arrays;
import java.util.Date;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Signed tokens (SPEC §8): HS256 JWTs with claims {@code ws} (a workspace or {@code *}),
 * {@code scope}, {@code exp} and {@code jti}, signed with a 256-bit secret (nimbus-jose-jwt does the
 * crypto). A token is accepted only if it is HS256, its signature checks, it has not expired, and
 * its {@code jti} was minted and not revoked ({@link TokenRegistry}).
 * Thread-safe: the key material is immutable once published (one volatile write) and token state
 * lives in the registry.
 *
 * <p>Single node ({@link #open}): the secret is the data directory's own ({@link AuthFiles}), the
 * registry its {@link TokenJournal}, and the root token a minted one like any other. Cluster
 * (SPEC §13, {@link #awaitingSharedSecret}): the secret is the cluster's, published here by
 * {@link #useSharedSecret} once the node has read it; until then every check answers {@code 503
 * unavailable}. The root token is then derived from the secret alone (jti {@value #ROOT_JTI},
 * issued when the secret was created), so every node writes byte-identical {@code root.token} files;
 * it is not in the registry and cannot be revoked.
 */
public final class JwtAuthenticator implements Authenticator, AutoCloseable {
    /** The root token's lifetime: ten years. */
    public static final long ROOT_TTL_SECONDS = 10L * 366 * 24 * 3600;
    /** The id of a cluster's derived root token (minted ids are 32 hex digits, so none is this). */
    public static final String ROOT_JTI = "root";
    static final int MAX_TOKEN_CHARS = 4096;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Null until the secret is known (a cluster node that has not read it yet). */
    private volatile Keys keys;
    private final TokenRegistry journal;
    private final LongSupplier nowSeconds;
    private final Path rootTokenFile;

    /** The key material; {@code derivedRoot} is the cluster's root token's record (null on a single node). */
    private record Keys(MACSigner signer, MACVerifier verifier, TokenRecord derivedRoot) {
        static Keys of(byte[] secret, TokenRecord derivedRoot) {
            try {
                return new Keys(new MACSigner(secret), new MACVerifier(secret), derivedRoot);
            } catch (JOSEException e) {
                throw new IllegalStateException("the signing key is unusable: " + e.getMessage(), e);
            }
        }
    }

    /** What a mint returns: the token, its id and its expiry (epoch seconds). */
    public record Minted(String token, String jti, long exp) {
    }

    /** Who holds a token: its workspace (or {@code *}) and scope, and whether it was revoked. */
    public record TokenInfo(String jti, String ws, Scope scope, long exp, boolean revoked) {
    }

    private JwtAuthenticator(Keys keys, TokenRegistry journal, LongSupplier nowSeconds, Path rootTokenFile) {
        this.keys = keys;
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
        JwtAuthenticator auth = new JwtAuthenticator(Keys.of(secret, null), journal, nowSeconds, dataDir.resolve(AuthFiles.ROOT_TOKEN));
        auth.ensureRootToken();
        return auth;
    }

    /**
     * A cluster node's authenticator before it knows the cluster's secret: tokens live in
     * {@code registry}; {@link #useSharedSecret} publishes the secret and writes {@code rootTokenFile}.
     */
    public static JwtAuthenticator awaitingSharedSecret(TokenRegistry registry, Path rootTokenFile, LongSupplier nowSeconds) {
        return new JwtAuthenticator(null, registry, nowSeconds, rootTokenFile);
    }

    /** True once the secret is known (at once on a single node). */
    public boolean keyed() {
        return keys != null;
    }

    /**
     * Publishes the cluster's secret (created at {@code createdAtSeconds}) and writes the root token
     * it derives to {@code root.token} unless the file holds it already. The same secret again is a
     * no-op; another one is refused (the cluster's secret never changes).
     */
    public synchronized void useSharedSecret(byte[] secret, long createdAtSeconds) {
        TokenRecord root = new TokenRecord(ROOT_JTI, "*", Scope.ADMIN, createdAtSeconds + ROOT_TTL_SECONDS, false);
        Keys shared = Keys.of(secret, root);
        String token = sign(shared, root, createdAtSeconds);
        if (keys != null) {
            if (keys.derivedRoot() == null || !sign(keys, root, createdAtSeconds).equals(token)) {
                throw new IllegalStateException("this node already signs with another secret");
            }
            return;
        }
        try {
            byte[] content = (token + "\n").getBytes(StandardCharsets.US_ASCII);
            if (!Files.exists(rootTokenFile) || !Arrays.equals(Files.readAllBytes(rootTokenFile), content)) {
                AuthFiles.writePrivate(rootTokenFile, content);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + rootTokenFile, e);
        }
        keys = shared;
    }

    /** The key material, or {@code 503} while a cluster node has not read the cluster's secret yet. */
    private Keys keys() {
        Keys k = keys;
        if (k == null) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "this node has not loaded the cluster's signing key yet "
                    + "(it waits for a quorum of the _system workspace's shard)", Map.of("retryable", true));
        }
        return k;
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
        Keys k = keys();
        if (!TokenJournal.isJti(jti) || ROOT_JTI.equals(jti) && k.derivedRoot() != null || journal.find(jti).isPresent()) {
            throw new IllegalArgumentException("not a fresh token id: " + jti);
        }
        if (!"*".equals(ws) && !Names.isWorkspace(ws)) {
            throw new StrandException(ErrorCode.INVALID_NAME, "a token is for a workspace or '*', not '" + ws + "'");
        }
        if (ttlSeconds < 1 || ttlSeconds > ROOT_TTL_SECONDS) {
            throw StrandException.badRequest("ttlSeconds must be 1.." + ROOT_TTL_SECONDS + ", not " + ttlSeconds);
        }
        long now = nowSeconds.getAsLong();
        TokenRecord t = new TokenRecord(jti, ws, scope, now + ttlSeconds, false);
        String token = sign(k, t, now);
        journal.minted(t);
        return new Minted(token, jti, t.exp());
    }

    /** The JWT of {@code t} issued at {@code iat}: the same bytes for the same key and arguments (HS256 is deterministic). */
    private static String sign(Keys k, TokenRecord t, long iat) {
        JWTClaimsSet claims = new JWTClaimsSet.Builder()
                .claim("ws", t.ws())
                .claim("scope", t.scope().wire())
                .issueTime(new Date(iat * 1000))
                .expirationTime(new Date(t.exp() * 1000))
                .jwtID(t.jti())
                .build();
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        try {
            jwt.sign(k.signer());
        } catch (JOSEException e) {
            throw new IllegalStateException("cannot sign a token: " + e.getMessage(), e);
        }
        return jwt.serialize();
    }

    /**
     * What is known of {@code jti}: the cluster's derived root, or the registry's record; with
     * {@code current}, a registry that lags behind other nodes catches up before answering "unknown".
     */
    private Optional<TokenRecord> lookup(String jti, boolean current) {
        Keys k = keys;
        if (k != null && k.derivedRoot() != null && ROOT_JTI.equals(jti)) {
            return Optional.of(k.derivedRoot());
        }
        Optional<TokenRecord> known = journal.find(jti);
        return known.isPresent() || !current ? known : journal.findCurrent(jti);
    }

    /** The token with this id, if this server minted it and it has not been tidied away after expiry. */
    public Optional<TokenInfo> token(String jti) {
        if (!TokenJournal.isJti(jti)) {
            return Optional.empty();
        }
        return lookup(jti, true).map(t -> new TokenInfo(t.jti(), t.ws(), t.scope(), t.exp(), t.revoked()));
    }

    /** Revokes durably; false if the id is unknown. Open sockets notice within a sweep. */
    public boolean revoke(String jti) {
        Keys k = keys;
        if (k != null && k.derivedRoot() != null && ROOT_JTI.equals(jti)) {
            throw new StrandException(ErrorCode.FORBIDDEN, "the cluster's root token is derived from the cluster's secret "
                    + "and cannot be revoked; keep root.token private and mint admin tokens for people and services");
        }
        return TokenJournal.isJti(jti) && journal.revoke(jti);
    }

    /** Runs {@code listener} whenever a revocation reaches this node (see {@link TokenRegistry#onRevoked}). */
    public void onRevoked(Runnable listener) {
        journal.onRevoked(listener);
    }

    @Override
    public Principal authenticate(String token) {
        if (token == null || token.isEmpty()) {
            throw Authenticator.unauthorized("missing bearer token");
        }
        if (token.length() > MAX_TOKEN_CHARS) {
            throw Authenticator.unauthorized("malformed token: longer than " + MAX_TOKEN_CHARS + " characters");
        }
        Keys k = keys();
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
            if (!jwt.verify(k.verifier())) {
                throw Authenticator.unauthorized("bad token signature");
            }
        } catch (JOSEException e) {
            throw Authenticator.unauthorized("bad token signature");
        }
        Principal p = principal(claims);
        if (p.expEpochSeconds() <= nowSeconds.getAsLong()) {
            throw Authenticator.unauthorized("the token has expired");
        }
        TokenRecord known = lookup(p.jti(), true).orElseThrow(() -> Authenticator.unauthorized("unknown token"));
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
        return lookup(principal.jti(), false).map(t -> !t.revoked()).orElse(false);
    }

    @Override
    public void close() {
        journal.close();
    }
}

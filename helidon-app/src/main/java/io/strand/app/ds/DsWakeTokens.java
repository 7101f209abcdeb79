package io.strand.app.ds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.Signature;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Immutable once made (keys drawn at start-up, kept in memory only), so any thread uses it: the
 * subscriptions' keys. Callback tokens are {@code base64url(json{sub,epoch,exp}).base64url(hmac)}
 * under a random HMAC key; webhook deliveries are signed with an Ed25519 key published as a JWKS.
 * A restart draws new keys, so tokens and signatures of the previous run no longer verify.
 */
final class DsWakeTokens {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final KeyPair signingKey;
    private final String kid;
    private final String jwkX;
    private final byte[] tokenKey = new byte[32];

    DsWakeTokens() {
        RANDOM.nextBytes(tokenKey);
        try {
            signingKey = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            byte[] spki = signingKey.getPublic().getEncoded();
            jwkX = b64url(Arrays.copyOfRange(spki, spki.length - 32, spki.length));
            String thumbprint = "{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"" + jwkX + "\"}";
            kid = "ds_" + b64url(MessageDigest.getInstance("SHA-256").digest(thumbprint.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is not available: " + e.getMessage(), e);
        }
    }

    /** The signing key's id (its JWK thumbprint). */
    String kid() {
        return kid;
    }

    ObjectNode jwks() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.putArray("keys").addObject().put("kty", "OKP").put("crv", "Ed25519").put("x", jwkX).put("kid", kid)
                .put("use", "sig").put("alg", "EdDSA");
        return o;
    }

    /** The {@code webhook-signature} of a delivery body: {@code t=<ts>,kid=<kid>,ed25519=<sig over "ts." + body>}. */
    String signature(byte[] body) {
        long ts = System.currentTimeMillis() / 1000;
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(signingKey.getPrivate());
            s.update((ts + ".").getBytes(StandardCharsets.UTF_8));
            s.update(body);
            return "t=" + ts + ",kid=" + kid + ",ed25519=" + b64url(s.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A callback token for the subscription's current wake generation, valid for an hour. */
    String issue(DsSubscription sub) {
        byte[] payload = Json.bytes(Json.MAPPER.createObjectNode().put("sub", sub.key())
                .put("epoch", sub.generation).put("exp", System.currentTimeMillis() / 1000 + 3600));
        String p = b64url(payload);
        return p + "." + b64url(hmac(p));
    }

    /** The wake generation a valid token was issued for; 401 for a forged, foreign or expired one. */
    long verify(DsSubscription sub, String token) {
        String[] parts = token == null ? new String[0] : token.split("\\.");
        if (parts.length != 2 || !MessageDigest.isEqual(hmac(parts[0]), b64urlDecode(parts[1]))) {
            throw new DsFailure(401, "TOKEN_INVALID", "Token invalid");
        }
        JsonNode claims = Json.parse(b64urlDecode(parts[0]));
        if (!sub.key().equals(claims.path("sub").asText())) {
            throw new DsFailure(401, "TOKEN_INVALID", "Token invalid");
        }
        if (claims.path("exp").asLong() < System.currentTimeMillis() / 1000) {
            throw new DsFailure(401, "TOKEN_EXPIRED", "Token expired");
        }
        return claims.path("epoch").asLong();
    }

    private byte[] hmac(String text) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(tokenKey, "HmacSHA256"));
            return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code n} random bytes from the same source the keys come from. */
    static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static String b64url(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    private static byte[] b64urlDecode(String s) {
        try {
            return Base64.getUrlDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            return new byte[0];
        }
    }
}

package io.strand.app.testing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.strand.core.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Date;

/** Tokens for auth tests: the server's root token, and hostile ones (forged with the real secret, re-signed, tampered, or unsigned). */
public final class Tokens {
    private Tokens() {
    }

    /** The root token a JWT-authenticated server wrote to {@code dataDir/root.token} on first start. */
    public static String root(Path dataDir) {
        try {
            return Files.readString(dataDir.resolve("root.token")).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A token signed with {@code key} under {@code alg} (HS512 needs a 64-byte key). */
    public static String sign(byte[] key, JWSAlgorithm alg, String ws, String scope, String jti, long expEpochSeconds) {
        JWTClaimsSet claims = new JWTClaimsSet.Builder().claim("ws", ws).claim("scope", scope)
                .jwtID(jti).expirationTime(new Date(expEpochSeconds * 1000)).build();
        SignedJWT jwt = new SignedJWT(new JWSHeader(alg), claims);
        try {
            jwt.sign(new MACSigner(key));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    /** The same claims with {@code "alg":"none"} and no signature. */
    public static String algNone(String token) {
        String[] parts = token.split("\\.");
        String header = b64("{\"alg\":\"none\",\"typ\":\"JWT\"}");
        return header + "." + parts[1] + ".";
    }

    /** The claims raised to root ({@code ws *}, admin), keeping the original header and signature. */
    public static String tampered(String token) {
        String[] parts = token.split("\\.");
        ObjectNode claims = (ObjectNode) Json.parse(Base64.getUrlDecoder().decode(parts[1]));
        claims.put("ws", "*").put("scope", "admin");
        return parts[0] + "." + b64(Json.string(claims)) + "." + parts[2];
    }

    /** The {@code jti} claim of a token, read without verifying it. */
    public static String jti(String token) {
        return Json.parse(Base64.getUrlDecoder().decode(token.split("\\.")[1])).get("jti").asText();
    }

    private static String b64(String json) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}

package io.strand.coldtier;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Where the cold tier lives and how to reach it (SPEC §7, §10): {@code file:///dir} or
 * {@code s3://bucket/prefix}, plus the S3 settings {@code --s3-endpoint}, {@code --s3-region},
 * {@code --s3-path-style}. Immutable; validated once here, then passed to the store.
 *
 * <p>Defaults: region from the SDK's chain, else {@value #DEFAULT_REGION} (R2 wants {@code auto});
 * credentials from the SDK default chain unless {@link #withCredentials static ones} are given
 * (tests); a whole API call gives up after {@link #DEFAULT_API_CALL_TIMEOUT}, one attempt after
 * {@link #DEFAULT_API_CALL_ATTEMPT_TIMEOUT}, with at most {@value #DEFAULT_MAX_ATTEMPTS} attempts, so
 * a store that is down fails a read with {@code COLD_UNAVAILABLE} instead of hanging it.
 *
 * @param location              {@code file:///abs/dir} or {@code s3://bucket[/prefix]}
 * @param endpoint              S3 endpoint override (R2, MinIO, s3proxy), or null for AWS
 * @param region                S3 region, or null for the SDK's default chain
 * @param pathStyle             address buckets as {@code endpoint/bucket/key} (most S3-compatibles)
 * @param credentials           static credentials, or null for the SDK default chain
 * @param apiCallTimeout        deadline for one whole call including retries
 * @param apiCallAttemptTimeout deadline for one HTTP attempt
 * @param connectTimeout        TCP connect deadline
 * @param maxAttempts           attempts per call (1 = no retry)
 */
public record ColdStoreConfig(URI location, URI endpoint, String region, boolean pathStyle,
                              Credentials credentials, Duration apiCallTimeout,
                              Duration apiCallAttemptTimeout, Duration connectTimeout, int maxAttempts) {

    public static final String DEFAULT_REGION = "us-east-1";
    public static final Duration DEFAULT_API_CALL_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration DEFAULT_API_CALL_ATTEMPT_TIMEOUT = Duration.ofSeconds(20);
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    public static final int DEFAULT_MAX_ATTEMPTS = 3;

    /** Static S3 credentials; {@link #toString()} hides the secret. */
    public record Credentials(String accessKeyId, String secretAccessKey) {
        public Credentials {
            if (accessKeyId == null || accessKeyId.isBlank() || secretAccessKey == null) {
                throw new IllegalArgumentException("static credentials need an access key id and a secret");
            }
        }

        @Override
        public String toString() {
            return "Credentials[" + accessKeyId + ", ***]";
        }
    }

    public ColdStoreConfig {
        if (location == null || location.getScheme() == null) {
            throw new IllegalArgumentException("cold store must be file:///dir or s3://bucket/prefix, not " + location);
        }
        String scheme = location.getScheme().toLowerCase(Locale.ROOT);
        switch (scheme) {
            case "file" -> {
                if (location.getPath() == null || location.getPath().isEmpty()) {
                    throw new IllegalArgumentException("cold store " + location + " names no directory");
                }
            }
            case "s3" -> {
                if (location.getHost() == null || location.getHost().isBlank()) {
                    throw new IllegalArgumentException("cold store " + location + " names no bucket (s3://bucket/prefix)");
                }
                if (location.getRawQuery() != null || location.getRawFragment() != null) {
                    throw new IllegalArgumentException("cold store " + location + " must not carry a query or fragment");
                }
            }
            default -> throw new IllegalArgumentException(
                    "cold store scheme must be file or s3, not '" + scheme + "' in " + location);
        }
        if (endpoint != null && (endpoint.getScheme() == null || endpoint.getHost() == null)) {
            throw new IllegalArgumentException("S3 endpoint must be an absolute URL like http://127.0.0.1:9000, not " + endpoint);
        }
        apiCallTimeout = positive(apiCallTimeout, DEFAULT_API_CALL_TIMEOUT, "apiCallTimeout");
        apiCallAttemptTimeout = positive(apiCallAttemptTimeout, DEFAULT_API_CALL_ATTEMPT_TIMEOUT, "apiCallAttemptTimeout");
        connectTimeout = positive(connectTimeout, DEFAULT_CONNECT_TIMEOUT, "connectTimeout");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be ≥ 1, not " + maxAttempts);
        }
    }

    /** Parses {@code file:///dir}, a bare absolute path, or {@code s3://bucket/prefix}, with defaults for the rest. */
    public static ColdStoreConfig parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("cold store location is empty");
        }
        URI uri = text.startsWith("/") ? Path.of(text).toUri() : URI.create(text.trim());
        return new ColdStoreConfig(uri, null, null, false, null, null, null, null, DEFAULT_MAX_ATTEMPTS);
    }

    public static ColdStoreConfig directory(Path dir) {
        return parse(dir.toAbsolutePath().toUri().toString());
    }

    public ColdStoreConfig withEndpoint(URI value) {
        return new ColdStoreConfig(location, value, region, pathStyle, credentials, apiCallTimeout,
                apiCallAttemptTimeout, connectTimeout, maxAttempts);
    }

    public ColdStoreConfig withRegion(String value) {
        return new ColdStoreConfig(location, endpoint, value, pathStyle, credentials, apiCallTimeout,
                apiCallAttemptTimeout, connectTimeout, maxAttempts);
    }

    public ColdStoreConfig withPathStyle(boolean value) {
        return new ColdStoreConfig(location, endpoint, region, value, credentials, apiCallTimeout,
                apiCallAttemptTimeout, connectTimeout, maxAttempts);
    }

    public ColdStoreConfig withCredentials(String accessKeyId, String secretAccessKey) {
        return new ColdStoreConfig(location, endpoint, region, pathStyle,
                new Credentials(accessKeyId, secretAccessKey), apiCallTimeout, apiCallAttemptTimeout,
                connectTimeout, maxAttempts);
    }

    public ColdStoreConfig withTimeouts(Duration apiCall, Duration apiCallAttempt, Duration connect) {
        return new ColdStoreConfig(location, endpoint, region, pathStyle, credentials, apiCall,
                apiCallAttempt, connect, maxAttempts);
    }

    public ColdStoreConfig withMaxAttempts(int value) {
        return new ColdStoreConfig(location, endpoint, region, pathStyle, credentials, apiCallTimeout,
                apiCallAttemptTimeout, connectTimeout, value);
    }

    public boolean isS3() {
        return location.getScheme().equalsIgnoreCase("s3");
    }

    /** The directory of a {@code file:} store. */
    public Path directory() {
        if (isS3()) {
            throw new IllegalStateException(location + " is not a directory store");
        }
        return Path.of(location);
    }

    /** The bucket of an {@code s3:} store. */
    public String bucket() {
        return location.getHost();
    }

    /** The key prefix of an {@code s3:} store without leading or trailing slashes ("" for none). */
    public String prefix() {
        String p = location.getPath() == null ? "" : location.getPath();
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
    }

    /** Opens the store this config names. */
    public ColdStore open() {
        return isS3() ? new S3ColdStore(this) : new FileColdStore(directory());
    }

    private static Duration positive(Duration value, Duration fallback, String name) {
        if (value == null) {
            return fallback;
        }
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, not " + value);
        }
        return value;
    }
}

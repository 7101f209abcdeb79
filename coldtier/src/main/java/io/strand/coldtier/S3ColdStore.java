package io.strand.coldtier;

import io.strand.core.StrandException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The cold tier in an S3-compatible bucket (AWS S3, Cloudflare R2, MinIO, s3proxy) through the AWS
 * SDK v2 with the Apache 5 HTTP client. Thread-safe: one {@link S3Client} shared by all callers.
 *
 * <p>Failures are classified here: 404 → {@code NOT_FOUND}; everything else the store or network
 * does wrong (5xx, 403, connect refused, timeouts after the SDK's retries) → {@code COLD_UNAVAILABLE}.
 * A conditional write answered 412 (or 409 {@code ConditionalRequestConflict}, or 404 on If-Match)
 * returns empty: after an SDK-internal retry that answer is ambiguous (our first attempt may have
 * landed), so the manifest re-reads and compares instead of trusting it (STACK.md).
 */
public final class S3ColdStore implements ColdStore {
    private final S3Client s3;
    private final String bucket;
    private final String prefix;
    private final String describe;

    public S3ColdStore(ColdStoreConfig config) {
        if (!config.isS3()) {
            throw new IllegalArgumentException(config.location() + " is not an s3:// location");
        }
        this.bucket = config.bucket();
        this.prefix = config.prefix().isEmpty() ? "" : config.prefix() + "/";
        this.describe = "s3://" + bucket + "/" + prefix
                + (config.endpoint() == null ? "" : " at " + config.endpoint());
        var builder = S3Client.builder()
                .httpClientBuilder(Apache5HttpClient.builder()
                        .connectionTimeout(config.connectTimeout())
                        .socketTimeout(config.apiCallAttemptTimeout()))
                .region(region(config.region()))
                .credentialsProvider(credentials(config))
                .forcePathStyle(config.pathStyle())
                .overrideConfiguration(o -> o
                        .apiCallTimeout(config.apiCallTimeout())
                        .apiCallAttemptTimeout(config.apiCallAttemptTimeout())
                        .retryStrategy(b -> b.maxAttempts(config.maxAttempts())));
        if (config.endpoint() != null) {
            // S3-compatibles (R2, MinIO, s3proxy) differ in which of the SDK's newer default flexible
            // checksums they accept; send them only where an operation requires one. Segments carry
            // their own CRCs and SHA-256, checked after upload and on every read.
            builder.endpointOverride(config.endpoint())
                    .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        }
        this.s3 = builder.build();
    }

    @Override
    public void put(String key, Path file) {
        call("put", key, () -> s3.putObject(b -> b.bucket(bucket).key(full(key)), RequestBody.fromFile(file)));
    }

    @Override
    public void put(String key, byte[] bytes) {
        call("put", key, () -> s3.putObject(b -> b.bucket(bucket).key(full(key)), RequestBody.fromBytes(bytes)));
    }

    @Override
    public byte[] get(String key) {
        return call("get", key, () -> s3.getObjectAsBytes(b -> b.bucket(bucket).key(full(key))).asByteArray());
    }

    @Override
    public byte[] getRange(String key, long offset, int length) {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("bad range " + offset + "+" + length);
        }
        if (length == 0) {
            return new byte[0];
        }
        String range = "bytes=" + offset + "-" + (offset + length - 1);
        try {
            return call("read", key, () -> s3.getObjectAsBytes(b -> b.bucket(bucket).key(full(key)).range(range))
                    .asByteArray());
        } catch (RangeNotSatisfiable e) {
            return new byte[0]; // the object ends before offset: the caller sees a short read
        }
    }

    @Override
    public Optional<Versioned> getVersioned(String key) {
        try {
            ResponseBytes<GetObjectResponse> r = call("get", key,
                    () -> s3.getObjectAsBytes(b -> b.bucket(bucket).key(full(key))));
            return Optional.of(new Versioned(r.asByteArray(), r.response().eTag()));
        } catch (StrandException e) {
            if (e.code() == io.strand.core.ErrorCode.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public Optional<ObjectInfo> head(String key) {
        try {
            HeadObjectResponse r = call("head", key, () -> s3.headObject(b -> b.bucket(bucket).key(full(key))));
            return Optional.of(new ObjectInfo(key, r.contentLength(), r.lastModified()));
        } catch (StrandException e) {
            if (e.code() == io.strand.core.ErrorCode.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public List<ObjectInfo> list(String keyPrefix) {
        return call("list", keyPrefix, () -> {
            List<ObjectInfo> out = new ArrayList<>();
            ListObjectsV2Request req = ListObjectsV2Request.builder().bucket(bucket).prefix(full(keyPrefix)).build();
            for (S3Object o : s3.listObjectsV2Paginator(req).contents()) {
                out.add(new ObjectInfo(o.key().substring(prefix.length()), o.size(), o.lastModified()));
            }
            return out;
        });
    }

    @Override
    public void delete(String key) {
        call("delete", key, () -> s3.deleteObject(b -> b.bucket(bucket).key(full(key))));
    }

    @Override
    public Optional<String> putIfAbsent(String key, byte[] bytes) {
        return conditional(key, bytes, PutObjectRequest.builder().bucket(bucket).key(full(key)).ifNoneMatch("*"));
    }

    @Override
    public Optional<String> putIfMatch(String key, byte[] bytes, String etag) {
        return conditional(key, bytes, PutObjectRequest.builder().bucket(bucket).key(full(key)).ifMatch(etag));
    }

    @Override
    public String describe() {
        return describe;
    }

    @Override
    public void close() {
        s3.close();
    }

    // ---------------------------------------------------------------------------------------------

    private Optional<String> conditional(String key, byte[] bytes, PutObjectRequest.Builder request) {
        try {
            PutObjectResponse r = s3.putObject(request.build(), RequestBody.fromBytes(bytes));
            return Optional.of(r.eTag() == null ? "" : r.eTag());
        } catch (S3Exception e) {
            int status = e.statusCode();
            if (status == 412 || status == 409 || status == 404) {
                return Optional.empty(); // lost the race, or ambiguous after a retry: the caller re-reads
            }
            throw classify("conditionally write", key, e);
        } catch (SdkException e) {
            throw classify("conditionally write", key, e);
        }
    }

    private static final class RangeNotSatisfiable extends RuntimeException {
        RangeNotSatisfiable() {
            super(null, null, false, false);
        }
    }

    private <T> T call(String op, String key, java.util.function.Supplier<T> body) {
        try {
            return body.get();
        } catch (S3Exception e) {
            if (e.statusCode() == 416) {
                throw new RangeNotSatisfiable();
            }
            throw classify(op, key, e);
        } catch (SdkException e) {
            throw classify(op, key, e);
        }
    }

    private StrandException classify(String op, String key, SdkException e) {
        if (e instanceof S3Exception s3e) {
            if (s3e.statusCode() == 404) {
                return ColdErrors.notFound(describe, key);
            }
            String code = s3e.awsErrorDetails() == null ? "" : " " + s3e.awsErrorDetails().errorCode();
            return ColdErrors.unavailable(describe, op, key, "HTTP " + s3e.statusCode() + code, e);
        }
        // connect refused, socket/attempt/call timeouts, interrupted I/O: the store is unreachable
        return ColdErrors.unavailable(describe, op, key, e.getClass().getSimpleName() + ": " + e.getMessage(), e);
    }

    private String full(String key) {
        return prefix + key;
    }

    private static Region region(String configured) {
        if (configured != null && !configured.isBlank()) {
            return Region.of(configured);
        }
        try {
            return new DefaultAwsRegionProviderChain().getRegion();
        } catch (SdkException e) {
            return Region.of(ColdStoreConfig.DEFAULT_REGION);
        }
    }

    private static AwsCredentialsProvider credentials(ColdStoreConfig config) {
        if (config.credentials() != null) {
            return StaticCredentialsProvider.create(AwsBasicCredentials.create(
                    config.credentials().accessKeyId(), config.credentials().secretAccessKey()));
        }
        return DefaultCredentialsProvider.builder().build();
    }
}

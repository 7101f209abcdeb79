package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class S3ColdStoreTest extends ColdStoreContract {
    private static final AtomicInteger N = new AtomicInteger();
    static S3ProxyFixture s3;

    @BeforeAll
    static void startS3() {
        s3 = S3ProxyFixture.startTransient("cold");
    }

    @AfterAll
    static void stopS3() {
        s3.close();
    }

    @Override
    ColdStore newStore() {
        return s3.config("cold", "store-test-" + N.incrementAndGet()).open();
    }

    @Override
    ColdStore reopen() {
        return s3.config("cold", "store-test-" + N.get()).open();
    }

    @Test
    void prefixShouldIsolateStoresInOneBucket() {
        store.put("w/l/a", new byte[] {1});
        try (ColdStore other = s3.config("cold", "someone-else").open()) {
            assertEquals(0, other.list("").size());
        }
        assertEquals("w/l/a", store.list("").getFirst().key(), "keys come back without the store prefix");
    }

    @Test
    void blackHoleEndpointShouldFailWithColdUnavailableNotHang() throws Exception {
        // accepts TCP connections (kernel backlog) but never answers: only timeouts can end the call
        try (ServerSocket hole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             ColdStore dead = ColdStoreConfig.parse("s3://cold/x")
                     .withEndpoint(URI.create("http://127.0.0.1:" + hole.getLocalPort()))
                     .withRegion("us-east-1").withPathStyle(true)
                     .withCredentials(S3ProxyFixture.ACCESS_KEY, S3ProxyFixture.SECRET_KEY)
                     .withTimeouts(Duration.ofMillis(1500), Duration.ofMillis(400), Duration.ofMillis(300))
                     .withMaxAttempts(2)
                     .open()) {
            StrandException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> assertThrows(StrandException.class, () -> dead.getRange("w/l/seg/x.seg", 0, 10)));
            assertEquals(ErrorCode.COLD_UNAVAILABLE, e.code(), e.getMessage());
        }
    }

    @Test
    void refusedConnectionShouldFailWithColdUnavailable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        try (ColdStore dead = s3.config("cold", "x").withEndpoint(URI.create("http://127.0.0.1:" + port)).open()) {
            StrandException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> assertThrows(StrandException.class, () -> dead.head("w/l/seg/x.seg")));
            assertEquals(ErrorCode.COLD_UNAVAILABLE, e.code(), e.getMessage());
        }
    }
}

package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class S3ColdLogTest extends ColdLogContract {
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
    ColdStore openStore() {
        return s3.config("cold", "log-test-" + N.incrementAndGet()).open();
    }

    @Test
    void storeDownShouldFailColdReadsWithColdUnavailableNotHangThenRecover() {
        log.roll(TestEntries.range(1, 100));
        ColdLog reader = newLog();
        reader.manifest();
        s3.stop();
        try {
            StrandException e = assertTimeoutPreemptively(Duration.ofSeconds(15),
                    () -> assertThrows(StrandException.class, () -> reader.read(50, 10, Long.MAX_VALUE)));
            assertEquals(ErrorCode.COLD_UNAVAILABLE, e.code(), e.getMessage());
            assertEquals("orders", e.extras().get("log"));
            StrandException r = assertTimeoutPreemptively(Duration.ofSeconds(15),
                    () -> assertThrows(StrandException.class, () -> newLog().roll(TestEntries.range(101, 110))));
            assertEquals(ErrorCode.COLD_UNAVAILABLE, r.code(), r.getMessage());
        } finally {
            s3.restart();
        }
        TestEntries.assertSame(TestEntries.range(50, 59), reader.read(50, 10, Long.MAX_VALUE));
        log.roll(TestEntries.range(101, 110));
        assertEquals(110, newLog().lastSeq());
    }
}

package io.strand.coldtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ColdStoreConfigTest {

    @Test
    void parseShouldReadS3BucketAndPrefix() {
        ColdStoreConfig c = ColdStoreConfig.parse("s3://my-bucket/strand/prod/").withRegion("auto")
                .withEndpoint(URI.create("https://acct.r2.cloudflarestorage.com")).withPathStyle(true);
        assertTrue(c.isS3());
        assertEquals("my-bucket", c.bucket());
        assertEquals("strand/prod", c.prefix());
        assertEquals("auto", c.region());
        assertEquals(ColdStoreConfig.DEFAULT_MAX_ATTEMPTS, c.maxAttempts());
        assertEquals(ColdStoreConfig.DEFAULT_API_CALL_TIMEOUT, c.apiCallTimeout());
        assertEquals("", ColdStoreConfig.parse("s3://b").prefix());
    }

    @Test
    void parseShouldReadDirectories() {
        ColdStoreConfig c = ColdStoreConfig.parse("file:///var/lib/strand/cold");
        assertFalse(c.isS3());
        assertEquals(Path.of("/var/lib/strand/cold"), c.directory());
        assertEquals(Path.of("/tmp/x"), ColdStoreConfig.parse("/tmp/x").directory());
    }

    @Test
    void parseShouldRejectWhatItCannotServe() {
        assertThrows(IllegalArgumentException.class, () -> ColdStoreConfig.parse("http://bucket/x"));
        assertThrows(IllegalArgumentException.class, () -> ColdStoreConfig.parse("s3:///no-bucket"));
        assertThrows(IllegalArgumentException.class, () -> ColdStoreConfig.parse(""));
        assertThrows(IllegalArgumentException.class, () -> ColdStoreConfig.parse("s3://b/p").withMaxAttempts(0));
        assertThrows(IllegalArgumentException.class, () -> ColdStoreConfig.parse("s3://b/p").withCredentials("", "x"));
    }

    @Test
    void credentialsShouldNotPrintTheSecret() {
        assertFalse(ColdStoreConfig.parse("s3://b").withCredentials("AKIA", "s3cr3t").toString().contains("s3cr3t"));
    }
}

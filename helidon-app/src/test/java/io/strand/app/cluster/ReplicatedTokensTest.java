package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.ServerConfig;
import io.strand.app.StrandMetrics;
import io.strand.app.auth.Scope;
import io.strand.app.auth.TokenRegistry.TokenRecord;
import io.strand.app.stores.Placement;
import io.strand.app.stores.SingleNode;
import io.strand.app.stores.Stores;
import io.strand.app.stores.WritePath;
import io.strand.core.Durability;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.AppendRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The token log followed into a view: two views over one store set stand for two nodes over one
 * replicated log (each view learns the other's records only when it catches up).
 */
class ReplicatedTokensTest {
    @TempDir
    Path dir;
    final AtomicLong now = new AtomicLong(1_800_000_000L);
    Stores stores;
    CountingPlacement placement;

    /** A single node's placement that counts read barriers. */
    static final class CountingPlacement implements Placement {
        final SingleNode inner;
        final AtomicInteger barriers = new AtomicInteger();

        CountingPlacement(Stores stores) {
            this.inner = new SingleNode(stores);
        }

        @Override
        public Stores local(String ws) {
            return inner.local(ws);
        }

        @Override
        public boolean awaitCaughtUp(String ws) {
            barriers.incrementAndGet();
            return true;
        }

        @Override
        public WritePath writes() {
            return inner.writes();
        }

        @Override
        public List<Stores> all() {
            return inner.all();
        }

        @Override
        public String durableWire() {
            return inner.durableWire();
        }

        @Override
        public void close() {
        }
    }

    @BeforeEach
    void open() {
        stores = Stores.open("t", ServerConfig.from(Map.of()), dir, Durability.OS, 1, new StrandMetrics(), null);
        placement = new CountingPlacement(stores);
    }

    @AfterEach
    void close() {
        stores.close();
    }

    private ReplicatedTokens view() {
        return new ReplicatedTokens(placement, now::get);
    }

    private TokenRecord token(String jti, long ttl) {
        return new TokenRecord(jti, "acme", Scope.RW, now.get() + ttl, false);
    }

    private void appendRaw(String json) {
        placement.writes().append("_system", ReplicatedTokens.LOG, AppendRequest.of(json.getBytes(StandardCharsets.UTF_8))).join();
    }

    @Test
    void findCurrentShouldCatchUpOnceWhenAnotherNodeMintedTheToken() {
        ReplicatedTokens n1 = view();
        ReplicatedTokens n2 = view();
        n1.minted(token("a1", 3600));
        assertTrue(n1.find("a1").isPresent(), "the minting node knows it at once");
        assertTrue(n2.find("a1").isEmpty());
        assertEquals("acme", n2.findCurrent("a1").orElseThrow().ws());
        assertEquals(1, placement.barriers.get(), "one read barrier before the catch-up");
        n2.findCurrent("a1");
        assertEquals(1, placement.barriers.get(), "none for a known id");
        assertTrue(n2.findCurrent("nobody").isEmpty());
    }

    @Test
    void catchUpShouldApplyARevocationMadeElsewhereAndTellTheListenerOnce() {
        ReplicatedTokens n1 = view();
        ReplicatedTokens n2 = view();
        AtomicInteger told = new AtomicInteger();
        n2.onRevoked(told::incrementAndGet);
        n1.minted(token("a1", 3600));
        n2.catchUp();
        assertFalse(n2.find("a1").orElseThrow().revoked());
        assertTrue(n1.revoke("a1"));
        assertTrue(n1.revoke("a1"), "idempotent");
        n2.catchUp();
        assertTrue(n2.find("a1").orElseThrow().revoked());
        assertEquals(1, told.get());
        n2.catchUp();
        assertEquals(1, told.get(), "nothing new: nobody told");
        assertFalse(n1.revoke("never-minted"));
    }

    @Test
    void aRestartedViewShouldRebuildMintsAndRevocationsFromTheLog() {
        ReplicatedTokens before = view();
        before.minted(token("kept", 3600));
        before.minted(token("gone", 3600));
        before.minted(token("old", 10));
        assertTrue(before.revoke("gone"));
        now.addAndGet(60); // "old" expired meanwhile
        ReplicatedTokens after = view();
        assertFalse(after.findCurrent("kept").orElseThrow().revoked());
        assertTrue(after.find("gone").orElseThrow().revoked());
        assertTrue(after.find("old").isEmpty(), "an expired token is not loaded");
        assertEquals(5, after.next(), "past the 3 mints and 1 revoke");
    }

    @Test
    void aRevocationAppliedBeforeTheMintersOwnUpdateShouldStayApplied() {
        ReplicatedTokens n1 = view();
        TokenRecord t = token("a1", 3600);
        appendRaw("{\"op\":\"mint\",\"jti\":\"a1\",\"ws\":\"acme\",\"scope\":\"rw\",\"exp\":" + t.exp() + "}");
        appendRaw("{\"op\":\"revoke\",\"jti\":\"a1\"}");
        n1.catchUp();
        n1.minted(t); // a late answer of the mint must not bring the token back
        assertTrue(n1.find("a1").orElseThrow().revoked());
    }

    @Test
    void aCorruptRecordShouldStopTheFollowerThereEveryTime() {
        ReplicatedTokens n1 = view();
        n1.minted(token("a1", 3600));
        appendRaw("{\"op\":\"mint\",\"jti\":\"a2\"}");
        n1.minted(token("a3", 3600));
        ReplicatedTokens n2 = view();
        for (int i = 0; i < 2; i++) {
            StrandException e = assertThrows(StrandException.class, n2::catchUp);
            assertEquals(ErrorCode.CORRUPT, e.code());
            assertTrue(e.getMessage().contains("seq 2"), e.getMessage());
            assertEquals(2, n2.next(), "not skipped");
        }
        assertTrue(n2.find("a1").isPresent());
        assertTrue(n2.find("a3").isEmpty(), "nothing past the corrupt record");
    }
}

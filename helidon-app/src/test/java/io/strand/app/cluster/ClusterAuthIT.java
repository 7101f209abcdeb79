package io.strand.app.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.Http;
import io.strand.app.testing.RawSocket;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Auth across nodes (SPEC §13) on three real server processes with signed tokens: one root token
 * on every node, a token minted on one node works at once on the others, a revocation on one node
 * closes a socket held on another within 2 s, the audit log is identical everywhere, and a
 * restarted node keeps accepting the tokens it knew (and refusing the revoked ones).
 */
@Timeout(600)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterAuthIT {
    private static final List<String> IDS = List.of("n1", "n2", "n3");
    private static final Duration START = Duration.ofSeconds(120);
    ClusterNodes nodes;
    String root;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        nodes = new ClusterNodes(dir, 3, 4, List.of(), true);
        nodes.startAll();
        root = awaitRootToken("n1");
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    /** The node's {@code root.token}, once it has loaded the cluster's signing key and written it. */
    private String awaitRootToken(String id) throws Exception {
        return nodes.rootToken(id, START);
    }

    private Http http(String id, String token) {
        return new Http(nodes.url(id), token);
    }

    private String wsUrl(String id, String ws) {
        return nodes.url(id).replace("http://", "ws://") + "/v1/ws/" + ws + "/socket";
    }

    /** Retries while a node waits for its shards' first leaders or its signing key (503, retryable). */
    private static Http.Reply untilNot503(Supplier<Http.Reply> call) {
        long deadline = System.nanoTime() + START.toNanos();
        Http.Reply r = call.get();
        while (r.status() == 503 && System.nanoTime() < deadline) {
            r = call.get();
        }
        return r;
    }

    private JsonNode mint(String id, String ws, String scope) {
        Http.Reply r = untilNot503(() -> http(id, root).post("/v1/admin/tokens",
                "{\"ws\":\"" + ws + "\",\"scope\":\"" + scope + "\",\"ttlSeconds\":3600}"));
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    @Test
    @Order(1)
    void everyNodeShouldWriteTheSameRootTokenAndAcceptIt() throws Exception {
        for (String id : IDS) {
            assertEquals(root, awaitRootToken(id), id + "'s root.token differs from n1's");
            Http.Reply status = untilNot503(() -> http(id, root).get("/v1/cluster"));
            assertEquals(200, status.status(), id + ": " + status.body());
            assertEquals(401, http(id, null).get("/v1/cluster").status(), id + " without a token");
        }
    }

    @Test
    @Order(2)
    void aTokenMintedOnOneNodeShouldWorkAtOnceOnTheOthersOverHttpAndSockets() throws Exception {
        String token = mint("n1", "acme", "rw").get("token").asText();
        for (String id : IDS) { // no retry: a node that does not know the token catches up before it refuses
            Http.Reply append = http(id, token).post("/v1/ws/acme/logs/minted/entries", "{\"data\":{\"from\":\"" + id + "\"}}");
            assertEquals(200, append.status(), id + ": " + append.body());
            assertEquals(101, RawSocket.upgrade(wsUrl(id, "acme"), "Bearer " + token).status(), id);
        }
        String other = mint("n2", "acme", "read").get("token").asText();
        try (WsClient c = WsClient.connect(wsUrl("n3", "acme"), other)) {
            // a replica still catching up after the cluster's start answers a read 503-style (retryable), as
            // the contract says; the token is what this test is about, so such a read is asked again
            long deadline = System.nanoTime() + 30_000_000_000L;
            JsonNode reply = c.reply(c.request("read", "\"log\":\"minted\",\"from\":1"), 10_000);
            while (!reply.path("ok").asBoolean() && "unavailable".equals(reply.path("error").path("code").asText())
                    && System.nanoTime() < deadline) {
                reply = c.reply(c.request("read", "\"log\":\"minted\",\"from\":1"), 10_000);
            }
            assertTrue(reply.path("ok").asBoolean(), reply.toString());
            assertEquals(3, reply.path("entries").size(), reply.toString());
        }
        assertEquals(403, http("n3", other).post("/v1/ws/acme/logs/minted/entries", "{\"data\":1}").status(), "a read token");
    }

    @Test
    @Order(3)
    void revokingOnOneNodeShouldCloseASocketOnAnotherWithin2Seconds() throws Exception {
        List<String> rows = new ArrayList<>();
        for (int round = 1; round <= 3; round++) {
            JsonNode t = mint("n1", "acme", "rw");
            String token = t.get("token").asText();
            try (WsClient c = WsClient.connect(wsUrl("n3", "acme"), token)) {
                long req = c.request("subscribe", "\"log\":\"revoke-me\",\"from\":1");
                assertTrue(c.reply(req, 10_000).path("ok").asBoolean());
                long started = System.nanoTime();
                Http.Reply revoked = http("n2", root).delete("/v1/admin/tokens/" + t.get("jti").asText());
                long answered = System.nanoTime();
                assertEquals(200, revoked.status(), revoked.body());
                assertEquals(4001, c.closed.get(10, TimeUnit.SECONDS));
                long closedMs = (System.nanoTime() - started) / 1_000_000;
                rows.add(String.format("| %d | %d | %d |", round, (answered - started) / 1_000_000, closedMs));
                assertTrue(closedMs <= 2_000, "the socket on n3 closed " + closedMs + " ms after the revoke on n2");
            }
            for (String id : IDS) {
                assertEquals(401, awaitStatus(() -> http(id, token).get("/v1/ws/acme/logs/revoke-me/entries"), 401,
                        Duration.ofSeconds(2)), id + " still accepts the revoked token 2 s after the revoke");
            }
        }
        System.out.println("revoke on n2, socket held on n3 (ms)\n| round | revoke answered | socket closed |\n|---|---|---|\n"
                + String.join("\n", rows));
    }

    /** The status {@code call} answers once it is {@code wanted}, or its last one after {@code within}. */
    private static int awaitStatus(Supplier<Http.Reply> call, int wanted, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        int status = call.get().status();
        while (status != wanted && System.nanoTime() < deadline) {
            status = call.get().status();
        }
        return status;
    }

    @Test
    @Order(4)
    void theAuditLogShouldHoldMintsAndRevokesIdenticallyOnEveryNode() {
        String jti = mint("n3", "audited", "read").get("jti").asText();
        assertEquals(200, http("n1", root).delete("/v1/admin/tokens/" + jti).status());
        String first = null;
        for (String id : IDS) {
            Http.Reply page = http(id, root).get("/v1/ws/_system/logs/audit/entries?from=1&limit=1000");
            assertEquals(200, page.status(), page.body());
            JsonNode entries = page.json().path("entries");
            List<String> seen = new ArrayList<>();
            for (JsonNode e : entries) {
                JsonNode d = e.path("data");
                if (("token:" + jti).equals(d.path("target").asText())) {
                    seen.add(d.path("action").asText() + "/" + d.path("phase").asText());
                }
            }
            assertEquals(List.of("token.mint/intent", "token.mint/done", "token.revoke/intent", "token.revoke/done"), seen, id);
            if (first == null) {
                first = entries.toString();
            } else {
                assertEquals(first, entries.toString(), id + "'s audit log differs from n1's");
            }
        }
    }

    @Test
    @Order(5)
    void theSigningKeyShouldBeUnreadableAndTheRootTokenIrrevocable() throws Exception {
        for (String id : IDS) {
            assertEquals(403, http(id, root).get("/v1/ws/_system/docs/auth").status(), id);
            assertEquals(403, http(id, root).get("/v1/ws/_system/docs").status(), id);
        }
        try (WsClient c = WsClient.connect(wsUrl("n2", "_system"), root)) {
            long req = c.request("doc.get", "\"doc\":\"auth\"");
            assertEquals("forbidden", c.reply(req, 10_000).path("error").path("code").asText());
        }
        Http.Reply revokeRoot = http("n1", root).delete("/v1/admin/tokens/root");
        assertEquals(403, revokeRoot.status(), revokeRoot.body());
        assertEquals(200, http("n2", root).get("/v1/cluster").status());
    }

    @Test
    @Order(6)
    void aRestartedNodeShouldAcceptTheTokensItKnewAndRefuseTheRevokedOnes() throws Exception {
        String kept = mint("n1", "acme", "read").get("token").asText();
        JsonNode gone = mint("n2", "acme", "read");
        assertEquals(200, http("n3", kept).get("/v1/ws/acme/logs/minted/entries").status());
        assertEquals(200, http("n3", gone.get("token").asText()).get("/v1/ws/acme/logs/minted/entries").status());
        nodes.kill("n3");
        assertEquals(200, http("n1", root).delete("/v1/admin/tokens/" + gone.get("jti").asText()).status());
        long started = System.nanoTime();
        nodes.start("n3");
        Http.Reply back = untilNot503(() -> http("n3", kept).get("/v1/ws/acme/logs/minted/entries"));
        System.out.println("n3 restarted: its first authenticated read answered after "
                + (System.nanoTime() - started) / 1_000_000 + " ms");
        assertEquals(200, back.status(), back.body());
        assertEquals(401, http("n3", gone.get("token").asText()).get("/v1/ws/acme/logs/minted/entries").status(),
                "revoked while n3 was down");
        assertEquals(root, awaitRootToken("n3"));
        assertEquals(200, http("n3", root).get("/v1/cluster").status());
    }
}

package io.strand.app.cluster;

import static io.strand.app.testing.ColdLogs.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.testing.ClusterNodes;
import io.strand.app.testing.DsClient;
import io.strand.app.testing.Http;
import io.strand.app.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster with more nodes than replicas (four nodes, {@code --replicas 3}, signed tokens): every
 * node, including one that does not replicate a workspace's shard, serves that workspace. Its HTTP
 * requests and sockets are relayed to a replica (a long-poll and a subscription included); tokens work everywhere because the
 * system shard is on every node; {@code GET /v1/cluster} names every node's HTTP address.
 */
@Timeout(300)
class ClusterScaleOutIT {
    private static final Duration START = Duration.ofSeconds(120);
    @TempDir
    Path dir;
    @AutoClose
    ClusterNodes nodes;

    @Test
    void aNodeThatDoesNotReplicateAWorkspacesShardShouldStillServeIt() throws Exception {
        nodes = new ClusterNodes(dir, 4, 4, List.of("--replicas", "3", "--ds-long-poll-timeout", "10s", "--max-body-bytes", "65536"), true);
        nodes.startAll();
        List<String> ids = List.of("n1", "n2", "n3", "n4");
        String root = nodes.rootToken("n1", START);
        for (String id : ids) {
            assertEquals(root, nodes.rootToken(id, START), id + " holds the system shard: the same root token");
        }
        // a workspace and a node outside its shard's replicas
        String ws = null;
        String outside = null;
        for (int i = 0; i < 50 && outside == null; i++) {
            String candidate = "scale-" + i;
            Http.Reply shard = ClusterNodes.untilNot503(() -> new Http(nodes.url("n1"), root).get("/v1/cluster/shard?ws=" + candidate));
            assertEquals(200, shard.status(), shard.body());
            List<String> replicas = new ArrayList<>();
            shard.json().path("replicas").forEach(r -> replicas.add(r.asText()));
            assertEquals(3, replicas.size(), shard.body());
            for (String id : ids) {
                if (!replicas.contains(id)) {
                    ws = candidate;
                    outside = id;
                }
            }
        }
        assertTrue(outside != null, "some workspace's shard leaves out a node");
        String via = outside;
        String theWs = ws;
        String path = "/v1/ws/" + ws + "/logs/chat";

        // a token minted on the outside node, used on every node
        Http.Reply minted = ClusterNodes.untilNot503(() -> new Http(nodes.url(via), root).post("/v1/admin/tokens",
                "{\"ws\":\"*\",\"scope\":\"rw\",\"ttlSeconds\":3600}"));
        assertEquals(200, minted.status(), minted.body());
        String token = minted.json().path("token").asText();

        // appends and a page through the node outside, the same page from every node
        for (int n = 1; n <= 5; n++) {
            String body = "{\"data\":{\"n\":" + n + "}}";
            Http.Reply r = ClusterNodes.untilNot503(() -> new Http(nodes.url(via), token).post(path + "/entries", body));
            assertEquals(200, r.status(), via + ": " + r.body());
            assertEquals("quorum", r.json().path("durable").asText());
        }
        String page = null;
        for (String id : ids) {
            Http.Reply r = ClusterNodes.untilNot503(() -> new Http(nodes.url(id), token).get(path + "/entries?from=1&limit=10"));
            assertEquals(200, r.status(), id + ": " + r.body());
            JsonNode entries = r.json().path("entries");
            assertEquals(5, entries.size(), id + ": " + r.body());
            if (page == null) {
                page = entries.toString();
            } else {
                assertEquals(page, entries.toString(), id + " serves another page");
            }
        }

        // a token of the workspace lists it on the node outside (relayed: that node holds none of its data)
        Http.Reply own = ClusterNodes.untilNot503(() -> new Http(nodes.url(via), root).post("/v1/admin/tokens",
                "{\"ws\":\"" + theWs + "\",\"scope\":\"read\",\"ttlSeconds\":3600}"));
        assertEquals(200, own.status(), own.body());
        Http.Reply listed = new Http(nodes.url(via), own.json().path("token").asText()).get("/v1/ws");
        assertEquals(200, listed.status(), listed.body());
        assertEquals(5, listed.json().path("workspaces").path(0).path("entries").asLong(), listed.body());

        // the root token's listing on the node outside holds the workspace too (asked of a node that replicates it)
        Http.Reply all = new Http(nodes.url(via), root).get("/v1/ws");
        assertEquals(200, all.status(), all.body());
        boolean found = false;
        for (JsonNode row : all.json().path("workspaces")) {
            found |= row.path("ws").asText().equals(theWs) && row.path("entries").asLong() == 5;
        }
        assertTrue(found, "root's listing on " + via + " names " + theWs + " with its 5 entries: " + all.body());

        // a socket on the node outside (relayed to a replica): the five entries, then one appended through another node
        String wsUrl = nodes.url(via).replace("http://", "ws://") + "/v1/ws/" + ws + "/socket";
        try (WsClient socket = WsClient.connect(wsUrl, token)) {
            long sub = socket.request("subscribe", "\"log\":\"chat\",\"from\":1");
            JsonNode ok = socket.reply(sub, 15_000);
            assertTrue(ok.path("ok").asBoolean(), ok.toString());
            String other = ids.stream().filter(id -> !id.equals(via)).findFirst().orElseThrow();
            Http.Reply sixth = new Http(nodes.url(other), token).post(path + "/entries", "{\"data\":{\"n\":6}}");
            assertEquals(200, sixth.status(), sixth.body());
            List<Long> seqs = new ArrayList<>();
            while (seqs.size() < 6) {
                JsonNode f = socket.next(15_000);
                if ("entries".equals(f.path("type").asText())) {
                    f.path("entries").forEach(e -> seqs.add(e.path("seq").asLong()));
                }
            }
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), seqs, "each entry once, in order, through the relay");
        }

        // Durable Streams through the node outside: a long-poll there, woken by an append through a replica
        String stream = "/ds/" + ws + "/feed";
        String auth = "Bearer " + token;
        DsClient outsideDs = new DsClient(nodes.url(via));
        DsClient.Reply made = ClusterNodes.untilNot503(() -> outsideDs.send("PUT", stream, null, "Content-Type", "application/json",
                "Authorization", auth), DsClient.Reply::status);
        assertEquals(201, made.status(), made.text());
        String tail = made.header("Stream-Next-Offset");
        CompletableFuture<DsClient.Reply> poll = CompletableFuture.supplyAsync(() -> outsideDs.send("GET",
                stream + "?offset=" + tail + "&live=long-poll", null, "Authorization", auth));
        String replica = ids.stream().filter(id -> !id.equals(via)).findFirst().orElseThrow();
        // a round trip while the poll is out, so it is (almost always) parked before the append: without
        // a wake it then waits its 10 s and the get below fails (a poll that arrived after the append
        // would pass without one, which is why this is not a proof on its own)
        await("the node answering while the long-poll is out", Duration.ofSeconds(10),
                () -> outsideDs.send("HEAD", stream, null, "Authorization", auth).status() == 200 && !poll.isDone());
        DsClient.Reply appended = new DsClient(nodes.url(replica)).send("POST", stream, "{\"hello\":1}",
                "Content-Type", "application/json", "Authorization", auth);
        assertEquals(204, appended.status(), appended.text());
        DsClient.Reply woken = poll.get(8, TimeUnit.SECONDS);
        assertEquals(200, woken.status(), woken.text());
        assertEquals("[{\"hello\":1}]", woken.text());
        assertEquals(401, outsideDs.send("GET", stream + "?offset=-1", null).status(), "no token, refused on the node outside");
        DsClient.Reply tooBig = outsideDs.send("POST", stream, "[" + "1,".repeat(40_000) + "1]", "Content-Type", "application/json",
                "Authorization", auth);
        assertEquals(413, tooBig.status(), "a body past the limit, refused by the node outside (drained first): " + tooBig.text());

        // every node's HTTP address, as any node reports it
        await("every node published its HTTP address", START, () -> {
            Http.Reply status = new Http(nodes.url(via), root).get("/v1/cluster");
            if (status.status() != 200) {
                return false;
            }
            for (JsonNode n : status.json().path("nodes")) {
                if (!nodes.url(n.path("id").asText()).equals(n.path("http").asText())) {
                    return false;
                }
            }
            return true;
        });
    }
}

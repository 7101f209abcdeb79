package io.strand.app.cluster;

import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.strand.app.http.HttpIo;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Stateless (one shared HTTP client; each request runs on its own virtual thread): serves the HTTP
 * requests of a workspace whose shard has no replica on this node, which happens when a cluster has
 * more nodes than {@code --replicas}. The request ({@code /v1/ws/{ws}/…}, {@code /ds/{ws}/…}, or
 * {@code GET /v1/ws} with a workspace's token) is
 * relayed to a node that replicates the shard, found in the {@link NodeDirectory}, and its answer
 * streamed back as it comes (long-polls and SSE included). The token was checked here (tokens are
 * cluster-wide) and goes along, so that node checks it again. A relayed request carries
 * {@code Strand-Forwarded-By}; a node that gets one and holds no replica either answers {@code 503}
 * rather than relay it again. A request that could not be sent (the node down) goes to the next
 * replica; one that was sent and whose answer was lost is not tried again (it may have been applied):
 * {@code 503 outcome_unknown}. An answer that breaks mid-body reaches the client broken, as it would
 * from that node. A route, the first for these paths (a Helidon filter
 * cannot stream an answer): it passes every other request on to the next route.
 */
final class ReplicaForwarding implements Handler {
    /** Headers of one hop, never relayed (and those the HTTP client sets itself). */
    private static final Set<String> HOP = Set.of("connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
            "trailer", "transfer-encoding", "upgrade", "host", "content-length", "expect", "http2-settings");
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    private final ClusterPlacement cluster;
    private final long maxBodyBytes;

    ReplicaForwarding(ClusterPlacement cluster, long maxBodyBytes) {
        this.cluster = cluster;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** The workspace of {@code /v1/ws/{ws}/…} or {@code /ds/{ws}/…} (raw, as it must be valid without decoding); null for other paths. */
    static String workspaceOf(String rawPath) {
        String rest = rawPath.startsWith("/v1/ws/") ? rawPath.substring(7) : rawPath.startsWith("/ds/") ? rawPath.substring(4) : null;
        if (rest == null) {
            return null;
        }
        int slash = rest.indexOf('/');
        String ws = slash < 0 ? rest : rest.substring(0, slash);
        return ws.isEmpty() ? null : ws;
    }

    @Override
    public void handle(ServerRequest req, ServerResponse res) {
        String ws = workspaceOf(req.path().rawPath());
        if (ws == null && req.path().rawPath().equals("/v1/ws")) { // a workspace token's own workspace (root lists this node's)
            ws = req.context().get(io.strand.app.auth.Principal.class).map(io.strand.app.auth.Principal::ws)
                    .filter(w -> !"*".equals(w)).orElse(null);
        }
        if (ws == null || cluster.hostsWorkspace(ws)) {
            res.next();
            return;
        }
        int shard = cluster.spec().shardOf(ws);
        if (req.headers().contains(HttpIo.FORWARDED_BY)) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "node " + cluster.spec().nodeId() + " holds no replica of shard " + shard
                    + " (workspace '" + ws + "') either; node " + req.headers().get(HttpIo.FORWARDED_BY).get()
                    + " sent this here from an older view of the shard's replicas", Map.of("retryable", true, "shard", shard));
        }
        byte[] body = body(req);
        for (String base : cluster.replicaUrls(shard)) {
            HttpResponse<InputStream> answer;
            try {
                answer = CLIENT.send(request(req, base, body), HttpResponse.BodyHandlers.ofInputStream());
            } catch (java.net.ConnectException | java.net.http.HttpConnectTimeoutException e) {
                continue; // not sent (that node is down): the next replica
            } catch (IOException e) { // sent, then the answer was lost: it may have been applied
                throw new StrandException(ErrorCode.OUTCOME_UNKNOWN, "relayed to " + base + ", whose answer was lost ("
                        + e.getMessage() + "): the request may or may not have been applied", Map.of("retryable", true, "shard", shard));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StrandException(ErrorCode.UNAVAILABLE, "interrupted", Map.of("retryable", true));
            }
            relay(answer, res);
            return;
        }
        List<String> replicas = cluster.node().replicaIds(shard);
        throw new StrandException(ErrorCode.UNAVAILABLE, "node " + cluster.spec().nodeId() + " holds no replica of shard " + shard
                + " (workspace '" + ws + "') and reached none of its replicas " + replicas + "; retry, or send this to one of them",
                Map.of("retryable", true, "shard", shard, "replicas", replicas));
    }

    /**
     * Node {@code base}'s own {@code GET /v1/ws} rows (it gathers nothing further for a request marked
     * forwarded); {@code 503} when it does not answer, so a listing is never silently short.
     */
    static List<com.fasterxml.jackson.databind.JsonNode> workspacesOf(String base, String authorization, String self) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/v1/ws")).timeout(Duration.ofSeconds(10)).GET()
                .header(HttpIo.FORWARDED_BY.defaultCase(), self);
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        try {
            HttpResponse<byte[]> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() != 200) {
                throw new StrandException(ErrorCode.UNAVAILABLE, "node at " + base + " answered " + r.statusCode()
                        + " for its workspaces", Map.of("retryable", true));
            }
            List<com.fasterxml.jackson.databind.JsonNode> rows = new java.util.ArrayList<>();
            io.strand.core.Json.parse(r.body()).path("workspaces").forEach(rows::add);
            return rows;
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot ask node at " + base + " for its workspaces: " + e.getMessage(),
                    Map.of("retryable", true));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StrandException(ErrorCode.UNAVAILABLE, "interrupted", Map.of("retryable", true));
        }
    }

    /** The body to relay; past the limit a {@code 413} after draining as the DS endpoint does, so clients see it. */
    private byte[] body(ServerRequest req) {
        return req.content().hasEntity() ? io.strand.app.http.HttpIo.body(req, maxBodyBytes, io.strand.app.ds.DsHttp.DRAIN_LIMIT) : null;
    }

    private HttpRequest request(ServerRequest req, String base, byte[] body) {
        String query = req.query().rawValue();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + req.path().rawPath() + (query.isEmpty() ? "" : "?" + query)))
                .method(req.prologue().method().text(), body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        for (Header h : req.headers()) {
            if (!HOP.contains(h.name().toLowerCase(Locale.ROOT))) {
                for (String v : h.allValues()) {
                    b.header(h.name(), v);
                }
            }
        }
        return b.header(HttpIo.FORWARDED_BY.defaultCase(), cluster.spec().nodeId()).build();
    }

    /** Status, headers and body of the relayed answer, the body flushed as each part arrives (SSE, long-poll). */
    private static void relay(HttpResponse<InputStream> answer, ServerResponse res) {
        res.status(Status.create(answer.statusCode()));
        answer.headers().map().forEach((name, values) -> {
            if (!HOP.contains(name.toLowerCase(Locale.ROOT)) && !name.startsWith(":")) {
                res.header(HeaderNames.create(name), values.toArray(String[]::new));
            }
        });
        try (InputStream in = answer.body(); OutputStream out = res.outputStream()) {
            byte[] buf = new byte[16 * 1024];
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the relayed answer or the client's connection broke mid-body: nothing more can be told
        }
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Cluster nodes started elsewhere, as {@code strand bench --cluster-nodes URL,…} is given them (one
 * node per machine, each on its own disk: the setting the cluster's figures are meant for, where
 * {@code --cluster N} puts every node on this machine's cores and disk). The bench starts and kills
 * nothing here: it asks each URL's {@code GET /v1/cluster} which node it is, requires the URL of every
 * node the cluster lists (each one's CPU is counted, from its {@code /observe/metrics}: {@link
 * CpuMeter#forRemote}), and leaves the nodes running at the end. Immutable; used by the bench's one
 * thread.
 */
final class RunningCluster implements BenchCluster {
    private static final Duration ASK = Duration.ofSeconds(10);
    /** Node id to base URL, in the cluster's own node order. */
    private final Map<String, String> urls;
    private final String token;

    private RunningCluster(Map<String, String> urls, String token) {
        this.urls = urls;
        this.token = token;
    }

    /**
     * The cluster whose nodes answer at {@code baseUrls} ({@code http://host:port}), asked with
     * {@code token} (null with {@code --auth false}).
     *
     * @throws IllegalArgumentException naming the URL, when one is not a URL, does not answer, is not a
     *         cluster node, repeats a node, or when the cluster lists a node none of them is
     */
    static RunningCluster of(List<String> baseUrls, String token) {
        if (baseUrls.isEmpty()) {
            throw new IllegalArgumentException("--cluster-nodes needs the URL of every node");
        }
        Map<String, String> byId = new LinkedHashMap<>();
        JsonNode status = null;
        for (String given : baseUrls) {
            String url = StrandClient.baseUrl(given, "--cluster-nodes");
            JsonNode s;
            try {
                s = new StrandClient(url, token, ASK).get("/v1/cluster");
            } catch (CliFailure e) {
                throw new IllegalArgumentException("--cluster-nodes: " + url + " answered GET /v1/cluster with: " + e.getMessage()
                        + (token == null ? " (no token given: --token or STRAND_TOKEN, an admin's)" : ""));
            }
            if (!s.path("node").isTextual()) {
                throw new IllegalArgumentException("--cluster-nodes: " + url + " is not a cluster node (its GET /v1/cluster names no node)");
            }
            String id = s.path("node").asText();
            String before = byId.put(id, url);
            if (before != null) {
                throw new IllegalArgumentException("--cluster-nodes: " + before + " and " + url + " are the same node, " + id);
            }
            status = s;
        }
        List<String> listed = new ArrayList<>();
        Map<String, String> published = new LinkedHashMap<>();
        for (JsonNode n : status.path("nodes")) {
            listed.add(n.path("id").asText());
            published.put(n.path("id").asText(), n.path("http").asText("?"));
        }
        List<String> lacking = listed.stream().filter(id -> !byId.containsKey(id)).toList();
        if (!lacking.isEmpty()) {
            throw new IllegalArgumentException("--cluster-nodes lacks node(s) " + String.join(",", lacking.stream()
                    .map(id -> id + " (it publishes " + published.get(id) + ")").toList()) + " of the cluster ("
                    + String.join(",", listed) + "): give every node's URL, so that the CPU of each is counted");
        }
        List<String> foreign = byId.keySet().stream().filter(id -> !listed.contains(id)).toList();
        if (!foreign.isEmpty()) {
            throw new IllegalArgumentException("--cluster-nodes: node(s) " + String.join(",", foreign) + " are not members of the cluster ("
                    + String.join(",", listed) + ") that " + byId.get(status.path("node").asText()) + " belongs to");
        }
        Map<String, String> ordered = new LinkedHashMap<>();
        listed.forEach(id -> ordered.put(id, byId.get(id)));
        return new RunningCluster(ordered, token);
    }

    @Override
    public List<String> up() {
        return List.copyOf(urls.keySet());
    }

    @Override
    public String url(String id) {
        String url = urls.get(id);
        if (url == null) {
            throw new IllegalStateException("node " + id + " is not one of " + urls.keySet());
        }
        return url;
    }

    @Override
    public String token() {
        return token;
    }

    @Override
    public CpuMeter cpu() {
        return CpuMeter.forRemote(urls());
    }

    /** Nothing: these nodes were started by someone else and stay up. */
    @Override
    public void terminate() {
    }

    @Override
    public void close() {
    }
}

package io.strand.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The nodes the cluster pass of {@code strand bench} runs against, as the bench sees them: node ids,
 * each node's HTTP address, the token to send, and how their CPU is read. Two kinds:
 * {@link LocalCluster} (child JVMs the bench starts on this machine, {@code --cluster N}) and
 * {@link RunningCluster} (nodes started elsewhere, {@code --cluster-nodes URL,…}, e.g. one per
 * machine). What both need from a node's {@code GET /v1/cluster} and {@code GET /v1/cluster/shard}
 * is here: which shard holds a workspace and who leads it, and waiting until every shard has a
 * leader. Implementations say which thread owns their state.
 */
interface BenchCluster extends AutoCloseable {
    /** Every shard with a leader: a fresh cluster's first elections, or the failover after a kill. */
    Duration LEADERS_TIMEOUT = Duration.ofSeconds(120);
    /** After that, how long to give leadership to settle on each shard's preferred replica (Ratis priorities). */
    Duration PREFERRED_GRACE = Duration.ofSeconds(20);
    Duration POLL = Duration.ofMillis(100);

    /** The ids of the nodes serving now, in node order. */
    List<String> up();

    /** The HTTP base URL of node {@code id}. */
    String url(String id);

    /** The bearer token every request sends; null with {@code --auth false}. */
    String token();

    /** A meter of this JVM and of every node's CPU, summed. */
    CpuMeter cpu();

    /** SIGTERM to the nodes this bench started (a clean stop); nothing for nodes it did not start. */
    void terminate() throws InterruptedException;

    @Override
    void close();

    /** The socket URL of workspace {@code ws} on node {@code id}. */
    default String socketUrl(String id, String ws) {
        return StrandClient.socketUrl(url(id), ws);
    }

    /** The HTTP addresses of the nodes serving now. */
    default List<String> urls() {
        return up().stream().map(this::url).toList();
    }

    /** A client of node {@code id} with the token and a 10 s timeout. */
    default StrandClient client(String id) {
        return new StrandClient(url(id), token(), Duration.ofSeconds(10));
    }

    /** {@code GET /v1/cluster} asked of node {@code id}. */
    default JsonNode status(String id) {
        return client(id).get("/v1/cluster");
    }

    /** {@code GET /v1/cluster/shard?ws=}: the shard holding workspace {@code ws}, its leader (null while none) and term. */
    default Shard shardOf(String ws) {
        CliFailure last = null;
        for (String id : up()) {
            try {
                JsonNode r = client(id).get("/v1/cluster/shard?ws=" + ws);
                return new Shard(r.path("shard").asInt(), r.path("leader").isTextual() ? r.path("leader").asText() : null,
                        r.path("term").asLong(), r.path("replicas").get(0).asText());
            } catch (CliFailure e) {
                last = e;
            }
        }
        throw new IllegalStateException("no running node answered /v1/cluster/shard?ws=" + ws + (last == null ? "" : ": " + last));
    }

    /** A shard as the cluster reports it: its number, leader (null while there is none), term and preferred leader. */
    record Shard(int shard, String leader, long term, String preferred) {
    }

    /**
     * Polls {@code GET /v1/cluster} on the running nodes until every node is up and every shard has
     * a leader (failing after {@link #LEADERS_TIMEOUT}), then for up to {@link #PREFERRED_GRACE} until
     * each shard's leader is its preferred replica, so leadership does not move in a timed window.
     *
     * @return the last status, and whether leadership settled on the preferred replicas
     */
    default Leaders awaitLeaders() throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + LEADERS_TIMEOUT.toNanos();
        JsonNode status = null;
        String why = "no answer yet";
        while (true) {
            for (String id : up()) {
                try {
                    status = status(id);
                    why = missing(status, up().size());
                    if (why == null) {
                        break;
                    }
                } catch (CliFailure e) {
                    why = id + ": " + e.getMessage();
                }
            }
            if (why == null) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the cluster has no leader for every shard after " + LEADERS_TIMEOUT + ": " + why);
            }
            Thread.sleep(POLL);
        }
        double electedSeconds = (System.nanoTime() - start) / 1e9;
        long grace = System.nanoTime() + PREFERRED_GRACE.toNanos();
        while (!preferredLead(status) && System.nanoTime() < grace) {
            Thread.sleep(POLL);
            try {
                JsonNode next = status(up().get(0));
                if (missing(next, up().size()) == null) {
                    status = next;
                }
            } catch (CliFailure e) {
                // a node busy or between leaders: ask again
            }
        }
        return new Leaders(status, preferredLead(status), electedSeconds);
    }

    /** The cluster's status once every shard had a leader; {@code preferred}: each led by its first replica. */
    record Leaders(JsonNode status, boolean preferred, double electedSeconds) {
    }

    /** Null when {@code status} shows {@code nodes} nodes up and a leader on every shard, else what is missing. */
    static String missing(JsonNode status, int nodes) {
        long upCount = 0;
        for (JsonNode n : status.path("nodes")) {
            upCount += n.path("up").asBoolean() ? 1 : 0;
        }
        if (upCount < nodes) {
            return upCount + " of " + nodes + " nodes up";
        }
        List<String> leaderless = new ArrayList<>();
        for (JsonNode s : status.path("shards")) {
            if (!s.path("leader").isTextual()) {
                leaderless.add(s.path("shard").asText());
            }
        }
        if (status.path("shards").isEmpty()) {
            return "no shards listed";
        }
        return leaderless.isEmpty() ? null : "no leader on shard(s) " + String.join(",", leaderless);
    }

    /** True when every shard of {@code status} is led by its preferred replica (listed first). */
    static boolean preferredLead(JsonNode status) {
        for (JsonNode s : status.path("shards")) {
            if (!s.path("leader").asText("").equals(s.path("replicas").path(0).asText())) {
                return false;
            }
        }
        return true;
    }
}

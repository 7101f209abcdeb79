package io.strand.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RunningCluster#of}: which node each URL is comes from its own {@code GET /v1/cluster}, and a
 * list that does not name every node of the cluster once is refused with the reason. The nodes here
 * are stand-ins (the JDK's HTTP server answering that one route as SPEC §13 shapes it); the bench
 * against real nodes is {@code RunningServersBenchIT}.
 */
class RunningClusterTest {
    private final List<HttpServer> servers = new ArrayList<>();

    @AfterEach
    void stop() {
        servers.forEach(s -> s.stop(0));
    }

    /** A stand-in node {@code self} of a cluster of {@code members}; returns its base URL. */
    private String node(String self, String... members) throws IOException {
        StringBuilder nodes = new StringBuilder();
        for (String m : members) {
            nodes.append(nodes.isEmpty() ? "" : ",").append("{\"id\":\"").append(m).append("\",\"raft\":\"10.0.0.1:7201\",\"http\":")
                    .append("\"http://10.0.0.9:80").append(m.substring(1)).append("\",\"up\":true}");
        }
        String body = self == null ? "{\"error\":{\"code\":\"not_found\",\"message\":\"not a cluster\"}}"
                : "{\"node\":\"" + self + "\",\"nodes\":[" + nodes + "],\"shards\":[]}";
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        s.createContext("/v1/cluster", x -> {
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            x.getResponseHeaders().add("content-type", "application/json");
            x.sendResponseHeaders(self == null ? 404 : 200, b.length);
            x.getResponseBody().write(b);
            x.close();
        });
        s.start();
        servers.add(s);
        return "http://127.0.0.1:" + s.getAddress().getPort();
    }

    @Test
    void shouldOrderTheNodesAsTheClusterListsThemWhateverOrderTheUrlsCameIn() throws IOException {
        String n1 = node("n1", "n1", "n2");
        String n2 = node("n2", "n1", "n2");
        RunningCluster c = RunningCluster.of(List.of(n2 + "/", n1), "t");
        assertEquals(List.of("n1", "n2"), c.up());
        assertEquals(n2, c.url("n2"), "a trailing slash dropped");
        assertEquals(List.of(n1, n2), c.urls());
        assertEquals("t", c.token());
    }

    @Test
    void shouldRefuseAListThatLacksANodeAndNameTheAddressItPublishes() throws IOException {
        String n1 = node("n1", "n1", "n2", "n3");
        String n2 = node("n2", "n1", "n2", "n3");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RunningCluster.of(List.of(n1, n2), null));
        assertTrue(e.getMessage().contains("lacks node(s) n3 (it publishes http://10.0.0.9:803)"), e.getMessage());
    }

    @Test
    void shouldRefuseTheSameNodeTwiceANodeOfAnotherClusterAndAServerNotInClusterMode() throws IOException {
        String n1 = node("n1", "n1");
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> RunningCluster.of(List.of(n1, n1 + "/"), null));
        assertTrue(twice.getMessage().contains("are the same node, n1"), twice.getMessage());

        String other = node("m7", "m7");
        IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class, () -> RunningCluster.of(List.of(n1, other), null));
        assertTrue(foreign.getMessage().contains("node(s) n1 are not members of the cluster (m7) that " + other + " belongs to"),
                foreign.getMessage());

        String single = node(null);
        IllegalArgumentException notCluster = assertThrows(IllegalArgumentException.class, () -> RunningCluster.of(List.of(single), null));
        assertTrue(notCluster.getMessage().contains(single + " answered GET /v1/cluster with") && notCluster.getMessage().contains("no token given"),
                notCluster.getMessage());
    }
}

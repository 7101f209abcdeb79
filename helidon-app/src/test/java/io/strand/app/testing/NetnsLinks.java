package io.strand.app.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A network for {@link ClusterNodes} in which one node's Raft links can be cut (a partition), made
 * of Linux network namespaces with {@code ip} (iproute2; needs root). Owned by the test thread.
 *
 * <pre>
 *   root namespace:  bridge sr&lt;tag&gt; (Raft net 10.213.1.0/24, no address of its own)
 *                    bridge sh&lt;tag&gt; 10.213.2.1/24 (HTTP net: the test reaches every node here)
 *   namespace st&lt;tag&gt;n&lt;i&gt; (node i): lo, r&lt;tag&gt;&lt;i&gt;n 10.213.1.1&lt;i&gt; (Raft), h&lt;tag&gt;&lt;i&gt;n 10.213.2.1&lt;i&gt; (HTTP)
 *                    each the peer of a veth end r/h&lt;tag&gt;&lt;i&gt;h on the matching bridge
 * </pre>
 * {@link #cut} sets the root-side end of the node's Raft veth down: its Raft packets vanish both
 * ways (connections time out, nothing is refused, as across a real partition) while the test still
 * talks HTTP to it; {@link #heal} sets it up again. {@link #close} deletes the namespaces (and with
 * them the veths) and the bridges.
 */
public final class NetnsLinks implements ClusterNodes.Net, AutoCloseable {
    private static final String RAFT_NET = "10.213.1.";
    private static final String HTTP_NET = "10.213.2.";
    private final String tag;
    private final Map<String, Integer> index = new LinkedHashMap<>();
    private final List<String> namespaces = new ArrayList<>();
    private final List<String> bridges = new ArrayList<>();

    private NetnsLinks(String tag) {
        this.tag = tag;
    }

    /**
     * Builds the network for nodes {@code ids}; empty when this machine does not allow it (not root,
     * no iproute2, the subnets taken), with the reason in {@code why}.
     */
    public static Optional<NetnsLinks> create(List<String> ids, StringBuilder why) {
        if (ids.size() > 8) {
            throw new IllegalArgumentException("at most 8 nodes");
        }
        NetnsLinks net = new NetnsLinks(Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36 * 36), 36));
        try {
            if (run("ip", "-br", "addr").contains(HTTP_NET) || run("ip", "-br", "addr").contains(RAFT_NET)) {
                throw new IOException("10.213.1.0/24 or 10.213.2.0/24 is already in use here");
            }
            String raftBridge = "sr" + net.tag;
            String httpBridge = "sh" + net.tag;
            run("ip", "link", "add", raftBridge, "type", "bridge");
            net.bridges.add(raftBridge);
            run("ip", "link", "set", raftBridge, "up");
            run("ip", "link", "add", httpBridge, "type", "bridge");
            net.bridges.add(httpBridge);
            run("ip", "addr", "add", HTTP_NET + "1/24", "dev", httpBridge);
            run("ip", "link", "set", httpBridge, "up");
            int i = 1;
            for (String id : ids) {
                net.index.put(id, i);
                String ns = net.namespace(id);
                run("ip", "netns", "add", ns);
                net.namespaces.add(ns);
                run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
                net.link(ns, "r" + net.tag + i, raftBridge, RAFT_NET + (10 + i));
                net.link(ns, "h" + net.tag + i, httpBridge, HTTP_NET + (10 + i));
                i++;
            }
            return Optional.of(net);
        } catch (IOException | RuntimeException e) {
            why.append(e.getMessage());
            net.close();
            return Optional.empty();
        }
    }

    private void link(String ns, String name, String bridge, String address) throws IOException {
        run("ip", "link", "add", name + "h", "type", "veth", "peer", "name", name + "n");
        run("ip", "link", "set", name + "n", "netns", ns);
        run("ip", "link", "set", name + "h", "master", bridge, "up");
        run("ip", "netns", "exec", ns, "ip", "addr", "add", address + "/24", "dev", name + "n");
        run("ip", "netns", "exec", ns, "ip", "link", "set", name + "n", "up");
    }

    private String namespace(String id) {
        return "st" + tag + "n" + index.get(id);
    }

    @Override
    public String raftHost(String id) {
        return RAFT_NET + (10 + index.get(id));
    }

    @Override
    public String httpHost(String id) {
        return HTTP_NET + (10 + index.get(id));
    }

    @Override
    public List<String> launcher(String id) {
        return List.of("ip", "netns", "exec", namespace(id));
    }

    /** Cuts node {@code id}'s Raft links (both ways); its HTTP port stays reachable. */
    public void cut(String id) throws IOException {
        run("ip", "link", "set", "r" + tag + index.get(id) + "h", "down");
    }

    /** Undoes {@link #cut}. */
    public void heal(String id) throws IOException {
        run("ip", "link", "set", "r" + tag + index.get(id) + "h", "up");
    }

    /** Deletes the namespaces (their veths go with them) and the bridges; the nodes must be stopped. */
    @Override
    public void close() {
        for (String ns : namespaces) {
            quietly("ip", "netns", "del", ns);
        }
        for (String b : bridges) {
            quietly("ip", "link", "del", b);
        }
        namespaces.clear();
        bridges.clear();
    }

    private static void quietly(String... cmd) {
        try {
            run(cmd);
        } catch (IOException | RuntimeException e) {
            System.err.println("clean-up: " + String.join(" ", cmd) + ": " + e.getMessage());
        }
    }

    private static String run(String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no answer in 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", cmd), e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out);
        }
        return out;
    }
}

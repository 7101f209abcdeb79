package io.strand.cluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;

/**
 * Reads one {@link ClusterStatus} for a node: local replicas from their Raft divisions, other shards
 * from a reachable replica's group info, members by a TCP connect. Used once per status call on the
 * caller's thread (node probes on virtual threads); holds no state beyond the call.
 */
final class ClusterStatusReader {
    private static final int CONNECT_TIMEOUT_MS = 300;

    private final RaftNode node;
    private final ClusterSpec spec;

    ClusterStatusReader(RaftNode node) {
        this.node = node;
        this.spec = node.spec();
    }

    ClusterStatus read() {
        List<ClusterStatus.NodeStatus> nodes = probeNodes();
        Set<String> up = new HashSet<>();
        nodes.stream().filter(ClusterStatus.NodeStatus::up).forEach(n -> up.add(n.id()));
        List<ClusterStatus.ShardStatus> shards = new ArrayList<>();
        for (int k = 0; k < spec.shards(); k++) {
            int shard = k;
            shards.add(node.division(k).filter(d -> d.getInfo().isAlive()).map(d -> local(shard, d))
                    .orElseGet(() -> remote(shard, up)));
        }
        return new ClusterStatus(spec.nodeId(), nodes, shards);
    }

    private ClusterStatus.ShardStatus local(int k, RaftServer.Division d) {
        RaftPeerId leader = d.getInfo().getLeaderId();
        return new ClusterStatus.ShardStatus(k, leader == null ? null : leader.toString(), d.getInfo().getCurrentTerm(),
                d.getRaftLog().getLastCommittedIndex(), d.getInfo().getLastAppliedIndex(), node.snapshotIndex(k),
                preferredFirst(new ArrayList<>(d.getRaftConf().getCurrentPeers())),
                d.getInfo().getCurrentRole().name(), node.machine(k).map(ShardStateMachine::leaderChanges).orElse(0L));
    }

    /** A shard without a replica here: asks the replicas that answered the node probe. */
    private ClusterStatus.ShardStatus remote(int k, Set<String> up) {
        List<RaftPeer> peers = node.peersOf(k);
        RaftGroupId gid = RaftGroupId.valueOf(ClusterSpec.groupId(k));
        for (RaftPeer p : peers) {
            if (!up.contains(p.getId().toString()) || p.getId().toString().equals(spec.nodeId())) {
                continue;
            }
            try (RaftClient admin = node.adminClient(RaftGroup.valueOf(gid, peers))) {
                GroupInfoReply info = admin.getGroupManagementApi(p.getId()).info(gid);
                RoleInfoProto role = info.getRoleInfoProto();
                String leader = role.getRole() == RaftPeerRole.LEADER ? p.getId().toString()
                        : role.hasFollowerInfo() ? role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8() : null;
                long commit = info.getCommitInfos().stream()
                        .filter(c -> c.getServer().getId().toStringUtf8().equals(p.getId().toString()))
                        .mapToLong(CommitInfoProto::getCommitIndex).findFirst().orElse(-1);
                long term = info.getLogInfoProto() == null ? -1 : info.getLogInfoProto().getCommitted().getTerm();
                List<RaftPeer> conf = new ArrayList<>(info.getGroup().getPeers());
                return new ClusterStatus.ShardStatus(k, leader == null || leader.isEmpty() ? null : leader, term, commit,
                        -1, -1, preferredFirst(conf), "NONE", 0);
            } catch (IOException | RuntimeException e) {
                // try the next replica
            }
        }
        return new ClusterStatus.ShardStatus(k, null, -1, -1, -1, -1, preferredFirst(new ArrayList<>(peers)), "NONE", 0);
    }

    private static List<String> preferredFirst(List<RaftPeer> peers) {
        peers.sort((a, b) -> a.getPriority() != b.getPriority() ? Integer.compare(b.getPriority(), a.getPriority())
                : a.getId().toString().compareTo(b.getId().toString()));
        return RaftNode.ids(peers);
    }

    private List<ClusterStatus.NodeStatus> probeNodes() {
        List<ClusterSpec.Member> members = members();
        try (ExecutorService probes = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Boolean>> reachable = new ArrayList<>();
            for (ClusterSpec.Member m : members) {
                reachable.add(probes.submit(() -> m.id().equals(spec.nodeId()) || reachable(m)));
            }
            List<ClusterStatus.NodeStatus> out = new ArrayList<>();
            for (int i = 0; i < members.size(); i++) {
                ClusterSpec.Member m = members.get(i);
                out.add(new ClusterStatus.NodeStatus(m.id(), m.address(), get(reachable.get(i))));
            }
            return out;
        }
    }

    /**
     * The nodes this one knows of: its {@code --cluster} list, then any other replica of a shard as its
     * configuration says ({@code strand cluster replace} adds a node that older members' lists lack), so
     * every node lists the same replicas whatever list it was started with.
     */
    private List<ClusterSpec.Member> members() {
        java.util.Map<String, ClusterSpec.Member> byId = new java.util.LinkedHashMap<>();
        spec.members().forEach(m -> byId.put(m.id(), m));
        for (int k = 0; k < spec.shards(); k++) {
            for (RaftPeer p : node.peersOf(k)) {
                String id = p.getId().toString();
                if (!byId.containsKey(id) && p.getAddress() != null) {
                    try {
                        byId.put(id, ClusterSpec.Member.parse(id + "=" + p.getAddress()));
                    } catch (IllegalArgumentException e) {
                        // an address this node cannot read: the shard's replica list still names it
                    }
                }
            }
        }
        return List.copyOf(byId.values());
    }

    private static boolean get(Future<Boolean> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return false;
        }
    }

    /** The node probe: whether a TCP connect to {@code m}'s Raft port succeeds within {@value #CONNECT_TIMEOUT_MS} ms. */
    static boolean reachable(ClusterSpec.Member m) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(m.host(), m.port()), CONNECT_TIMEOUT_MS);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}

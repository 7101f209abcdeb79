package io.strand.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.server.RaftServer;

/**
 * Raft configuration changes of a node's shards ({@code strand cluster replace}). Used on the caller's
 * thread for one call; blocking; holds no state beyond it.
 *
 * <p>For each shard whose current configuration holds the old node: (1) the shard's group is added on
 * the new node with an empty configuration (it learns the real one from the leader, as Ratis's own
 * tests add peers), (2) {@code setConfiguration} with the old node swapped for the new one, same
 * priority, goes to the shard's leader, which first brings the new node up to date (snapshot install
 * and log; Ratis "staging") and then commits the new configuration on a majority of the old and the
 * new one, (3) the old node, if it still answers, drops its replica. A call that stopped half-way can
 * be repeated: shards already moved are skipped, a repeated change Ratis already committed answers
 * success.
 */
final class Membership {
    /** Bound on one shard's change: the new node may need a whole snapshot first. */
    static final Duration CHANGE_TIMEOUT = Duration.ofSeconds(90);
    /** Bound on adding a shard's group on the new node (it opens the replica's stores first). */
    static final Duration GROUP_ADD_TIMEOUT = Duration.ofSeconds(60);
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final RaftNode node;

    Membership(RaftNode node) {
        this.node = node;
    }

    List<Integer> replace(String oldId, String newId, String newAddress) throws IOException {
        if (oldId.equals(newId)) {
            throw new IllegalArgumentException("replace needs two different nodes, not " + oldId + " twice");
        }
        ClusterSpec.Member newcomer = ClusterSpec.Member.parse(newId + "=" + newAddress);
        List<Integer> moved = new ArrayList<>();
        for (int k = 0; k < node.spec().shards(); k++) {
            List<RaftPeer> conf = currentConf(k);
            Optional<RaftPeer> old = conf.stream().filter(p -> p.getId().toString().equals(oldId)).findFirst();
            if (old.isEmpty()) {
                continue;
            }
            RaftPeer added = RaftNode.peer(newcomer.id(), newcomer.address(), old.get().getPriority());
            List<RaftPeer> next = new ArrayList<>();
            for (RaftPeer p : conf) {
                next.add(p.getId().toString().equals(oldId) ? added : p);
            }
            RaftGroupId gid = RaftGroupId.valueOf(ClusterSpec.groupId(k));
            addEmptyGroupOn(added, gid, conf);
            long started = System.nanoTime();
            setConfiguration(k, RaftGroup.valueOf(gid, conf), next);
            LOG.log(System.Logger.Level.INFO, "shard " + k + ": replica moved " + oldId + " -> " + newId + " in "
                    + (System.nanoTime() - started) / 1_000_000 + " ms; peers now " + RaftNode.ids(next));
            node.learnedPeers(k, next);
            dropOldReplica(old.get(), gid, next);
            moved.add(k);
        }
        return moved;
    }

    /**
     * Asks the shard's leader to commit {@code next}. Ratis answers some transient states with an error
     * the blocking client does not retry (leader stepping down, a change still in progress, a leader not
     * ready yet): those are retried with a fresh client until {@link #CHANGE_TIMEOUT}. A change Ratis
     * already committed answers success, so a retry after a lost reply is harmless.
     */
    private void setConfiguration(int k, RaftGroup current, List<RaftPeer> next) throws IOException {
        long deadline = System.nanoTime() + CHANGE_TIMEOUT.toNanos();
        while (true) {
            IOException failure;
            try (RaftClient c = changeClient(current)) {
                RaftClientReply reply = c.admin().setConfiguration(next);
                if (reply.isSuccess()) {
                    return;
                }
                failure = reply.getException() != null ? reply.getException() : new IOException("not successful: " + reply);
            } catch (IOException e) {
                failure = e;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("shard " + k + ": configuration change to " + RaftNode.ids(next) + " failed", failure);
            }
            LOG.log(System.Logger.Level.INFO, "shard " + k + ": configuration change not done yet, retrying: " + failure);
            try {
                Thread.sleep(100); // back-off between tries of a blocking admin call
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while changing shard " + k, e);
            }
        }
    }

    /** Shard {@code k}'s configuration: the local replica's, else what a reachable replica says. */
    private List<RaftPeer> currentConf(int k) throws IOException {
        Optional<RaftServer.Division> local = node.division(k).filter(d -> d.getInfo().isAlive());
        if (local.isPresent()) {
            return new ArrayList<>(local.get().getRaftConf().getCurrentPeers());
        }
        List<RaftPeer> peers = node.peersOf(k);
        RaftGroupId gid = RaftGroupId.valueOf(ClusterSpec.groupId(k));
        IOException last = null;
        for (RaftPeer p : peers) {
            try (RaftClient admin = node.adminClient(RaftGroup.valueOf(gid, peers))) {
                List<RaftPeer> conf = new ArrayList<>(admin.getGroupManagementApi(p.getId()).info(gid).getGroup().getPeers());
                if (!conf.isEmpty()) {
                    return conf;
                }
            } catch (IOException e) {
                last = e;
            }
        }
        throw new IOException("shard " + k + ": no replica of " + RaftNode.ids(peers) + " answered with its configuration", last);
    }

    /**
     * Adds the group on the new node. The add opens the replica's state machine there (its engine's
     * stores, a doc map sized by capacity), seconds on a busy machine, so the call gets
     * {@link #GROUP_ADD_TIMEOUT}, not the 2 s of a status call.
     */
    private void addEmptyGroupOn(RaftPeer newcomer, RaftGroupId gid, List<RaftPeer> conf) throws IOException {
        List<RaftPeer> reach = new ArrayList<>(conf);
        reach.add(newcomer);
        try (RaftClient admin = node.adminClient(RaftGroup.valueOf(gid, reach), GROUP_ADD_TIMEOUT)) {
            RaftClientReply reply = admin.getGroupManagementApi(newcomer.getId()).add(RaftGroup.valueOf(gid), true);
            if (!reply.isSuccess() && !alreadyExists(reply.getException())) {
                throw new IOException("could not add group " + gid + " on " + newcomer.getId() + ": " + reply.getException());
            }
        } catch (AlreadyExistsException e) {
            // added by an earlier, interrupted replace
        } catch (IOException e) {
            if (!alreadyExists(e)) {
                throw new IOException("could not add group " + gid + " on new node " + newcomer.getId() + " at "
                        + newcomer.getAddress() + " (is it running, started as joining?): " + e.getMessage(), e);
            }
        }
    }

    private static boolean alreadyExists(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AlreadyExistsException || String.valueOf(t.getMessage()).contains("already exist")) {
                return true;
            }
        }
        return false;
    }

    private RaftClient changeClient(RaftGroup group) {
        RaftProperties p = RatisConfig.client(node.spec());
        return RaftClient.newBuilder().setRaftGroup(group).setProperties(p)
                .setRetryPolicy(RatisConfig.retryPolicy(CHANGE_TIMEOUT)).build();
    }

    /** Best effort: the removed node, if alive, closes and deletes its replica of the group. */
    private void dropOldReplica(RaftPeer old, RaftGroupId gid, List<RaftPeer> next) {
        List<RaftPeer> reach = new ArrayList<>(next);
        reach.add(old);
        try (RaftClient admin = node.adminClient(RaftGroup.valueOf(gid, reach))) {
            admin.getGroupManagementApi(old.getId()).remove(gid, true, false);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.INFO, "replaced node " + old.getId() + " did not drop its replica of " + gid
                    + " (down?): " + e.getMessage());
        }
    }
}

package io.strand.cluster;

import io.strand.core.Names;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The cluster as this node is told it at start ({@code --node-id}, {@code --cluster}, {@code --shards},
 * {@code --replicas}): who the members are, how many shards there are and where each shard lives.
 * Immutable; validated once in the constructor; every derived answer ({@link #shardOf},
 * {@link #replicasOf}, {@link #groupId}) is a pure function of the spec, so every node that is given
 * the same member list computes the same placement.
 *
 * <p><b>Placement.</b> Members are sorted by id; shard {@code k}'s replicas are the members at sorted
 * positions {@code (k + i) mod N} for {@code i = 0 .. R-1}, where {@code R = min(replicas, N)}. The
 * first of them is the shard's preferred leader (a higher Ratis peer priority), so with {@code S ≥ N}
 * shards every node is preferred leader of about {@code S / N} shards and leaders spread. One shard is
 * replicated on every member whatever {@code R}: the one holding the reserved workspace
 * {@value Names#SYSTEM_WORKSPACE} ({@link #systemShard}), whose signing secret and token journal every
 * node reads from its own replica to check a token.
 *
 * <p><b>Workspace → shard</b> ({@link #shardOf}) is CRC-32C (Castagnoli, as in {@link CRC32C}) of the
 * workspace name's UTF-8 bytes, read as an unsigned 32-bit number, modulo {@code shards}. This
 * function and the shard count are fixed for the life of a cluster: changing either moves workspaces
 * to shards that do not hold their data.
 *
 * @param nodeId          this node's id, one of {@code members} (or not, for a node started only to be
 *                        added by {@code replace}: see {@code joining})
 * @param members         every node of the cluster with its Raft address, the same list on every node
 * @param shards          number of shards (Raft groups), fixed at cluster creation
 * @param replicas        replicas per shard (default 3); all members when there are fewer
 * @param dataDir         this node's data directory: Raft storage under {@code raft/}, shard state under
 *                        {@code shards/<k>/}
 * @param requestTimeout  bound after which a write or read barrier that cannot complete fails with
 *                        {@code 503 unavailable} (default 4.5 s, under the 5 s SPEC §13 promises)
 * @param snapshotEvery   applied entries between automatic snapshots of a shard (default 10,000); the Raft
 *                        log is purged up to each snapshot
 * @param snapshotDefer   a due snapshot waits, up to this many intervals (default 10), until the Raft log
 *                        written since the last one is as large as the copy it costs ({@link SnapshotPolicy})
 * @param snapshotOnStop  take a snapshot when a shard replica stops cleanly (default true: faster restart)
 * @param electionTimeout minimum Raft election timeout; the maximum is twice it (default 500 ms; Ratis's is 150 ms)
 * @param segmentSizeMax  Raft log segment size in bytes (default 8 MiB: purging works per closed segment)
 * @param joining         true for a node that starts with no shard of its own and waits to be added by
 *                        {@code replace}; false creates the shard groups placement gives this node when
 *                        its storage does not have them yet (first start, or an emptied data directory)
 */
public record ClusterSpec(String nodeId, List<Member> members, int shards, int replicas, Path dataDir,
                          Duration requestTimeout, long snapshotEvery, int snapshotDefer, boolean snapshotOnStop,
                          Duration electionTimeout, long segmentSizeMax, boolean joining) {
    public static final int DEFAULT_REPLICAS = 3;
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofMillis(4_500);
    public static final long DEFAULT_SNAPSHOT_EVERY = 10_000;
    /** See {@link SnapshotPolicy}: a snapshot may wait up to this many intervals for the log to outgrow its copy. */
    public static final int DEFAULT_SNAPSHOT_DEFER = 10;
    public static final Duration DEFAULT_ELECTION_TIMEOUT = Duration.ofMillis(500);
    /** The shortest election timeout a spec accepts (heartbeats go every half of it). */
    public static final Duration MIN_ELECTION_TIMEOUT = Duration.ofMillis(50);
    public static final long DEFAULT_SEGMENT_SIZE_MAX = 8L << 20;
    /** Ratis peer priority of a shard's preferred leader; the other replicas have 0. */
    static final int PREFERRED_PRIORITY = 1;

    /** One node: its id and the host and port its Raft server (gRPC) listens on. */
    public record Member(String id, String host, int port) {
        public Member {
            if (id == null || !id.matches("[A-Za-z0-9][A-Za-z0-9_-]{0,62}")) {
                throw new IllegalArgumentException("node id must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}, not '" + id + "'");
            }
            if (host == null || host.isBlank()) {
                throw new IllegalArgumentException("node " + id + " needs a host");
            }
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("node " + id + " has an invalid port " + port);
            }
        }

        /** Parses {@code ID=HOST:PORT}. */
        public static Member parse(String text) {
            int eq = text.indexOf('=');
            int colon = text.lastIndexOf(':');
            if (eq <= 0 || colon < eq + 2 || colon == text.length() - 1) {
                throw new IllegalArgumentException("a cluster member is ID=HOST:PORT, not '" + text + "'");
            }
            try {
                return new Member(text.substring(0, eq).trim(), text.substring(eq + 1, colon).trim(),
                        Integer.parseInt(text.substring(colon + 1).trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("a cluster member is ID=HOST:PORT, not '" + text + "'", e);
            }
        }

        /** {@code HOST:PORT}, the Ratis peer address. */
        public String address() {
            return host + ":" + port;
        }

        @Override
        public String toString() {
            return id + "=" + address();
        }
    }

    public ClusterSpec {
        if (members == null || members.isEmpty()) {
            throw new IllegalArgumentException("a cluster needs at least one member");
        }
        List<Member> sorted = new ArrayList<>(members);
        sorted.sort(Comparator.comparing(Member::id));
        Set<String> ids = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        for (Member m : sorted) {
            if (!ids.add(m.id())) {
                throw new IllegalArgumentException("node id " + m.id() + " appears twice in the cluster list");
            }
            if (!addresses.add(m.address())) {
                throw new IllegalArgumentException("address " + m.address() + " appears twice in the cluster list");
            }
        }
        members = List.copyOf(sorted);
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("a cluster node needs --node-id");
        }
        if (!joining && !ids.contains(nodeId)) {
            throw new IllegalArgumentException("node " + nodeId + " is not in the cluster list " + members
                    + " (start it as joining to add it with replace)");
        }
        if (shards < 1 || shards > 4_096) {
            throw new IllegalArgumentException("shards must be 1..4096, not " + shards);
        }
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas must be at least 1, not " + replicas);
        }
        if (dataDir == null) {
            throw new IllegalArgumentException("a cluster node needs a data directory");
        }
        requestTimeout = requestTimeout == null ? DEFAULT_REQUEST_TIMEOUT : requestTimeout;
        if (requestTimeout.toMillis() < 100) {
            throw new IllegalArgumentException("requestTimeout must be at least 100 ms, not " + requestTimeout);
        }
        if (snapshotEvery < 1) {
            throw new IllegalArgumentException("snapshotEvery must be positive, not " + snapshotEvery);
        }
        if (snapshotDefer < 1) {
            throw new IllegalArgumentException("snapshotDefer must be positive, not " + snapshotDefer);
        }
        electionTimeout = electionTimeout == null ? DEFAULT_ELECTION_TIMEOUT : electionTimeout;
        if (electionTimeout.compareTo(MIN_ELECTION_TIMEOUT) < 0) {
            throw new IllegalArgumentException("electionTimeout must be at least " + MIN_ELECTION_TIMEOUT.toMillis()
                    + " ms, not " + electionTimeout);
        }
        if (segmentSizeMax < 64 * 1024) {
            throw new IllegalArgumentException("segmentSizeMax must be at least 64 KiB, not " + segmentSizeMax);
        }
    }

    /** A spec with the defaults: 3 replicas, 4.5 s request bound, a snapshot every 10,000 entries. */
    public static ClusterSpec of(String nodeId, String clusterList, int shards, Path dataDir) {
        return new ClusterSpec(nodeId, parseMembers(clusterList), shards, DEFAULT_REPLICAS, dataDir,
                DEFAULT_REQUEST_TIMEOUT, DEFAULT_SNAPSHOT_EVERY, DEFAULT_SNAPSHOT_DEFER, true, DEFAULT_ELECTION_TIMEOUT,
                DEFAULT_SEGMENT_SIZE_MAX, false);
    }

    /** Parses {@code n1=HOST:PORT,n2=HOST:PORT,…}. */
    public static List<Member> parseMembers(String clusterList) {
        List<Member> out = new ArrayList<>();
        for (String part : clusterList.split(",")) {
            if (!part.isBlank()) {
                out.add(Member.parse(part.trim()));
            }
        }
        return out;
    }

    public ClusterSpec withReplicas(int r) {
        return new ClusterSpec(nodeId, members, shards, r, dataDir, requestTimeout, snapshotEvery, snapshotDefer, snapshotOnStop,
                electionTimeout, segmentSizeMax, joining);
    }

    public ClusterSpec withSnapshotEvery(long entries, boolean onStop) {
        return new ClusterSpec(nodeId, members, shards, replicas, dataDir, requestTimeout, entries, snapshotDefer, onStop,
                electionTimeout, segmentSizeMax, joining);
    }

    /** @param intervals how many snapshot intervals a snapshot may wait for the log to outgrow its copy (1: never waits) */
    public ClusterSpec withSnapshotDefer(int intervals) {
        return new ClusterSpec(nodeId, members, shards, replicas, dataDir, requestTimeout, snapshotEvery, intervals,
                snapshotOnStop, electionTimeout, segmentSizeMax, joining);
    }

    public ClusterSpec withRequestTimeout(Duration timeout) {
        return new ClusterSpec(nodeId, members, shards, replicas, dataDir, timeout, snapshotEvery, snapshotDefer, snapshotOnStop,
                electionTimeout, segmentSizeMax, joining);
    }

    /** @param timeout the minimum Raft election timeout (the maximum is twice it); at least {@link #MIN_ELECTION_TIMEOUT} */
    public ClusterSpec withElectionTimeout(Duration timeout) {
        return new ClusterSpec(nodeId, members, shards, replicas, dataDir, requestTimeout, snapshotEvery,
                snapshotDefer, snapshotOnStop, timeout, segmentSizeMax, joining);
    }

    public ClusterSpec withSegmentSizeMax(long bytes) {
        return new ClusterSpec(nodeId, members, shards, replicas, dataDir, requestTimeout, snapshotEvery,
                snapshotDefer, snapshotOnStop, electionTimeout, bytes, joining);
    }

    /** The same cluster seen from another node (tests start every node from one spec). */
    public ClusterSpec forNode(String id, Path data) {
        return new ClusterSpec(id, members, shards, replicas, data, requestTimeout, snapshotEvery, snapshotDefer, snapshotOnStop,
                electionTimeout, segmentSizeMax, joining);
    }

    /** This spec for a node that is not (yet) in the member list and waits to be added by {@code replace}. */
    public ClusterSpec joiningAs(Member self, Path data) {
        List<Member> with = new ArrayList<>(members);
        with.removeIf(m -> m.id().equals(self.id()));
        with.add(self);
        return new ClusterSpec(self.id(), with, shards, replicas, data, requestTimeout, snapshotEvery,
                snapshotDefer, snapshotOnStop, electionTimeout, segmentSizeMax, true);
    }

    /** Replicas per shard in effect: {@code min(replicas, members)}. */
    public int effectiveReplicas() {
        return Math.min(replicas, members.size());
    }

    public Optional<Member> member(String id) {
        return members.stream().filter(m -> m.id().equals(id)).findFirst();
    }

    /** This node's member entry. */
    public Member self() {
        return member(nodeId).orElseThrow(() -> new IllegalStateException("node " + nodeId + " is not in " + members));
    }

    /** The shard of a workspace: CRC-32C of its UTF-8 name, unsigned, mod {@code shards}. Never changes. */
    public int shardOf(String workspace) {
        return shardOf(workspace, shards);
    }

    /** {@link #shardOf(String)} for a given shard count. */
    public static int shardOf(String workspace, int shards) {
        CRC32C crc = new CRC32C();
        crc.update(workspace.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % shards);
    }

    /** The shard of the reserved workspace {@value Names#SYSTEM_WORKSPACE}: replicated on every member. */
    public int systemShard() {
        return shardOf(Names.SYSTEM_WORKSPACE);
    }

    /** Shard {@code k}'s replicas by placement, preferred leader first (every member for {@link #systemShard}). */
    public List<Member> replicasOf(int shard) {
        checkShard(shard);
        List<Member> out = new ArrayList<>();
        int count = shard == systemShard() ? members.size() : effectiveReplicas();
        for (int i = 0; i < count; i++) {
            out.add(members.get((shard + i) % members.size()));
        }
        return out;
    }

    /** The shards placement gives {@code id}, ascending. */
    public List<Integer> shardsOf(String id) {
        List<Integer> out = new ArrayList<>();
        for (int k = 0; k < shards; k++) {
            if (replicasOf(k).stream().anyMatch(m -> m.id().equals(id))) {
                out.add(k);
            }
        }
        return out;
    }

    /** Shard {@code k}'s Raft group id: the name-based UUID of {@code "strand-shard-" + k}. Never changes. */
    public static UUID groupId(int shard) {
        return UUID.nameUUIDFromBytes(("strand-shard-" + shard).getBytes(StandardCharsets.UTF_8));
    }

    /** Ratis storage of this node (every group's log and metadata). */
    public Path raftDir() {
        return dataDir.resolve("raft");
    }

    /** Shard {@code k}'s state on this node: {@code live/}, {@code snapshots/}, install temp. */
    public Path shardDir(int shard) {
        return dataDir.resolve("shards").resolve(Integer.toString(shard));
    }

    void checkShard(int shard) {
        if (shard < 0 || shard >= shards) {
            throw new IllegalArgumentException("shard must be 0.." + (shards - 1) + ", not " + shard);
        }
    }
}

package io.strand.cluster;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.client.retry.RequestTypeDependentRetryPolicy;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto.TypeCase;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * Every Ratis setting Strand changes from the Ratis 3.3.0 defaults, in one place, with why. Stateless.
 *
 * <ul>
 *   <li>Election timeout: {@link ClusterSpec#electionTimeout()} to twice it, by default 500–1000 ms
 *       (Ratis: 150–300 ms; heartbeats go every half minimum). With Ratis's, what looked like a ~400 ms
 *       pause of the whole machine (read from the node logs in {@code strand bench --cluster 3} on this VM, every group on all three
 *       nodes timing out within 100 ms of each other, four seconds after the three replicas of the busy
 *       shard had each written a snapshot) made every leader step down mid-load, and the in-flight
 *       writes answered 503 with an unknown outcome. Heartbeats every 75 ms also kept the idle nodes
 *       busy. Failover stays under the 3 s goal ({@code ClusterFailoverIT}; figures in the README).</li>
 *   <li>{@code raft.server.leaderelection.leader.step-down.wait-time}: 4 election timeouts, not 10 s. A
 *       leader that lost its heartbeats (a CPU-starved box is enough) refuses to campaign for this long,
 *       and as the preferred leader (higher priority) it also rejects equal-log candidates, so with the
 *       default the shard measured up to 10 s without a leader while all three nodes were up.</li>
 *   <li>{@code raft.server.log.unsafe-flush.enabled} and {@code async-flush.enabled} false (the Ratis
 *       defaults, set explicitly): an entry is fsynced in a majority's Raft log before it is acked.</li>
 *   <li>{@code raft.server.log.log-metadata.enabled} false: with it (the Ratis default) the leader
 *       appends a metadata entry holding the commit index after every commit, so each write costs two
 *       Raft entries, two log writes and fsyncs per replica and two appends to each follower.
 *       {@code strand bench --cluster 3 --failovers 0 --warmup 30 append-serial append-batched}, one run
 *       each way (fsync; disk probe p50 0.181 ms with it, 0.347 ms without): serial 191 → 235 appends/s at 8,409 → 6,446 µs of server CPU each, batched 24,994 → 28,329
 *       entries/s at 62.3 → 55.6 µs each. What it would buy: a restarted replica applies up to the
 *       commit index it had logged before a leader contacts it; without it, a replica restarted while no
 *       leader is reachable holds its last snapshot's state until a leader is back (a read barrier
 *       needs a leader either way). It was off once before and put back because restarted
 *       replicas then caught up slowly, and once not at all; that was the appender retry policy below,
 *       fixed since ({@code LongOutageCatchUpTest}). {@code ClusterFailoverIT -Preliability}, 20 loops each
 *       way: with it, a restarted node listened after 10.3 s and caught up 1.1 s later (p50); without
 *       it, 8.5 s and 2.8 s (the replay since the snapshot now runs after the leader's first append
 *       rather than at start), so 12.2 s against 11.4 s in all; failover p50 1.60 s against 1.47 s.</li>
 *   <li>{@code raft.server.read.option} LINEARIZABLE: read barriers use ReadIndex, so a follower (or a
 *       deposed leader under a partition) never answers from stale state.</li>
 *   <li>{@code raft.server.snapshot.auto.trigger.*}: on, every {@link SnapshotPolicy#ratisThreshold()}
 *       applied entries, the backstop of the state machine's own requests ({@link SnapshotPolicy}),
 *       {@code retention.file.num} 2; {@code raft.server.log.purge.upto.snapshot.index} true and
 *       {@code purge.gap} = the snapshot interval (at most 1,024 entries), so the log is purged behind every snapshot and disk
 *       stays bounded (a follower that needs purged entries gets the snapshot installed instead).</li>
 *   <li>{@code raft.server.log.segment.size.max}: {@link ClusterSpec#segmentSizeMax()} (purging drops
 *       whole closed segments, so smaller segments keep less log behind the snapshot).</li>
 *   <li>{@code raft.server.log.appender.retry.policy}: {@link #APPENDER_RETRY} (Ratis's default pauses
 *       5 s between requests to a follower that failed 30 times).</li>
 *   <li>{@code raft.server.log.appender.snapshot.chunk.size.max}: {@link #SNAPSHOT_CHUNK} (1 MiB, not
 *       16 MiB: what a snapshot install holds in the leader's heap) and
 *       {@code raft.grpc.server.install_snapshot.request.element-limit}: {@link #SNAPSHOT_REQUESTS_OUTSTANDING}
 *       (2, not 8: how long an install begun while the follower was down holds the appender).</li>
 *   <li>{@code raft.server.log.appender.wait-time.min}: {@link #APPENDER_WAIT} (Ratis: 1 ms), the least
 *       time between two append requests to a follower. After each commit the leader sends its
 *       followers the new commit index, so with 1 ms the next write's append waited out the rest of
 *       that millisecond: one append at a time took 1.1 ms on loopback. {@code ./strand bench --cluster 3
 *       --failovers 0 --warmup 20 append-serial append-concurrent append-batched} (fsync, 2026-12-06
 *       10:05–10:17, probes p50 0.026–0.036 ms), 1 ms / 300 µs / 100 µs / 0: serial 794 / 1,161 /
 *       1,226 / 1,195 appends/s (p50 1.13 / 0.66 / 0.55 / 0.59 ms), 32 in flight 13,495 / 17,802 /
 *       17,761 / 16,224, batched 128,355 / 133,562 / 108,711 / 99,970 entries/s with a slowest batch
 *       of 165 / 17 / 734 / 1,639 ms: below 300 µs appends to a follower go out with fewer entries
 *       each and batches stall behind them. (An earlier try of 0 on a slower disk, {@code docs/measurements.md}, did not
 *       separate from 1 ms.) Ratis's Netty transport, tried the same day, gave the same serial gain
 *       but handles each request on its event loop until done (a write through a follower held the
 *       loop other shards' appends came in on: a 1.4 s stall), so the transport stays gRPC. Again
 *       once the log's syncs were faster ({@link #PREALLOCATE}), same command, 2026-12-06 18:24–18:40,
 *       two alternated pairs, 300 → 100 µs: serial 1,336 and 1,248 → 1,234 and 1,297 appends/s, 32 in
 *       flight 32,442 and 27,516 → 28,656 and 31,431, batched 180,195 and 147,149 → 131,279 and 136,102
 *       entries/s (p99 6.0 and 11.7 → 36.1 and 22.7 ms): 300 µs stays.</li>
 *   <li>{@code raft.server.log.preallocated.size}: {@link #PREALLOCATE} (Ratis: 4 MiB), how far ahead of
 *       its writes a log segment is filled with zeros. Ratis writes those zeros through the page cache,
 *       and its next {@code fsync} then writes them to disk too: a new segment's first flush forced 4 MiB
 *       (the log worker stalled 6.0–6.5 ms each time, every 8 MiB segment, that is every 70–80 entries of
 *       the batched row), and so did the first flush after each later 4 MiB step. With 64 KiB a large
 *       entry's zeros are overwritten by the entry itself before the flush, and a segment starts in
 *       0.9–1.5 ms. Ratis's own {@code startlogsegmentExecutionTime} timer, read from its metrics on each
 *       node in {@code ./strand bench --cluster 3 --failovers 0 --warmup 30 append-serial append-batched}
 *       (2026-12-06 17:28–17:34). {@code ./strand bench --cluster 3 --failovers 0 --warmup 30
 *       append-batched}, three alternated pairs (17:34–17:45, probes p50 0.022–0.038 ms), 4 MiB → 64
 *       KiB: 130,796–141,138 → 130,037–150,357 entries/s (no separation), p99 10.0–10.8 → 6.9–7.6 ms.
 *       Small entries gain more: {@code ./strand bench --cluster 3 --failovers 0 --warmup 20 append-serial
 *       append-concurrent}, two alternated pairs (17:51–18:01, probes p50 0.022–0.035 ms), 4 MiB → 64 KiB:
 *       each node's log sync p50 0.36–0.49 → 0.12–0.32 ms, serial 1,147 and 1,221 → 1,304 and 1,307
 *       appends/s, 32 in flight 26,025 and 27,537 → 29,276 and 35,082.</li>
 *   <li>Appender byte limit and write buffer: {@link ShardEntry#MAX_COMMAND_BYTES} plus 64 KiB (and
 *       64 KiB more for the buffer), so the largest entry (one command alone) fits; each group's direct
 *       write buffer stays under Ratis's default of 8 MiB. Both were 2 MiB, when a command was at most
 *       {@link ShardEntry#MAX_BYTES}.</li>
 * </ul>
 */
final class RatisConfig {
    private static final SizeInBytes ENTRY_LIMIT = SizeInBytes.valueOf(ShardEntry.MAX_COMMAND_BYTES + (64L << 10));
    /** A snapshot due by log bytes ({@link SnapshotPolicy#MAX_LOG_BYTES}) may come before the entry interval. */
    private static final int PURGE_GAP_MAX = 1024;
    private static final SizeInBytes WRITE_BUFFER = SizeInBytes.valueOf(ENTRY_LIMIT.getSize() + (64 << 10));
    /**
     * Largest piece of a snapshot file in one install request. A leader's appender keeps up to 8
     * requests of a snapshot stream outstanding, each read into a heap array: with Ratis's default of
     * 16 MiB, 128 MiB per follower being installed. A shard's snapshot holds queue cycle files of tens of
     * MiB, so a node leading several shards whose follower came back after a long outage ran out of heap
     * in its appenders (seen with the test nodes' {@code -Xmx256m} in {@code ClusterCatchUpIT}: 595
     * {@code OutOfMemoryError}s in one run, each restarting the appender and the install). 1 MiB: with
     * {@link #SNAPSHOT_REQUESTS_OUTSTANDING}, 2 MiB per follower being installed.
     */
    static final SizeInBytes SNAPSHOT_CHUNK = SizeInBytes.valueOf(1L << 20);
    /**
     * Install requests a leader's appender keeps outstanding per follower (Ratis's default 8). An
     * install that starts while the follower is down fails at once, but the appender then waits for a
     * free slot for this many request timeouts (3 s each) before it gives up and starts again: 24 s
     * with the default, during which the follower, back up, hears nothing from that leader. Seen in
     * {@code ClusterCatchUpIT}: a follower down during writes caught up 17–20 s after it listened, the
     * leaders' appenders stuck since an install begun while it was down. 2: 6 s, and 2 MiB in flight.
     */
    static final int SNAPSHOT_REQUESTS_OUTSTANDING = 2;
    /**
     * How long a leader's appender pauses before its next request to a follower after {@code n} failed
     * ones: 1 ms for the first 10, 100 ms for the next 20, then 250 ms (each randomised ±50 %). Ratis's
     * default pauses 5 s after 30 failures, and an INCONSISTENCY reply counts as one: a follower that was
     * down for a few seconds (a node restarted, or started after the others) ran past 30 while its
     * connection was refused, and then got one append attempt per 5 s while it answered INCONSISTENCY
     * to find its log's end. Seen in CI: a late third node stayed empty 13 s at the cluster's start while
     * the leader sent it only heartbeats. A request to a dead follower fails at once, so 4 a second per
     * group costs nothing measurable.
     */
    static final String APPENDER_RETRY = "1ms,10, 100ms,20, 250ms,1000000";
    /** How far ahead of its writes a Raft log segment is filled with zeros (see the class comment). */
    static final SizeInBytes PREALLOCATE = SizeInBytes.valueOf(64L << 10);
    /** The least time between two append requests to a follower (see the class comment). */
    static final TimeDuration APPENDER_WAIT = TimeDuration.valueOf(300, TimeUnit.MICROSECONDS);

    private RatisConfig() {
    }

    static RaftProperties server(ClusterSpec spec) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(spec.raftDir().toFile()));
        GrpcConfigKeys.Server.setHost(p, spec.self().host());
        GrpcConfigKeys.Server.setPort(p, spec.self().port());

        RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(spec.electionTimeout()));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(spec.electionTimeout().multipliedBy(2)));
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p, millis(spec.electionTimeout().multipliedBy(4)));

        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, false);
        RaftServerConfigKeys.Log.setAsyncFlushEnabled(p, false);
        RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(spec.segmentSizeMax()));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, ENTRY_LIMIT);
        RaftServerConfigKeys.Log.setWriteBufferSize(p, WRITE_BUFFER);
        RaftServerConfigKeys.Log.setPreallocatedSize(p, PREALLOCATE);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(PURGE_GAP_MAX, spec.snapshotEvery()));
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, true);
        RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(p, SNAPSHOT_CHUNK);
        GrpcConfigKeys.Server.setInstallSnapshotRequestElementLimit(p, SNAPSHOT_REQUESTS_OUTSTANDING);
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(p, APPENDER_RETRY);
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, APPENDER_WAIT);

        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, new SnapshotPolicy(spec.snapshotEvery(), spec.snapshotDefer()).ratisThreshold());
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, ShardSnapshots.RETAINED);
        RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(p, spec.snapshotOnStop());

        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setTimeout(p, millis(spec.requestTimeout()));
        return p;
    }

    /**
     * Properties of the node's Raft clients (proposals, read barriers): one try waits at most 1 s (Ratis
     * default 3 s) before the retry policy sends it again, possibly to another peer. A request in flight
     * to a leader that died without closing its connection would otherwise hold the next ack for 3 s; a
     * retry of a request that did arrive is answered from the leader's retry cache, never applied twice.
     */
    static RaftProperties client(ClusterSpec spec) {
        RaftProperties p = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, millis(min(Duration.ofSeconds(1), spec.requestTimeout())));
        return p;
    }

    /**
     * Retries writes and reads (leader changes, a dead leader, a follower without a leader) every 50 ms
     * until {@code timeout} after the first try, then gives up: the caller answers {@code unavailable}.
     */
    static RetryPolicy retryPolicy(Duration timeout) {
        RetryPolicy every50ms = RetryPolicies.retryForeverWithSleep(TimeDuration.valueOf(50, TimeUnit.MILLISECONDS));
        RequestTypeDependentRetryPolicy.Builder b = RequestTypeDependentRetryPolicy.newBuilder();
        for (TypeCase type : List.of(TypeCase.WRITE, TypeCase.READ, TypeCase.STALEREAD, TypeCase.WATCH)) {
            b.setRetryPolicy(type, every50ms).setTimeout(type, millis(timeout));
        }
        return b.build();
    }

    /** A policy for one-shot admin calls (group info, group add): no retry. */
    static RetryPolicy noRetry() {
        return RetryPolicies.noRetry();
    }

    static TimeDuration millis(Duration d) {
        return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}

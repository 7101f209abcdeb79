package io.strand.tools;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How many client writes each Raft entry of one shard carried, read from the nodes' own counters
 * ({@code strand.cluster.proposed.entries} and {@code .commands} in {@code GET /observe/metrics}):
 * on a cluster a Raft entry's cost (a log write and fsync on every replica, a message to each
 * follower, a commit) is paid per entry, so this factor explains much of a row's CPU per unit.
 * Stateless.
 *
 * <p>Why the bench reads it: {@code append-batched} (4 batches in flight) measured 2.0 commands per
 * entry, not 4 (2026-12-06). The proposer keeps one entry of a shard in flight; when one committed,
 * its batches' replies went out together, the first new batch to arrive went alone into the next
 * entry, and the others waited for that one to commit: entries of 1 and 3 batches alternated. The
 * proposer's wait ({@code ShardProposer.HOLD}) came out of this reading: 3.9 per entry since.
 */
final class RaftBatching {
    private static final Pattern LINE = Pattern.compile(
            "^strand_cluster_proposed_(entries|commands)\\{shard=\"(\\d+)\",?\\} ([0-9.eE+]+)$", Pattern.MULTILINE);

    /** Raft entries proposed to a shard and the client writes (commands) they carried, summed over nodes. */
    record Count(long entries, long commands) {
        Count minus(Count earlier) {
            return new Count(entries - earlier.entries, commands - earlier.commands);
        }

        /** Commands per entry, NaN when no entry was proposed. */
        double perEntry() {
            return entries > 0 ? (double) commands / entries : Double.NaN;
        }
    }

    private RaftBatching() {
    }

    /** The shard's counts summed over the nodes at {@code baseUrls}; null when one of them cannot be read. */
    static Count read(List<String> baseUrls, int shard) {
        long entries = 0;
        long commands = 0;
        for (String url : baseUrls) {
            try {
                Count c = parse(StrandClient.metrics(url), shard);
                entries += c.entries();
                commands += c.commands();
            } catch (CliFailure e) {
                return null;
            }
        }
        return new Count(entries, commands);
    }

    /** The shard's two counters in one node's Prometheus text; 0 for a counter it does not list (it proposed nothing). */
    static Count parse(String prometheus, int shard) {
        long entries = 0;
        long commands = 0;
        Matcher m = LINE.matcher(prometheus);
        while (m.find()) {
            if (Integer.parseInt(m.group(2)) != shard) {
                continue;
            }
            long value = (long) Double.parseDouble(m.group(3));
            if (m.group(1).equals("entries")) {
                entries = value;
            } else {
                commands = value;
            }
        }
        return new Count(entries, commands);
    }
}

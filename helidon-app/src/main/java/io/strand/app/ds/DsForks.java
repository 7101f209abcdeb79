package io.strand.app.ds;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import io.strand.logtier.LogStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * Stateless; runs on the thread that applies a PUT, holding the workspace's lock: makes a fork, a
 * new stream whose log starts with copies of its source's entries up to the fork point (whole
 * entries, then the part a sub-offset names). The copy streams through in batches, so a source's
 * cold segments are never all in memory; the fork is not visible until the caller registers its row.
 */
final class DsForks {
    private final LogStore logs;
    private final DsRegistry registry;
    private final DsStreams streams;
    private final DsLogWriter writer;

    DsForks(LogStore logs, DsRegistry registry, DsStreams streams, DsLogWriter writer) {
        this.logs = logs;
        this.registry = registry;
        this.streams = streams;
        this.writer = writer;
    }

    /** The fork point as requested, {@code offset/subOffset} ({@code head} for no offset): what a re-create compares. */
    static String forkPoint(DsOffset at, long sub) {
        return (at == null ? "head" : at.toString()) + "/" + sub;
    }

    /** The source path a {@code Stream-Forked-From} names: root-relative, or a full {@code /ds/{ws}/…} path. */
    static String sourcePath(String ws, String header) {
        String v = header;
        int scheme = v.indexOf("://");
        if (scheme > 0) {
            int slash = v.indexOf('/', scheme + 3);
            v = slash < 0 ? "/" : v.substring(slash);
        }
        String prefix = "/ds/" + ws + "/";
        if (v.startsWith(prefix)) {
            v = v.substring(prefix.length());
        }
        while (v.startsWith("/")) {
            v = v.substring(1);
        }
        return DsTarget.streamPath(v);
    }

    /** A new fork of {@code srcPath}: a log holding copies of the source's entries up to the fork point. */
    DsStream fork(DsTarget t, String logName, long now, String ct, Long ttl, Instant expiresAt, String srcPath, DsOffset at,
                  long sub) {
        DsStream src = registry.find(t.ws(), srcPath);
        if (src == null || src.expired(now) && !src.softDeleted) {
            if (src != null) {
                streams.remove(src, now);
            }
            throw StrandException.notFound("fork source '" + srcPath + "' does not exist");
        }
        if (src.softDeleted) {
            throw new StrandException(ErrorCode.STREAM_CONFLICT, "fork source '" + srcPath + "' was deleted");
        }
        if (ct != null && !Objects.equals(DsStream.normalize(ct), DsStream.normalize(src.contentType))) {
            throw new StrandException(ErrorCode.STREAM_CONFLICT, "a fork keeps its source's content type " + src.contentType);
        }
        long srcHead = streams.head(src);
        long upTo = at == null ? srcHead : at.seq();
        if (upTo > srcHead || at != null && at.sub() != 0) {
            throw StrandException.badRequest("fork offset " + at + " is beyond the source's tail");
        }
        boolean inheritExpiry = ttl == null && expiresAt == null;
        DsStream fork = new DsStream(t.ws(), t.path(), logName, now,
                ct == null ? src.contentType : ct, inheritExpiry ? src.ttlSeconds : ttl,
                inheritExpiry ? src.expiresAt : expiresAt, srcPath);
        fork.forkPoint = forkPoint(at, sub);
        List<byte[]> partial = sub > 0 ? subOffsetEntries(src, upTo, sub) : List.of(); // validated before anything is written
        try {
            long from = 1;
            while (from <= upTo) { // copy in batches: the source's cold segments stream through, never all in memory
                List<byte[]> batch = new ArrayList<>();
                long[] last = {from - 1};
                logs.readChunk(src.ws, src.logName, from, DsLogWriter.BATCH_ENTRIES, DsLogWriter.BATCH_BYTES,
                        (seq, ts, key, data, offset, length) -> {
                            if (seq <= upTo) {
                                batch.add(Arrays.copyOfRange(data, offset, offset + length));
                                last[0] = seq;
                            }
                        });
                if (batch.isEmpty()) {
                    throw new StrandException(ErrorCode.UNAVAILABLE, "fork source '" + srcPath + "' ended at seq " + last[0]
                            + " before the fork offset " + upTo);
                }
                writer.append(fork, batch, 0, null, now);
                from = last[0] + 1;
            }
            writer.append(fork, partial, 0, null, now);
        } catch (RuntimeException e) {
            logs.delete(fork.ws, fork.logName);
            throw e;
        }
        return fork;
    }

    /** The part of the source past {@code upTo} a sub-offset inherits: {@code sub} bytes, or {@code sub} JSON messages. */
    private List<byte[]> subOffsetEntries(DsStream src, long upTo, long sub) {
        List<byte[]> after = new ArrayList<>();
        logs.readChunk(src.ws, src.logName, upTo + 1, src.json() ? (int) Math.min(sub, DsLogWriter.BATCH_ENTRIES) : 1,
                Long.MAX_VALUE, (seq, ts, key, data, offset, length) -> after.add(Arrays.copyOfRange(data, offset, offset + length)));
        if (src.json()) {
            if (after.size() < sub) {
                throw StrandException.badRequest("Stream-Fork-Sub-Offset " + sub + " overshoots the messages after the fork offset");
            }
            return after;
        }
        if (after.isEmpty()) {
            throw StrandException.badRequest("Stream-Fork-Sub-Offset " + sub + " overshoots the source");
        }
        byte[] entry = after.getFirst();
        byte[] raw = Base64.getDecoder().decode(Arrays.copyOfRange(entry, 1, entry.length - 1));
        if (sub > raw.length) {
            throw StrandException.badRequest("Stream-Fork-Sub-Offset " + sub + " overshoots the " + raw.length + "-byte append");
        }
        return DsEntries.encode(false, Arrays.copyOf(raw, (int) sub), false);
    }
}

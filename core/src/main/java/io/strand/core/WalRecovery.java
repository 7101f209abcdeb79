package io.strand.core;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Start-up thread only (replayers register from any thread, into a concurrent map): hands every
 * record the last run left in the write-ahead directory to the {@link CommitLog.Replayer} of its
 * type, in the order each lane wrote them, then checkpoints and lets those segments go. Runs once,
 * before traffic.
 *
 * <p>Every leftover segment is read once before anything is replayed, so a corrupt one
 * ({@link WalSegment#read}) refuses the start with nothing applied, and is kept. Replayers must be
 * idempotent: after a process crash (not a power loss) the home files already hold everything.
 */
final class WalRecovery {
    private static final System.Logger LOG = System.getLogger("strand.wal");

    private final Path dir;
    private final List<WalSegmentPool.Listed> leftover;
    private final WalCheckpointer checkpointer;
    private final Map<Byte, CommitLog.Replayer> replayers = new ConcurrentHashMap<>();
    private boolean recovered;

    WalRecovery(Path dir, List<WalSegmentPool.Listed> leftover, WalCheckpointer checkpointer) {
        this.dir = dir;
        this.leftover = List.copyOf(leftover);
        this.checkpointer = checkpointer;
    }

    void register(byte type, CommitLog.Replayer replayer) {
        replayers.put(type, replayer);
    }

    /**
     * Replays, waits for every record to be applied, checkpoints, and lets the leftover segments go.
     * @return the number of records replayed
     * @throws StrandException {@code corrupt} before replaying anything when a segment holds a damaged
     *     group followed by an intact one; the segments are kept
     */
    synchronized long recover() {
        if (recovered) {
            throw new IllegalStateException("recover() runs once");
        }
        recovered = true;
        for (WalSegmentPool.Listed s : leftover) {
            WalSegment.read(s.path(), (type, payload) -> { }); // a corrupt segment refuses the start before anything is replayed
        }
        List<CompletableFuture<?>> applied = new ArrayList<>();
        long records = 0;
        for (WalSegmentPool.Listed s : leftover) {
            records += WalSegment.read(s.path(), (type, payload) -> {
                CommitLog.Replayer r = replayers.get(type);
                if (r == null) {
                    throw new StrandException(ErrorCode.CORRUPT, "write-ahead log " + s.path() + " holds a record of unknown type " + type);
                }
                applied.add(r.replay(payload));
            });
        }
        try {
            CompletableFuture.allOf(applied.toArray(CompletableFuture[]::new)).join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw cause instanceof StrandException se ? se
                    : new StrandException(ErrorCode.CORRUPT, "write-ahead replay failed: " + cause, Map.of(), cause);
        }
        if (!leftover.isEmpty()) {
            checkpointer.checkpoint(leftover.stream().map(WalSegmentPool.Listed::path).toList());
            LOG.log(System.Logger.Level.INFO, "write-ahead log {0}: replayed {1} records from {2} segments",
                    dir, records, leftover.size());
        }
        return records;
    }
}

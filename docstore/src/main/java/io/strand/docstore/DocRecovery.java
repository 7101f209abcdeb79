package io.strand.docstore;

import io.strand.core.DurableFiles;

import static io.strand.docstore.DocStore.CHECKPOINT_FILE;
import static io.strand.docstore.DocStore.JOURNAL_DIR;
import static io.strand.docstore.DocStore.LOCK_FILE;
import static io.strand.docstore.DocStore.MAP_FILE;
import static io.strand.docstore.DocStore.SNAPSHOT_FILE;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs once, on the thread that constructs the {@link DocStore}: opening the store. Takes the directory's lock,
 * decides whether the map view can be trusted (clean-shutdown marker and matching sizing), else recovers it in
 * place or rebuilds it from the snapshot, replays the journal, records a (not clean) checkpoint and counts what
 * the store holds.
 *
 * <p>Nothing here waits on a lock a dead process held: a map is opened plainly only after a clean close,
 * otherwise with {@code recoverPersistedTo}, which takes sole access, or created anew. Every step before the
 * checkpoint is rewritten with clean = 0 may be repeated by the next start; every acknowledged change is in the
 * journal (or still in the write-ahead log, which {@link io.strand.core.Writers#recover} re-applies after this).
 */
final class DocRecovery {
    private static final System.Logger LOG = System.getLogger(DocRecovery.class.getName());

    private final Path dir;
    private final DocStoreConfig config;

    DocRecovery(DocStoreConfig config) {
        this.dir = config.dataDir();
        this.config = config;
    }

    /** The map view start-up produced, the journal index to replay after, and how it was obtained. */
    record Opened(DocView view, long replayFrom, long snapshotIndex, String mode) {
    }

    /** What start-up leaves to the store: its lock held, journal and map open, and the positions it recovered. */
    record Started(FileChannel lock, DocJournal journal, DocView view, long lastIndex, long snapshotIndex,
                   long replayed) {
    }

    /**
     * Opens the store in {@code config}'s data directory, filling {@code index} and {@code capacity} with the docs
     * it holds. On failure everything opened so far is closed again and the lock released.
     */
    Started open(DocIndex index, DocCapacity capacity, DocMetrics metrics) {
        long start = System.nanoTime();
        FileChannel lockCh = null;
        DocJournal j = null;
        DocView v = null;
        try {
            Files.createDirectories(dir);
            lockCh = lock(dir.resolve(LOCK_FILE));
            Files.deleteIfExists(DurableFiles.temp(dir.resolve(SNAPSHOT_FILE)));
            Files.deleteIfExists(DurableFiles.temp(dir.resolve(CHECKPOINT_FILE)));
            j = new DocJournal(dir.resolve(JOURNAL_DIR), config);
            Opened opened = openView();
            v = opened.view();
            long replayed = replay(j, v, opened.replayFrom());
            long last = Math.max(opened.replayFrom(), j.lastIndex());
            v.force();
            new DocCheckpoint(false, last, DocView.fingerprint(config)).write(dir.resolve(CHECKPOINT_FILE));
            load(v, index, capacity);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            metrics.started(opened.mode(), millis, replayed);
            LOG.log(System.Logger.Level.INFO, "doc store {0} opened ({1}, {2} journal records replayed, {3} docs) in {4} ms",
                    dir, opened.mode(), replayed, capacity.docs(), millis);
            return new Started(lockCh, j, v, last, opened.snapshotIndex(), replayed);
        } catch (IOException e) {
            closeQuietly(v, j, lockCh);
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot open doc store " + dir + ": " + e, Map.of(), e);
        } catch (RuntimeException e) {
            closeQuietly(v, j, lockCh);
            throw e;
        }
    }

    /** Counts every doc of the opened view into the name index and the capacity. */
    private void load(DocView v, DocIndex index, DocCapacity capacity) {
        v.forEach((key, encoded) -> {
            DocId id = DocId.fromKey(key);
            index.add(id.ws(), id.doc());
            capacity.load(key.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + (long) encoded.length);
        });
        capacity.warnIfOver(dir);
    }

    private static void closeQuietly(DocView v, DocJournal j, FileChannel lock) {
        try {
            if (v != null) {
                v.close();
            }
        } catch (RuntimeException ignored) {
            // best effort on a failed open
        }
        try {
            if (j != null) {
                j.close();
            }
        } catch (RuntimeException ignored) {
            // best effort on a failed open
        }
        try {
            if (lock != null) {
                lock.close();
            }
        } catch (IOException ignored) {
            // best effort on a failed open
        }
    }

    /** Takes the store directory's lock file so that one process at a time opens it. */
    static FileChannel lock(Path file) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock l;
        try {
            l = ch.tryLock();
        } catch (java.nio.channels.OverlappingFileLockException e) {
            l = null; // held by this JVM
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        if (l == null) {
            ch.close();
            throw new StrandException(ErrorCode.UNAVAILABLE, "doc store " + file.getParent()
                    + " is in use by another process");
        }
        return ch;
    }

    /**
     * Opens the map view: as it is after a clean stop; else recovered in place or rebuilt from the snapshot,
     * per {@link DocStoreConfig#recovery()}. The caller then replays the journal after {@code replayFrom}.
     */
    Opened openView() throws IOException {
        Path mapFile = dir.resolve(MAP_FILE);
        Path cpFile = dir.resolve(CHECKPOINT_FILE);
        DocCheckpoint cp = null;
        try {
            cp = DocCheckpoint.read(cpFile);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, e.getMessage() + "; rebuilding the doc map from snapshot + journal");
        }
        long fingerprint = DocView.fingerprint(config);
        boolean usable = cp != null && cp.fingerprint() == fingerprint && Files.exists(mapFile);
        if (usable) {
            // from here on a crash counts as unclean, whatever start-up does to the map next
            new DocCheckpoint(false, cp.journalIndex(), fingerprint).write(cpFile);
        }
        if (usable && cp.clean()) {
            return new Opened(DocView.openClean(mapFile, config), cp.journalIndex(), -1, "clean");
        }
        if (usable && config.recovery() == DocStoreConfig.Recovery.RECOVER_IN_PLACE) {
            try {
                return new Opened(DocView.recover(mapFile, config), cp.journalIndex(), -1, "recovered");
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "recovering " + mapFile + " failed (" + e
                        + "); rebuilding it from snapshot + journal");
            }
        }
        return rebuild(mapFile);
    }

    private Opened rebuild(Path mapFile) throws IOException {
        // a half-rebuilt map must never be taken for a recoverable one: drop the checkpoint first
        Files.deleteIfExists(dir.resolve(CHECKPOINT_FILE));
        DurableFiles.fsyncDirectory(dir);
        DocView v = DocView.create(mapFile, config);
        try {
            long snapY = DocSnapshot.read(dir.resolve(SNAPSHOT_FILE), (k, value) -> putReplayed(v, k, value));
            return new Opened(v, snapY, snapY, "rebuilt");
        } catch (RuntimeException e) {
            v.close();
            throw e;
        }
    }

    /** Applies every journal record after {@code from} to {@code v}; returns how many. */
    static long replay(DocJournal j, DocView v, long from) {
        long[] count = {0};
        j.replay(from, (idx, r) -> {
            if (r.isDelete()) {
                v.remove(r.key());
            } else {
                putReplayed(v, r.key(), new StoredDoc(r.version(), r.json()).encode());
            }
            count[0]++;
        });
        return count[0];
    }

    private static void putReplayed(DocView v, String key, byte[] encoded) {
        try {
            v.put(key, encoded);
        } catch (RuntimeException e) {
            throw new StrandException(ErrorCode.STORAGE_FULL, "the doc map cannot hold the stored docs (" + e.getMessage()
                    + "); raise maxEntries / averageValueBytes in the doc store configuration", Map.of(), e);
        }
    }
}

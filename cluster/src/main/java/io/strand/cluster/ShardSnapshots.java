package io.strand.cluster;

import io.strand.core.DirMirror;
import io.strand.core.DurableFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;

/**
 * One shard replica's directories and snapshots on this node, the {@link StateMachineStorage} Ratis
 * ships to a follower that needs a snapshot. Thread-safe: the apply thread takes snapshots and fills
 * the live directory; Ratis threads read {@link #getLatestSnapshot()} (an atomic reference).
 *
 * <p>Layout under {@code DATA/shards/<k>/}:
 * <pre>
 *   live/                        the engine's files (derived state: wiped and refilled at every start)
 *   snapshots/&lt;term&gt;_&lt;index&gt;/    complete snapshots, the last {@link #RETAINED} kept
 *       …engine files…
 *       MANIFEST                 written last, listed last (so sent last to a follower)
 *   snapshot.tmp/stage/          the next snapshot being staged (while applies go on) or written (takeSnapshot)
 *   install.tmp/                 a snapshot being received from the leader (Ratis writes it)
 * </pre>
 * {@code MANIFEST} (UTF-8 lines):
 * <pre>
 *   strand-shard-snapshot 1
 *   term T
 *   index I
 *   stamp S                          the shard's clock after entry I (see ShardStateMachine)
 *   dir  RELPATH                     every directory, so empty ones survive a transfer
 *   file SIZE CRC32C-HEX RELPATH     every file the engine wrote
 *   end
 * </pre>
 * Commit point of a snapshot taken here: the rename of {@code snapshot.tmp/stage} to
 * {@code snapshots/<term>_<index>} after every file and directory in it is fsynced; a crash before
 * leaves only the temp, removed at the next start. A snapshot received from the leader is committed by
 * Ratis when its last chunk arrives: it moves its whole temp directory (every file MD5-checked) to
 * {@code snapshots/}. A named snapshot whose files do not match its manifest is corruption: reported,
 * never used, never deleted.
 */
final class ShardSnapshots implements StateMachineStorage {
    static final int RETAINED = 2;
    static final String MANIFEST = "MANIFEST";
    private static final String MAGIC = "strand-shard-snapshot 1";
    private static final Pattern NAME = Pattern.compile("(\\d+)_(\\d+)");
    private static final System.Logger LOG = System.getLogger("strand.cluster");

    private final int shard;
    private final Path shardDir;
    private final AtomicReference<FileListSnapshotInfo> latest = new AtomicReference<>();
    /** Held by whoever writes the staging directory: {@link #take}, {@link #prestage}, {@link #reload}. */
    private final ReentrantLock stageLock = new ReentrantLock();
    private volatile boolean cancelPrestage;
    /** Bytes the last {@link #take} compared and copied (its open files), or the snapshot {@link #refillLive} restored; 0 before either. */
    private volatile long lastCopyBytes;
    /** CRCs of the hard-linked files of the last take (guarded by {@code stageLock}). */
    private Map<FileKey, String> linkedCrcs = Map.of();

    ShardSnapshots(int shard, Path shardDir) {
        this.shard = shard;
        this.shardDir = shardDir;
    }

    Path liveDir() {
        return shardDir.resolve("live");
    }

    Path snapshotsDir() {
        return shardDir.resolve("snapshots");
    }

    private Path takeTmp() {
        return shardDir.resolve("snapshot.tmp");
    }

    @Override
    public void init(RaftStorage raftStorage) throws IOException {
        Files.createDirectories(snapshotsDir());
    }

    @Override
    public FileListSnapshotInfo getLatestSnapshot() {
        return latest.get();
    }

    @Override
    public void format() {
    }

    @Override
    public java.io.File getSnapshotDir() {
        return snapshotsDir().toFile();
    }

    @Override
    public java.io.File getTmpDir() {
        return shardDir.resolve("install.tmp").toFile();
    }

    /**
     * Forgets what was loaded and finds the newest complete snapshot on disk again (at start and after
     * Ratis installed one). Removes temp leftovers of interrupted takes and installs.
     *
     * @throws IOException when the newest named snapshot does not match its manifest (corruption)
     */
    FileListSnapshotInfo reload() throws IOException {
        stopPrestage();
        try {
            deleteTree(takeTmp());
        } finally {
            stageLock.unlock();
        }
        Files.createDirectories(snapshotsDir());
        try (Stream<Path> siblings = Files.list(shardDir)) {
            for (Path p : siblings.toList()) { // Ratis parks the replaced snapshots/ as snapshots.tmp<date>
                if (p.getFileName().toString().startsWith("snapshots.tmp")) {
                    deleteTree(p);
                }
            }
        }
        List<Path> named = snapshotDirsNewestFirst();
        FileListSnapshotInfo info = named.isEmpty() ? null : verify(named.getFirst());
        latest.set(info);
        return info;
    }

    /** The snapshot directories, newest (highest index) first. */
    private List<Path> snapshotDirsNewestFirst() throws IOException {
        try (Stream<Path> s = Files.list(snapshotsDir())) {
            return s.filter(p -> Files.isDirectory(p) && NAME.matcher(p.getFileName().toString()).matches())
                    .sorted(Comparator.comparingLong(ShardSnapshots::indexOf).reversed())
                    .toList();
        }
    }

    private static long indexOf(Path dir) {
        Matcher m = NAME.matcher(dir.getFileName().toString());
        return m.matches() ? Long.parseLong(m.group(2)) : -1;
    }

    /**
     * Writes a snapshot at {@code ti}: {@code writer} brings the staging directory (empty, or a copy
     * {@link #prestage staged} shortly before) up to the engine's files, then the manifest is written,
     * everything fsynced, and the directory renamed into {@code snapshots/} (the commit point). A
     * prestage still running is cancelled first.
     */
    FileListSnapshotInfo take(TermIndex ti, long stamp, SnapshotWriter writer) throws IOException {
        long started = System.nanoTime();
        stopPrestage();
        try {
            Path stage = stageDir();
            Files.createDirectories(stage);
            long t0 = System.nanoTime();
            DirMirror.Result r = writer.writeTo(stage);
            long t1 = System.nanoTime();
            lastCopyBytes = r.bytesRead();
            Map<FileKey, String> crcs = new HashMap<>();
            List<String> lines = new ArrayList<>();
            lines.add(MAGIC);
            lines.add("term " + ti.getTerm());
            lines.add("index " + ti.getIndex());
            lines.add("stamp " + stamp);
            for (Path p : walk(stage)) {
                String rel = stage.relativize(p).toString();
                if (Files.isDirectory(p)) {
                    lines.add("dir " + rel);
                    DurableFiles.fsyncDirectory(p);
                } else {
                    Integer mirrored = r.crcs().get(rel); // compared and copied just now: no second read
                    String crc = mirrored != null ? HexFormat.of().toHexDigits(mirrored) : crcOfShared(p, crcs);
                    lines.add("file " + Files.size(p) + " " + crc + " " + rel);
                    DurableFiles.fsync(p);
                }
            }
            linkedCrcs = crcs;
            lines.add("end");
            Path manifest = stage.resolve(MANIFEST);
            Files.write(manifest, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
            DurableFiles.fsync(manifest);
            DurableFiles.fsyncDirectory(stage);
            long t2 = System.nanoTime();
            Path target = snapshotsDir().resolve(ti.getTerm() + "_" + ti.getIndex());
            deleteTree(target); // a same-named leftover can only be an older attempt at the same index
            Files.move(stage, target, StandardCopyOption.ATOMIC_MOVE);
            DurableFiles.fsyncDirectory(snapshotsDir());
            FileListSnapshotInfo info = verify(target);
            latest.set(info);
            LOG.log(System.Logger.Level.INFO, "shard " + shard + ": snapshot " + ti + " taken in "
                    + (System.nanoTime() - started) / 1_000_000 + " ms: " + r.files() + " files compared ("
                    + r.bytesRead() / (1 << 20) + " MiB read, " + r.bytesWritten() / (1 << 20) + " MiB written) in "
                    + (t1 - t0) / 1_000_000 + " ms, " + r.linked() + " closed cycle files linked, checksummed and forced in "
                    + (t2 - t1) / 1_000_000 + " ms"); // the shard's writes waited for all of it
            return info;
        } finally {
            stageLock.unlock();
        }
    }

    /** What the last snapshot cost: the bytes it compared and copied; after a start, the size of the snapshot it restored (0 without one). */
    long lastCopyBytes() {
        return lastCopyBytes;
    }

    /**
     * Any thread, while the engine keeps applying: brings the staging directory close to the engine's
     * current files (forced to disk), so the next {@link #take} on the apply thread writes and forces
     * only what changed since. Skipped when a take or another prestage holds the directory; stops
     * early when a take asks for it. The staged copy need not be consistent: {@code take} compares
     * every block again.
     */
    void prestage(PrestageWriter writer) {
        if (!stageLock.tryLock()) {
            return;
        }
        try {
            long t0 = System.nanoTime();
            DirMirror.Result r = writer.writeTo(stageDir(), () -> cancelPrestage);
            LOG.log(System.Logger.Level.INFO, "shard " + shard + ": next snapshot staged (" + r.bytesWritten() / (1 << 20)
                    + " MiB written) in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        } catch (CancellationException e) {
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": snapshot staging cancelled by a take");
        } catch (IOException | RuntimeException e) { // the live files changed under it; take() starts over where needed
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": snapshot staging stopped: " + e);
        } finally {
            stageLock.unlock();
        }
    }

    /**
     * Cancels a running prestage and holds the staging directory (the caller unlocks {@code stageLock}).
     * The flag is cleared only once the lock is held, so a prestage that took the lock just before
     * still sees it and stops at its next block.
     */
    private void stopPrestage() {
        cancelPrestage = true;
        stageLock.lock();
        cancelPrestage = false;
    }

    private Path stageDir() {
        return takeTmp().resolve("stage");
    }

    /** Stages an engine's files into a directory while it keeps applying; see {@link #prestage}. */
    @FunctionalInterface
    interface PrestageWriter {
        DirMirror.Result writeTo(Path dir, java.util.function.BooleanSupplier cancelled) throws IOException;
    }

    /** Makes a directory (empty, or holding an older staged copy) an exact copy of an engine's state. */
    @FunctionalInterface
    interface SnapshotWriter {
        DirMirror.Result writeTo(Path dir) throws IOException;
    }

    /**
     * Wipes {@code live/} and refills it from {@code snapshot} (or leaves it empty), checking every
     * file's size and CRC-32C against the manifest while copying. The restart rule: the live directory
     * is derived state, only the snapshot and the Raft log after it are the truth.
     */
    void refillLive(FileListSnapshotInfo snapshot) throws IOException {
        Path live = liveDir();
        deleteTree(live);
        Files.createDirectories(live);
        if (snapshot == null) {
            return;
        }
        Path dir = dirOf(snapshot);
        long restored = 0;
        for (String line : Files.readAllLines(dir.resolve(MANIFEST), StandardCharsets.UTF_8)) {
            if (line.startsWith("dir ")) {
                Files.createDirectories(live.resolve(safe(line.substring(4))));
            } else if (line.startsWith("file ")) {
                String[] f = line.split(" ", 4);
                Path to = live.resolve(safe(f[3]));
                Files.createDirectories(to.getParent());
                String crc = copyWithCrc(dir.resolve(f[3]), to);
                if (!crc.equals(f[2]) || Files.size(to) != Long.parseLong(f[1])) {
                    throw new IOException("shard " + shard + " snapshot " + dir.getFileName() + ": " + f[3]
                            + " does not match its manifest (size " + f[1] + ", crc32c " + f[2] + "; read crc32c "
                            + crc + ") — the snapshot is corrupt");
                }
                restored += Long.parseLong(f[1]);
            }
        }
        lastCopyBytes = restored; // what the next take compares at least: whether it takes its turn (SnapshotPolicy#takeDue)
    }

    /** The shard clock recorded with {@code snapshot}. */
    static long stampOf(FileListSnapshotInfo snapshot) throws IOException {
        for (String line : Files.readAllLines(dirOf(snapshot).resolve(MANIFEST), StandardCharsets.UTF_8)) {
            if (line.startsWith("stamp ")) {
                return Long.parseLong(line.substring(6));
            }
        }
        throw new IOException("snapshot " + dirOf(snapshot) + " has no stamp in its " + MANIFEST);
    }

    static Path dirOf(FileListSnapshotInfo snapshot) {
        return snapshot.getFiles().getLast().getPath().getParent();
    }

    /**
     * Checks a named snapshot against its manifest (presence and size of every file; contents are
     * checked while copying) and describes it for Ratis, the manifest last.
     */
    private FileListSnapshotInfo verify(Path dir) throws IOException {
        Path manifest = dir.resolve(MANIFEST);
        Matcher name = NAME.matcher(dir.getFileName().toString());
        if (!name.matches() || !Files.isRegularFile(manifest)) {
            throw new IOException("shard " + shard + " snapshot " + dir + " has no " + MANIFEST + ": it is corrupt");
        }
        List<String> lines = Files.readAllLines(manifest, StandardCharsets.UTF_8);
        if (lines.isEmpty() || !MAGIC.equals(lines.getFirst()) || !"end".equals(lines.getLast())
                || !("term " + name.group(1)).equals(lines.get(1)) || !("index " + name.group(2)).equals(lines.get(2))) {
            throw new IOException("shard " + shard + " snapshot " + dir + ": " + MANIFEST
                    + " is not a complete manifest of this snapshot");
        }
        List<FileInfo> files = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("file ")) {
                String[] f = line.split(" ", 4);
                Path p = dir.resolve(safe(f[3]));
                if (!Files.isRegularFile(p) || Files.size(p) != Long.parseLong(f[1])) {
                    throw new IOException("shard " + shard + " snapshot " + dir + ": " + f[3]
                            + " is missing or not " + f[1] + " bytes: the snapshot is corrupt");
                }
                files.add(new FileInfo(p.toAbsolutePath(), null));
            }
        }
        files.add(new FileInfo(manifest.toAbsolutePath(), null));
        return new FileListSnapshotInfo(files, Long.parseLong(name.group(1)), Long.parseLong(name.group(2)));
    }

    /**
     * Keeps the newest {@link #RETAINED} snapshots. The newest of the older ones becomes the staging
     * directory of the next snapshot when there is none (a take moves it away), the rest are deleted.
     * Recycled, it already holds the shard's files as they were at the snapshot before the retained
     * ones, and the prefix of an append-only file does not change, so the next {@link #prestage} writes
     * only what changed since instead of a full copy, which was three quarters of the stager thread's
     * samples ({@code perf}, {@code strand bench --cluster 3 append-batched}) and was all written back
     * to the disk the Raft logs fsync on. The stager's CPU stayed about the same (reading the retired
     * copy to compare it costs about what writing it did): what this saves is disk writes. Ratis calls
     * this on the apply thread, right after {@link #take}; a rename costs no copy.
     */
    @Override
    public void cleanupOldSnapshots(SnapshotRetentionPolicy policy) throws IOException {
        List<Path> named = snapshotDirsNewestFirst();
        List<Path> older = named.subList(Math.min(RETAINED, named.size()), named.size());
        for (int i = 0; i < older.size(); i++) {
            if (i == 0 && recycleAsStage(older.get(i))) {
                continue;
            }
            deleteTree(older.get(i));
        }
    }

    /** Moves a retired snapshot to the staging directory if none is there and nobody is writing it. */
    private boolean recycleAsStage(Path retired) throws IOException {
        if (!stageLock.tryLock()) {
            return false;
        }
        try {
            Path stage = stageDir();
            if (Files.exists(stage)) {
                return false;
            }
            Files.createDirectories(stage.getParent());
            Files.move(retired, stage, StandardCopyOption.ATOMIC_MOVE); // its MANIFEST goes at the next mirror
            return true;
        } finally {
            stageLock.unlock();
        }
    }

    private String safe(String rel) throws IOException {
        Path p = Path.of(rel).normalize();
        if (rel.isEmpty() || p.isAbsolute() || p.startsWith("..")) {
            throw new IOException("shard " + shard + " snapshot manifest names an unsafe path '" + rel + "'");
        }
        return p.toString();
    }

    /** Every directory and file under {@code root} (not root itself), parents before children, sorted. */
    private static List<Path> walk(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> !p.equals(root)).sorted().toList();
        }
    }

    /** A file by inode, size and modification time: what a CRC of a hard-linked, never rewritten file is cached under. */
    private record FileKey(Object inode, long size, long modified) {
    }

    /**
     * The CRC-32C of a snapshot file; for a file hard-linked from the engine (an immutable one, see
     * {@code DirMirror}), taken from the previous take when inode, size and time are unchanged, so a
     * snapshot does not re-read every closed cycle file. {@code seen} collects this take's entries.
     */
    private String crcOfShared(Path file, Map<FileKey, String> seen) throws IOException {
        if ((int) Files.getAttribute(file, "unix:nlink") < 2) {
            return crcOf(file);
        }
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        FileKey key = new FileKey(a.fileKey(), a.size(), a.lastModifiedTime().toMillis());
        String crc = linkedCrcs.get(key);
        if (crc == null) {
            crc = crcOf(file);
        }
        seen.put(key, crc);
        return crc;
    }

    private static String crcOf(Path file) throws IOException {
        CRC32C crc = new CRC32C();
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                crc.update(buf, 0, n);
            }
        }
        return HexFormat.of().toHexDigits((int) crc.getValue());
    }

    private static String copyWithCrc(Path from, Path to) throws IOException {
        CRC32C crc = new CRC32C();
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(from); OutputStream out = Files.newOutputStream(to)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                crc.update(buf, 0, n);
                out.write(buf, 0, n);
            }
        }
        return HexFormat.of().toHexDigits((int) crc.getValue());
    }

    static void deleteTree(Path root) throws IOException {
        DirMirror.deleteTree(root);
    }

    /** Bytes of all retained snapshots, for status. */
    long bytes() {
        try (Stream<Path> s = Files.walk(snapshotsDir())) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).sum();
        } catch (IOException | UncheckedIOException e) {
            LOG.log(System.Logger.Level.DEBUG, "shard " + shard + ": cannot size snapshots: " + e);
            return -1;
        }
    }
}

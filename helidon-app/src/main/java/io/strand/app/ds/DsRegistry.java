package io.strand.app.ds;

import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.StrandException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Thread-safe: lookups are lock-free; creates and removes of one workspace run under its lock, a
 * row's save under its stream's lock. The durable map from DS stream paths to Strand logs, per
 * workspace. Each stream is one small JSON file {@code <data>/ds/<ws>/<log>.json}, replaced by
 * write-temp, fsync, rename, fsync the directory, so a crash leaves the old or the new row, never a
 * torn one. New streams get a generated log name {@code ds-<time><random>} so user text never
 * reaches the file system, and a stream deleted and created again gets a new log (old offsets never
 * point into it).
 */
public final class DsRegistry {
    private static final SecureRandom RANDOM = new SecureRandom();
    private final Path root;
    private final boolean replicated;
    private final ConcurrentHashMap<String, DsStream> byPath = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, DsStream> byLog = new ConcurrentHashMap<>();

    /** The registry under {@code root}; {@code replicated} for a cluster replica's (see {@link DsStream#fromJson}). */
    DsRegistry(Path root, boolean replicated) {
        this.root = root;
        this.replicated = replicated;
        load();
    }

    private void load() {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (DirectoryStream<Path> wss = Files.newDirectoryStream(root)) {
            for (Path wsDir : wss) {
                String ws = wsDir.getFileName().toString();
                try (DirectoryStream<Path> rows = Files.newDirectoryStream(wsDir, "*.json")) {
                    for (Path row : rows) {
                        DsStream s = DsStream.fromJson(ws, Json.parse(Files.readAllBytes(row)), replicated);
                        byPath.put(key(ws, s.path), s);
                        byLog.put(key(ws, s.logName), s);
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the Durable Streams registry " + root + ": " + e.getMessage(), e);
        }
    }

    private static String key(String ws, String path) {
        return ws + '\u0000' + path;
    }

    /** The stream at {@code path}, expired or not; null when there is none. */
    DsStream find(String ws, String path) {
        return byPath.get(key(ws, path));
    }

    /** The stream log {@code log} holds, or null (asked on every native append: no key is built while there are no streams). */
    DsStream forLog(String ws, String log) {
        return byLog.isEmpty() ? null : byLog.get(key(ws, log));
    }

    /** Adds {@code dsPath} and {@code contentType} to a native log's info when the log holds a DS stream. */
    public void annotate(String ws, String log, com.fasterxml.jackson.databind.node.ObjectNode info) {
        DsStream s = byLog.get(key(ws, log));
        if (s != null) {
            info.put("dsPath", s.path);
            info.put("contentType", s.contentType);
        }
    }

    Collection<DsStream> all() {
        return byPath.values();
    }

    /** A fresh, always valid log name. */
    static String newLogName() {
        byte[] r = new byte[8];
        RANDOM.nextBytes(r);
        StringBuilder sb = new StringBuilder("ds-").append(Long.toString(System.currentTimeMillis(), 36));
        for (byte b : r) {
            sb.append(String.format(Locale.ROOT, "%02x", b));
        }
        return sb.toString();
    }

    /** Registers and persists a new stream; the caller holds the workspace's lock (nobody else sees the stream yet). */
    void add(DsStream s) {
        save(s);
        byPath.put(key(s.ws, s.path), s);
        byLog.put(key(s.ws, s.logName), s);
    }

    /** Forgets a stream and deletes its row; the caller holds the workspace's lock. */
    void remove(DsStream s) {
        byPath.remove(key(s.ws, s.path), s);
        byLog.remove(key(s.ws, s.logName), s);
        try {
            Files.deleteIfExists(file(s));
            fsyncDir(file(s).getParent());
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot delete the row of DS stream " + s.path + ": " + e.getMessage());
        }
    }

    /** Writes a stream's row durably (temp, fsync, rename, fsync dir); the caller holds the stream's lock. */
    void save(DsStream s) {
        Path file = file(s);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.createDirectories(file.getParent());
            long access = s.lastAccessMs;
            byte[] bytes = Json.bytes(s.toJson());
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(java.nio.ByteBuffer.wrap(bytes));
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            fsyncDir(file.getParent());
            s.savedAccessMs = access;
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot write the row of DS stream " + s.path + ": " + e.getMessage());
        }
    }

    /**
     * Saves the rows whose last access moved since they were written, so a snapshot of a cluster
     * replica's directory holds the sliding-TTL clock every replica has in memory (a replica rebuilt
     * from the snapshot then decides each expiry as the others do). Runs on the shard's apply thread,
     * the one thread that changes a replicated row.
     */
    void saveTouched() {
        for (DsStream s : byPath.values()) {
            if (s.lastAccessMs != s.savedAccessMs) {
                s.lock.lock();
                try {
                    save(s);
                } finally {
                    s.lock.unlock();
                }
            }
        }
    }

    private static void fsyncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private Path file(DsStream s) {
        return root.resolve(s.ws).resolve(s.logName + ".json");
    }

    /** The lock creates and deletes of one workspace take. */
    Object workspaceLock(String ws) {
        return locks.computeIfAbsent(ws, w -> new Object());
    }

    private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();
}

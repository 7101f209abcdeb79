package io.strand.cluster;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A small deterministic engine for tests: an append-only file of {@code [stamp i64][len u32][command]}
 * records and a counter. The reply to a command is the counter after it (8 bytes) followed by the
 * command, so a caller can check it got its own reply. Commands are idempotent like producer
 * (id, seq) appends: a command applied before is not applied again and answers its first counter,
 * so tests retry a write that got 503 and still count exactly. Snapshot = copy of the file. Thread-safe by its
 * monitor (the apply thread writes, test threads read).
 */
final class LedgerEngine implements ShardEngine {
    static final String FILE = "ledger.bin";

    private final int shard;
    private final Path file;
    private final List<byte[]> commands = new ArrayList<>();
    private final List<Long> stamps = new ArrayList<>();
    private final java.util.Map<String, Long> applied = new java.util.HashMap<>();
    private final MessageDigest digest;
    private DataOutputStream out;
    private volatile boolean closed;
    /** Set by a test to make the next apply fail like an I/O error. */
    volatile boolean failNext;

    LedgerEngine(int shard, Path liveDir) throws IOException {
        this.shard = shard;
        this.file = liveDir.resolve(FILE);
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        if (Files.exists(file)) {
            try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(file)))) {
                while (true) {
                    long stamp;
                    try {
                        stamp = in.readLong();
                    } catch (EOFException end) {
                        break;
                    }
                    byte[] c = new byte[in.readInt()];
                    in.readFully(c);
                    record(stamp, c);
                }
            }
        }
        OutputStream raw = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        out = new DataOutputStream(new java.io.BufferedOutputStream(raw));
    }

    private void record(long stamp, byte[] c) {
        commands.add(c);
        applied.put(key(c), (long) commands.size());
        stamps.add(stamp);
        digest.update(ByteBuffer.allocate(8).putLong(stamp).array());
        digest.update(c);
    }

    @Override
    public synchronized CompletableFuture<byte[]> apply(long stampedAtMillis, byte[] command) {
        if (closed) {
            throw new IllegalStateException("shard " + shard + " engine is closed");
        }
        Long before = applied.get(key(command));
        if (before != null) { // a retry of a command that did land: answered, not applied again
            return CompletableFuture.completedFuture(ByteBuffer.allocate(8 + command.length).putLong(before).put(command).array());
        }
        if (failNext) {
            failNext = false;
            return CompletableFuture.failedFuture(new IOException("injected I/O failure on shard " + shard));
        }
        try {
            out.writeLong(stampedAtMillis);
            out.writeInt(command.length);
            out.write(command);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        record(stampedAtMillis, command);
        byte[] reply = ByteBuffer.allocate(8 + command.length).putLong(commands.size()).put(command).array();
        return CompletableFuture.completedFuture(reply);
    }

    private static String key(byte[] command) {
        return new String(command, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    @Override
    public synchronized io.strand.core.DirMirror.Result snapshotTo(Path dir) throws IOException {
        out.flush();
        Files.copy(file, dir.resolve(FILE), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.createDirectories(dir.resolve("empty-dir-kept"));
        return new io.strand.core.DirMirror.Result(1, Files.size(file), Files.size(file), 0);
    }

    synchronized int count() {
        return commands.size();
    }

    synchronized List<byte[]> commands() {
        return List.copyOf(commands);
    }

    synchronized List<Long> stamps() {
        return List.copyOf(stamps);
    }

    /** SHA-256 over every (stamp, command) applied, in order. */
    synchronized String fingerprint() {
        try {
            return HexFormat.of().formatHex(((MessageDigest) digest.clone()).digest()) + "/" + commands.size();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }

    boolean closed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        closed = true;
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

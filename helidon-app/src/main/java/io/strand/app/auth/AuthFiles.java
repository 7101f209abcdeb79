package io.strand.app.auth;

import io.strand.core.DurableFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Set;

/**
 * The data directory's secret files: {@code DATA/secret} (the 32-byte HS256 signing key) and
 * {@code DATA/root.token}. Both are written owner-only (0600) as temp file, fsync, atomic rename,
 * fsync of the directory: a crash leaves either the old file or the whole new one, never a
 * partial key. Stateless; callers serialise writes to one file (start-up only).
 */
public final class AuthFiles {
    public static final String SECRET = "secret";
    public static final String ROOT_TOKEN = "root.token";
    public static final int SECRET_BYTES = 32;
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private AuthFiles() {
    }

    /** The signing key, created (random, 256 bits) on first start. */
    public static byte[] secret(Path dataDir) {
        Path file = dataDir.resolve(SECRET);
        try {
            if (!Files.exists(file)) {
                byte[] key = new byte[SECRET_BYTES];
                new SecureRandom().nextBytes(key);
                writePrivate(file, key);
            }
            byte[] key = Files.readAllBytes(file);
            if (key.length != SECRET_BYTES) {
                throw new IllegalStateException(file + " holds " + key.length + " bytes, not a " + SECRET_BYTES
                        + "-byte key; restore it from backup or delete it (and every token) to start over");
            }
            return key;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create the signing key " + file, e);
        }
    }

    /** Replaces {@code file} with {@code content}, owner-only, durably and atomically. */
    public static void writePrivate(Path file, byte[] content) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), ownerOnly(dir))) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        } catch (FileAlreadyExistsException e) {
            throw new IOException("another process is writing " + tmp, e);
        }
        DurableFiles.commit(tmp, file);
    }

    /** Owner-only permissions where the filesystem has POSIX permissions (elsewhere the directory's ACLs apply). */
    static FileAttribute<?>[] ownerOnly(Path dir) {
        return dir.getFileSystem().supportedFileAttributeViews().contains("posix")
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
                : new FileAttribute<?>[0];
    }
}

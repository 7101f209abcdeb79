package io.strand.docstore;

import io.strand.core.DurableFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Immutable value; written one at a time by start-up ({@link DocRecovery}), the {@link DocCheckpointer} and close.
 * The checkpoint and clean-shutdown marker ({@code DATA/docs.checkpoint}).
 *
 * <pre>
 * offset  size  field
 * 0       8     magic "STRDCKP1"
 * 8       1     clean: 1 = the map file was closed and fsynced by a clean shutdown
 * 9       8     journal index Y: the (fsynced) map reflects every journal record ≤ Y
 * 17      8     map fingerprint ({@link DocView#fingerprint}): the sizing the map file was created with
 * 25      4     CRC32C of bytes 0..24
 * </pre>
 * Written temp + fsync + rename + directory fsync. Commit point: the rename of the fsynced
 * {@code docs.checkpoint.tmp} onto {@code docs.checkpoint}; a crash before it leaves the old file, after it the
 * new one. A clean marker is written only after the map and the journal are closed and the file system synced,
 * a checkpoint only after the same sync, so neither claims pages that are not on disk. Start-up
 * rewrites it with clean = 0 before any write is accepted; a missing or unreadable checkpoint means "not
 * clean", which only costs a rebuild, since the snapshot and the journal hold every doc.
 */
record DocCheckpoint(boolean clean, long journalIndex, long fingerprint) {
    private static final byte[] MAGIC = "STRDCKP1".getBytes(StandardCharsets.US_ASCII);
    private static final int SIZE = 29;

    void write(Path file) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(SIZE);
        buf.put(MAGIC).put((byte) (clean ? 1 : 0)).putLong(journalIndex).putLong(fingerprint);
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        DurableFiles.writeAtomically(file, buf.array());
    }

    /** The checkpoint in {@code file}, or null when it is missing or unreadable (reported by the caller). */
    static DocCheckpoint read(Path file) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        }
        if (bytes.length != SIZE || !Arrays.equals(Arrays.copyOf(bytes, MAGIC.length), MAGIC)) {
            throw new IOException("doc checkpoint " + file + " has a bad size or magic");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, SIZE - 4);
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        if (buf.getInt(SIZE - 4) != (int) crc.getValue()) {
            throw new IOException("doc checkpoint " + file + " fails its checksum");
        }
        return new DocCheckpoint(buf.get(8) == 1, buf.getLong(9), buf.getLong(17));
    }
}

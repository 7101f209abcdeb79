package io.strand.docstore;

import io.strand.core.DurableFiles;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.BiConsumer;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * Stateless; written by the {@link DocCheckpointer}, read at start-up. A durable copy of every doc
 * ({@code DATA/docs.snapshot}), so that journal cycles before it can be deleted and the map view can always be
 * rebuilt.
 *
 * <pre>
 * offset  size  field
 * 0       8     magic "STRDSNP1"
 * 8       8     journal index Y: every journal record ≤ Y is reflected below
 * 16      …     entries, each: tag 1 (1 byte), k (2), key "ws/doc" (k), n (4), value = StoredDoc (n)
 * …       1     tag 0 (end)
 * …       8     entry count
 * …       4     CRC32C of every byte before it
 * </pre>
 * The snapshot is fuzzy: it is copied from the live map, so it may also reflect some records after Y. That is
 * safe because journal records carry whole values and replaying from Y re-applies them in order. Commit
 * point: the rename of the fsynced {@code docs.snapshot.tmp} onto {@code docs.snapshot}; a crash before it
 * leaves the previous snapshot, which the retained journal still completes. A bad magic, a short file or a
 * CRC mismatch is {@code corrupt}: start-up stops rather than rebuild from a partial copy.
 */
final class DocSnapshot {
    private static final byte[] MAGIC = "STRDSNP1".getBytes(StandardCharsets.US_ASCII);

    private DocSnapshot() {
    }

    /** Writes a snapshot of {@code view} labelled with journal index {@code y}; returns the entry count. */
    static long write(Path target, long y, DocView view) throws IOException {
        Path tmp = DurableFiles.temp(target);
        CRC32C crc = new CRC32C();
        long[] count = {0};
        try (OutputStream fileOut = Files.newOutputStream(tmp);
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
                     new CheckedOutputStream(fileOut, crc), 1 << 16))) {
            out.write(MAGIC);
            out.writeLong(y);
            try {
                view.forEach((key, value) -> {
                    try {
                        byte[] k = key.getBytes(StandardCharsets.UTF_8);
                        out.writeByte(1);
                        out.writeShort(k.length);
                        out.write(k);
                        out.writeInt(value.length);
                        out.write(value);
                        count[0]++;
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
            out.writeByte(0);
            out.writeLong(count[0]);
            out.flush();
            new DataOutputStream(fileOut).writeInt((int) crc.getValue());
        }
        try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        DurableFiles.commit(tmp, target);
        return count[0];
    }

    /**
     * Reads a snapshot, passing each entry (key, encoded {@link StoredDoc}) to {@code sink}.
     *
     * @return the snapshot's journal index Y, or -1 when there is no snapshot file
     */
    static long read(Path file, BiConsumer<String, byte[]> sink) {
        if (!Files.exists(file)) {
            return -1;
        }
        CRC32C crc = new CRC32C();
        try (InputStream fileIn = Files.newInputStream(file);
             DataInputStream in = new DataInputStream(new CheckedInputStream(new BufferedInputStream(fileIn, 1 << 16), crc))) {
            byte[] magic = in.readNBytes(MAGIC.length);
            if (!Arrays.equals(magic, MAGIC)) {
                throw corrupt(file, "bad magic");
            }
            long y = in.readLong();
            long count = 0;
            while (true) {
                byte tag = in.readByte();
                if (tag == 0) {
                    break;
                }
                if (tag != 1) {
                    throw corrupt(file, "bad entry tag " + tag + " after " + count + " entries");
                }
                byte[] k = in.readNBytes(in.readUnsignedShort());
                int n = in.readInt();
                if (n < 9 || n > 64 << 20) {
                    throw corrupt(file, "bad value length " + n + " after " + count + " entries");
                }
                byte[] v = in.readNBytes(n);
                if (v.length != n) {
                    throw new EOFException();
                }
                sink.accept(new String(k, StandardCharsets.UTF_8), v);
                count++;
            }
            long expectedCount = in.readLong();
            int expectedCrc = (int) crc.getValue();
            int storedCrc = in.readInt();
            if (in.read() != -1) {
                throw corrupt(file, "bytes after the trailer");
            }
            if (expectedCount != count || storedCrc != expectedCrc) {
                throw corrupt(file, "checksum or count mismatch (" + count + " entries read, " + expectedCount
                        + " recorded)");
            }
            return y;
        } catch (EOFException e) {
            throw corrupt(file, "truncated");
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot read doc snapshot " + file + ": " + e.getMessage());
        }
    }

    private static StrandException corrupt(Path file, String what) {
        return new StrandException(ErrorCode.CORRUPT, "doc snapshot " + file + " is corrupt: " + what
                + "; the docs cannot be rebuilt from it");
    }
}

package io.strand.core;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import net.openhft.chronicle.queue.ExcerptAppender;

/**
 * Makes what one Chronicle appender wrote durable. fdatasync of the appender's current cycle file
 * writes back its dirty mapped pages (on Linux mmap and the file share one page cache) and costs
 * one flush, where Chronicle's {@code sync()} msyncs from the start of the mapping to the write
 * position (measured on this project's machines: ≈0.5 ms against ≈3 ms). A cycle file is synced
 * once more when the appender leaves it, and its directory once when it appears. Used by the one
 * thread that owns the appender.
 */
public final class AppenderSync implements AutoCloseable {
    private FileChannel channel;
    private File file;

    public void sync(ExcerptAppender appender) {
        File current = appender.currentFile();
        if (current == null) {
            appender.sync();
            return;
        }
        try {
            if (!current.equals(file)) {
                if (channel != null) {
                    channel.force(false); // the tail of the cycle file the appender left
                    channel.close();
                }
                channel = FileChannel.open(current.toPath(), StandardOpenOption.WRITE);
                file = current;
                forceDirectory(current.toPath().getParent());
            }
            channel.force(false);
        } catch (IOException e) {
            throw new StrandException(ErrorCode.UNAVAILABLE, "cannot sync " + current + ": " + e.getMessage(), Map.of(), e);
        }
    }

    /** fsync of a directory, so a new or renamed entry in it survives power loss. */
    public static void forceDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    @Override
    public void close() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // a handle used only for fsync
            }
            channel = null;
            file = null;
        }
    }
}

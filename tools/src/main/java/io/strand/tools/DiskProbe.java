package io.strand.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * The disk's own latency for one durable small write, measured before {@code strand bench} starts
 * its server so fsync-mode figures can be judged against the hardware: a 4 MiB file is written
 * with zeros and forced (so later writes allocate nothing), then {@link #WRITES} writes of
 * {@link #WRITE_BYTES} bytes at successive offsets go through a channel opened with
 * {@link StandardOpenOption#DSYNC}, each timed on its own. The file is deleted afterwards.
 */
final class DiskProbe {
    static final int FILE_BYTES = 4 * 1024 * 1024;
    static final int WRITES = 2_000;
    static final int WRITE_BYTES = 300;

    /** Percentiles of one DSYNC write, in ms. */
    record Result(Path dir, double p50Ms, double p99Ms, double maxMs) {
        String line() {
            return String.format(Locale.ROOT, "disk probe: %d DSYNC writes of %d B in %s: p50=%.3fms p99=%.3fms max=%.3fms",
                    WRITES, WRITE_BYTES, dir, p50Ms, p99Ms, maxMs);
        }

        ObjectNode json() {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("dir", dir.toString());
            o.put("writes", WRITES);
            o.put("writeBytes", WRITE_BYTES);
            o.put("p50Ms", p50Ms);
            o.put("p99Ms", p99Ms);
            o.put("maxMs", maxMs);
            return o;
        }
    }

    private DiskProbe() {
    }

    static Result run(Path dir) throws IOException {
        Path file = dir.resolve("disk-probe.tmp");
        try {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer zeros = ByteBuffer.allocate(64 * 1024);
                for (long at = 0; at < FILE_BYTES; at += zeros.capacity()) {
                    zeros.clear();
                    while (zeros.hasRemaining()) {
                        ch.write(zeros, at + zeros.position());
                    }
                }
                ch.force(true);
            }
            byte[] record = new byte[WRITE_BYTES];
            Arrays.fill(record, (byte) 'x');
            ByteBuffer buf = ByteBuffer.wrap(record);
            Histogram h = new Histogram(BenchReport.HIGHEST_NANOS, 3);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.DSYNC)) {
                for (int i = 0; i < WRITES; i++) {
                    buf.clear();
                    long at = (long) i * WRITE_BYTES;
                    long t = System.nanoTime();
                    while (buf.hasRemaining()) {
                        ch.write(buf, at + buf.position());
                    }
                    h.recordValue(Math.max(1, Math.min(System.nanoTime() - t, BenchReport.HIGHEST_NANOS)));
                }
            }
            return new Result(dir, h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6, h.getMaxValue() / 1e6);
        } finally {
            Files.deleteIfExists(file);
        }
    }
}

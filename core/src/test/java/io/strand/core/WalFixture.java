package io.strand.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/** What the write-ahead tests share: a record type, a replay of a directory as a new start does it, its files. */
final class WalFixture {
    static final byte TYPE = 7;

    private WalFixture() {
    }

    /** Starts a new write-ahead log on {@code dir} and replays it, as a restart does; the records as UTF-8 text. */
    static List<String> replayAll(Path dir) {
        List<String> seen = new ArrayList<>();
        WriteAheadLog wal = new WriteAheadLog(dir);
        wal.register(TYPE, payload -> {
            seen.add(StandardCharsets.UTF_8.decode(payload).toString());
            return CompletableFuture.completedFuture(null);
        });
        wal.recover();
        return seen;
    }

    /** The lanes' segment files in {@code dir} (not the free ones). */
    static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".wal") && !p.getFileName().toString().startsWith("free-")).toList();
        }
    }

    /** The free (recycled) segment files in {@code dir}. */
    static List<Path> recycled(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("free-")).toList();
        }
    }

    /** The one segment of {@code dir} that holds records. */
    static Path segmentWithRecords(Path dir) throws IOException {
        return segments(dir).stream().filter(p -> WalSegment.read(p, (t, b) -> { }) > 0).findFirst().orElseThrow();
    }

    /** Where the next group would go: past the segment header and every group's length. */
    static long endOfRecords(Path segment) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(segment));
        int at = WalSegment.SEGMENT_HEADER_BYTES;
        while (bytes.getInt(at) > 0) {
            at += WalSegment.GROUP_HEADER_BYTES + bytes.getInt(at);
        }
        return at;
    }
}

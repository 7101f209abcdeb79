package io.strand.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * Stateless: what a server process holds in memory, maps and keeps open, from {@code /proc/PID/status},
 * {@code /proc/PID/maps} and {@code /proc/PID/fd}, for {@code strand bench many-logs}. Its resident memory is split into
 * anonymous pages (the JVM's heap, metaspace, code, stacks, off-heap buffers) and file pages (mapped
 * files in memory: queue files among them), and the queue files it maps are counted, so that what
 * idle logs cost shows apart from the heap the JVM was given.
 */
final class ProcessMemory {
    /** The text of {@code /proc/PID/status}, read once for all the fields a row reports. */
    static String status(long pid) throws IOException {
        return Files.readString(Path.of("/proc/" + pid + "/status"));
    }

    /** A field of {@code status} in MiB ({@code VmRSS}, {@code RssAnon}, {@code RssFile}), -1 when absent. */
    static long statusMiB(String status, String field) {
        for (String line : status.split("\n")) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).replaceAll("\\D+", "")) / 1024;
            }
        }
        return -1;
    }

    /**
     * How many distinct Chronicle queue files ({@code .cq4} cycle files, {@code .cq4t} metadata) the
     * process maps now; a mapping of a deleted file (its path ends {@code " (deleted)"}) is not counted.
     */
    static int mappedQueueFiles(long pid) throws IOException {
        return mappedQueueFiles(Files.readString(Path.of("/proc/" + pid + "/maps")));
    }

    static int mappedQueueFiles(String maps) {
        Set<String> files = new HashSet<>();
        for (String line : maps.split("\n")) {
            // address perms offset dev inode [path]; the path may hold spaces
            String[] f = line.trim().split("\\s+", 6);
            if (f.length == 6 && (f[5].endsWith(".cq4") || f[5].endsWith(".cq4t"))) {
                files.add(f[5]);
            }
        }
        return files.size();
    }

    /** How many file descriptors the process holds open now. */
    static long openFiles(long pid) throws IOException {
        try (var s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return s.count();
        }
    }

    private ProcessMemory() {
    }
}

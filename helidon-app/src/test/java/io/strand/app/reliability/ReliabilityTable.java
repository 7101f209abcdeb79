package io.strand.app.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Prints the reliability table when a test run ends (runs on the launcher's thread, once at the start
 * and once at the end of a session). At the start it clears the rows of an earlier run; at the end, if
 * any {@link FaultTest} wrote a row, it prints them all, by scenario name, as one Markdown table on stdout and writes the
 * same table next to the rows ({@code table.md}). Registered through
 * {@code META-INF/services/org.junit.platform.launcher.LauncherSessionListener}; the build runs
 * the integration tests in one fork, so one session sees every row.
 */
public final class ReliabilityTable implements LauncherSessionListener {
    static final String[] HEADER = {"scenario", "runs", "operations", "acknowledged", "lost", "duplicated", "gaps",
            "detected corruptions", "outcome"};

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        try {
            Files.deleteIfExists(ReliabilityReport.rowsFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        Path rows = ReliabilityReport.rowsFile();
        if (!Files.exists(rows)) {
            return;
        }
        try {
            List<String[]> body = new ArrayList<>();
            for (String line : Files.readAllLines(rows, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    body.add(line.split("\t", -1));
                }
            }
            body.sort(java.util.Comparator.comparing(r -> r[0])); // by scenario, so related rows sit together
            List<String[]> table = new ArrayList<>();
            table.add(HEADER);
            table.addAll(body);
            String text = render(table);
            Files.writeString(rows.resolveSibling("table.md"), text, StandardCharsets.UTF_8);
            System.out.println();
            System.out.println("Reliability (strand.reliability.scale=" + ReliabilityReport.scale() + ")");
            System.out.print(text);
            System.out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A Markdown table, columns padded to their widest cell, numbers right-aligned. */
    static String render(List<String[]> table) {
        int cols = HEADER.length;
        int[] width = new int[cols];
        for (String[] row : table) {
            for (int i = 0; i < cols && i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (int r = 0; r < table.size(); r++) {
            String[] row = table.get(r);
            out.append('|');
            for (int i = 0; i < cols; i++) {
                String cell = i < row.length ? row[i] : "";
                boolean right = r > 0 && i > 0 && i < cols - 1;
                out.append(' ').append(right ? pad(cell, width[i], true) : pad(cell, width[i], false)).append(" |");
            }
            out.append('\n');
            if (r == 0) {
                out.append('|');
                for (int i = 0; i < cols; i++) {
                    boolean right = i > 0 && i < cols - 1;
                    out.append(' ').append("-".repeat(Math.max(1, width[i] - (right ? 1 : 0)))).append(right ? ":" : "").append(" |");
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    private static String pad(String s, int width, boolean right) {
        String fill = " ".repeat(Math.max(0, width - s.length()));
        return right ? fill + s : s + fill;
    }
}

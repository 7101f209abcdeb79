package io.strand.app.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestWatcher;
import org.opentest4j.TestAbortedException;

/**
 * The reliability suite's recorder (thread-safe: rows are appended under the class lock, each as one
 * line). A {@link FaultTest} method takes a {@link ReliabilityRow} parameter, fills in its counts,
 * and when it ends this writes the row with its outcome ({@code pass}, or {@code FAIL} and the first
 * line of the failure) to {@link #rowsFile()}; a disabled one is written as {@code not run} with the
 * reason. {@link ReliabilityTable} prints the rows as one table when the test run ends.
 *
 * <p>Loop counts: {@link #loops} picks the short count (the default build, {@code .ci/run}) or the
 * full one ({@code mvn verify -Preliability}, which sets {@code strand.reliability.scale=1}); a
 * larger scale multiplies the full count for soak runs ({@code -Dstrand.reliability.scale=10}).
 */
public final class ReliabilityReport implements ParameterResolver, AfterTestExecutionCallback, TestWatcher {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(ReliabilityReport.class);

    /** {@code strand.reliability.scale}: 0 (default) = short loops, N ≥ 1 = N × the full loops. */
    public static int scale() {
        return Integer.getInteger("strand.reliability.scale", 0);
    }

    /** The loop count for this run: {@code shortCount} by default, {@code fullCount × scale} in the reliability profile. */
    public static int loops(int shortCount, int fullCount) {
        int scale = scale();
        return scale <= 0 ? shortCount : fullCount * scale;
    }

    /** Where rows collect: {@code strand.reliability.rows} (the build sets it under {@code target/}). */
    public static Path rowsFile() {
        return Path.of(System.getProperty("strand.reliability.rows", "target/reliability/rows.tsv"));
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext c) {
        return p.getParameter().getType() == ReliabilityRow.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext c) {
        return c.getStore(NS).computeIfAbsent("row", k -> new ReliabilityRow(scenarioName(c)), ReliabilityRow.class);
    }

    @Override
    public void afterTestExecution(ExtensionContext c) {
        ReliabilityRow row = c.getStore(NS).get("row", ReliabilityRow.class);
        if (row == null) {
            row = new ReliabilityRow(scenarioName(c)); // a test that reports no counts still gets its outcome row
        }
        Optional<Throwable> failure = c.getExecutionException();
        if (failure.isPresent() && failure.get() instanceof TestAbortedException aborted) {
            write(row.scenario(), new ReliabilityRow("").counts(), "not run: " + firstLine(aborted)); // an assumption failed
            return;
        }
        String outcome = failure.map(t -> "FAIL: " + firstLine(t)).orElse("pass")
                + (row.note().isEmpty() ? "" : " (" + row.note() + ")");
        write(row.scenario(), row.counts(), outcome);
    }

    @Override
    public void testDisabled(ExtensionContext c, Optional<String> reason) {
        write(scenarioName(c), new ReliabilityRow("").counts(), "not run: " + reason.orElse("disabled"));
    }

    private static String scenarioName(ExtensionContext c) {
        Method m = c.getRequiredTestMethod();
        Scenario s = m.getAnnotation(Scenario.class);
        String base = s != null ? s.value() : c.getRequiredTestClass().getSimpleName() + "." + m.getName();
        boolean invocation = c.getParent().flatMap(ExtensionContext::getTestMethod).isPresent();
        // "[1] fsync", or with JUnit 6's quoting of strings "[1] durability = \"fsync\"": keep the bare value
        String argument = c.getDisplayName().replaceFirst("^\\[\\d+]\\s*", "").replaceFirst("^\\w+ = ", "").replace("\"", "");
        return invocation ? base + " (" + argument + ")" : base;
    }

    private static String firstLine(Throwable t) {
        String m = String.valueOf(t.getMessage());
        int nl = m.indexOf('\n');
        m = nl < 0 ? m : m.substring(0, nl);
        return m.length() > 160 ? m.substring(0, 160) + "…" : m;
    }

    private static synchronized void write(String scenario, String[] counts, String outcome) {
        StringBuilder line = new StringBuilder(clean(scenario));
        for (String col : counts) {
            line.append('\t').append(clean(col));
        }
        line.append('\t').append(clean(outcome)).append('\n');
        Path file = rowsFile();
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String clean(String s) {
        return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }
}

package net.openhft.chronicle.analytics;

/**
 * Stateless: the class chronicle-core looks up by name, so that opening a queue stops paying for a
 * failed class lookup.
 *
 * <p><b>Why.</b> Every {@code SingleChronicleQueue} constructor asks {@code
 * AnalyticsFacade.isEnabled()}, which first calls {@code Class.forName("net.openhft.chronicle.analytics.Analytics")}
 * and only then reads {@code chronicle.analytics.disable}. Strand leaves the real
 * {@code chronicle-analytics} artifact out (it phones home), so that lookup failed on every queue
 * open: a search of every jar on the class path and a {@code ClassNotFoundException} with its stack
 * trace. Under {@code strand bench many-logs}, {@code perf} put 5.5 % of the server's CPU there
 * (2026-12-04, 23,262 samples, 1,285 µs of server CPU per new log). With this class present the
 * lookup finds the loaded class at once.
 *
 * <p><b>Analytics stay off.</b> Loading this class sets {@code chronicle.analytics.disable=true}
 * before {@code isEnabled()} reads it (the lookup initialises the class first), overriding a
 * {@code false} given on the command line, so chronicle-core takes its mute path and never calls into
 * this class. That holds while the property stays {@code true}: code that clears it afterwards would
 * make chronicle-core look for methods this class does not have, and its queue opens fail. Nothing in
 * Strand clears it ({@code AnalyticsTest} checks in a child JVM). No network code, no methods.
 */
public final class Analytics {
    /** The system property chronicle-core reads after finding this class. */
    public static final String DISABLE = "chronicle.analytics.disable";

    static {
        System.setProperty(DISABLE, "true");
    }

    private Analytics() {
    }
}

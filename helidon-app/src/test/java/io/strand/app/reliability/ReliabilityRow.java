package io.strand.app.reliability;

/**
 * One row of the reliability table, filled in by the test that owns it (one test thread; the
 * counters a test's load threads bump are its own atomics, copied in here at the end). A column left
 * unset prints as {@code -} (does not apply); {@link ReliabilityReport} adds the outcome.
 */
public final class ReliabilityRow {
    private String scenario;
    private Long runs;
    private Long operations;
    private Long acknowledged;
    private Long lost;
    private Long duplicated;
    private Long gaps;
    private String corruptions;
    private String note = "";

    ReliabilityRow(String scenario) {
        this.scenario = scenario;
    }

    /** Renames the row, e.g. to add a parameter. */
    public ReliabilityRow scenario(String name) {
        this.scenario = name;
        return this;
    }

    public ReliabilityRow runs(long n) {
        runs = n;
        return this;
    }

    /** Requests (or frames, sockets…) the scenario sent. */
    public ReliabilityRow operations(long n) {
        operations = n;
        return this;
    }

    /** Writes the server acknowledged (the ones the history check holds it to). */
    public ReliabilityRow acknowledged(long n) {
        acknowledged = n;
        return this;
    }

    /** Lost, duplicated and gaps as counted by the scenario's history check. */
    public ReliabilityRow history(long lost, long duplicated, long gaps) {
        this.lost = lost;
        this.duplicated = duplicated;
        this.gaps = gaps;
        return this;
    }

    /** Lost and duplicated, for a scenario without seqs (docs: gaps do not apply). */
    public ReliabilityRow history(long lost, long duplicated) {
        this.lost = lost;
        this.duplicated = duplicated;
        return this;
    }

    /** Damage the server detected out of damage the test injected. */
    public ReliabilityRow corruptions(long detected, long injected) {
        corruptions = detected + " of " + injected;
        return this;
    }

    /** A short fact for the outcome column (a measurement, what was detected how). */
    public ReliabilityRow note(String text) {
        note = text;
        return this;
    }

    String scenario() {
        return scenario;
    }

    String note() {
        return note;
    }

    /** The columns after the scenario, as printed. */
    String[] counts() {
        return new String[] {str(runs), str(operations), str(acknowledged), str(lost), str(duplicated), str(gaps),
                corruptions == null ? "-" : corruptions};
    }

    private static String str(Long v) {
        return v == null ? "-" : v.toString();
    }
}

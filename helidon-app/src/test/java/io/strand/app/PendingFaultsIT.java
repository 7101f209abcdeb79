package io.strand.app;

import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.Scenario;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Rows of the reliability table whose tests are being written elsewhere (issue 10): each shows as
 * {@code not run} until its test replaces the placeholder here (keep the scenario name).
 */
@FaultTest
class PendingFaultsIT {
    @Test
    @Disabled("disk-full test pending (issue 10, item 7)")
    @Scenario("disk full (small tmpfs / simulated full store)")
    void diskFull() {
    }

    @Test
    @Disabled("slowloris test pending (issue 10, header timeout + connection cap)")
    @Scenario("slowloris (partial headers held open)")
    void slowloris() {
    }
}

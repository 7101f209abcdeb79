package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StalledReplicaRuleTest {
    private static final long SECOND = 1_000_000_000L;

    /** Seconds (of one sample per second from 0 to {@code seconds}) at which the rule fired. */
    private interface Sampler {
        boolean sample(StalledReplicaRule rule, int second);
    }

    private static List<Integer> firings(int seconds, Sampler sampler) {
        StalledReplicaRule rule = new StalledReplicaRule();
        List<Integer> fired = new ArrayList<>();
        for (int s = 0; s <= seconds; s++) {
            if (sampler.sample(rule, s)) {
                fired.add(s);
            }
        }
        return fired;
    }

    @Test
    void aFollowerWhoseLogStaysBehindTheLeadersCommitShouldAskAfterTenSecondsThenLessAndLessOften() {
        List<Integer> fired = firings(120, (rule, s) -> rule.stalled(s * SECOND, "n1", 500, 900 + s, false));
        assertEquals(List.of(10, 30, 70), fired, "first after 10 s of no growth, then after 20 s, 40 s, … while the same stall lasts");
        List<Integer> longStall = firings(1200, (rule, s) -> rule.stalled(s * SECOND, "n1", 500, 900 + s, false));
        assertEquals(List.of(10, 30, 70, 150, 310, 610, 910), longStall, "the wait doubles up to 5 minutes");
        List<Integer> twoStalls = firings(120, (rule, s) -> rule.stalled(s * SECOND, "n1", s < 50 ? 500 : 600, 900 + s, false));
        assertEquals(List.of(10, 30, 60, 80, 120), twoStalls, "a new stall (the log grew once) starts the waits again from 20 s, counted from the last ask");
    }

    @Test
    void aGrowingLogShouldNeverFireHoweverFarBehind() {
        assertEquals(List.of(), firings(120, (rule, s) -> rule.stalled(s * SECOND, "n1", 100 + s, 100_000, false)));
    }

    @Test
    void anUpToDateIdleFollowerShouldNeverFire() {
        assertEquals(List.of(), firings(120, (rule, s) -> rule.stalled(s * SECOND, "n1", 900, 900, false)));
    }

    @Test
    void aNewLeaderShouldStartTheCountAgainButAMomentWithoutOneShouldNot() {
        assertEquals(List.of(10, 30, 70), firings(120, (rule, s) -> rule.stalled(s * SECOND, s % 3 == 2 ? null : "n1", 500, 900, false)),
                "a stuck follower keeps timing out and forgetting its leader between that leader's requests");
        assertEquals(List.of(), firings(120, (rule, s) -> rule.stalled(s * SECOND, s < 60 ? "n" + (s / 9) : "n2", 500, 900,
                s >= 60)), "a leader change every 9 s, then a snapshot arriving: never");
        List<Integer> fired = firings(30, (rule, s) -> rule.stalled(s * SECOND, s < 8 ? "n1" : "n2", 500, 900, false));
        assertEquals(List.of(18), fired, "ten seconds counted from the new leader's first sample");
        StalledReplicaRule rule = new StalledReplicaRule();
        assertFalse(rule.stalled(0, null, 500, 900, false), "no leader ever known: nobody to ask");
        assertEquals(null, rule.leader());
    }

    @Test
    void aFollowerCutOffFromItsLeaderHasNoFreshCommitIndexAndShouldNeverFire() {
        assertEquals(List.of(), firings(120, (rule, s) -> rule.stalled(s * SECOND, s < 5 ? "n1" : null, 500, s < 5 ? 900 : 0, false)));
    }

    @Test
    void aSnapshotArrivingShouldHoldTheRuleOffUntilItStops() {
        List<Integer> fired = firings(40, (rule, s) -> rule.stalled(s * SECOND, "n1", 500, 900, s < 25));
        assertEquals(List.of(35), fired);
    }

    @Test
    void oneSampleOfGrowthShouldRestartTheCount() {
        List<Integer> fired = firings(30, (rule, s) -> rule.stalled(s * SECOND, "n1", s < 7 ? 500 : 501, 900, false));
        assertEquals(List.of(17), fired);
        assertFalse(firings(9, (rule, s) -> rule.stalled(s * SECOND, "n1", 500, 900, false)).contains(9));
        assertTrue(firings(10, (rule, s) -> rule.stalled(s * SECOND, "n1", 500, 900, false)).contains(10));
    }
}

package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SnapshotPolicyTest {
    private final SnapshotPolicy policy = new SnapshotPolicy(10_000, 10);

    @Test
    void theFirstSnapshotShouldComeAtTheIntervalSinceNothingWasCopiedYet() {
        assertFalse(policy.due(9_999, 4_000_000, 0));
        assertTrue(policy.due(10_000, 4_000_000, 0));
    }

    @Test
    void aSnapshotShouldWaitUntilTheLogSinceTheLastOneIsAsLargeAsItsCopy() {
        long copy = 400L << 20;
        assertFalse(policy.due(10_000, 4_000_000, copy), "4 MB of log would copy 400 MiB");
        assertFalse(policy.due(99_999, 40_000_000, copy));
        assertTrue(policy.due(20_000, copy, copy));
    }

    @Test
    void deferralShouldEndAtIntervalTimesDeferOrAtTheLogByteCap() {
        long copy = 4L << 30;
        assertTrue(policy.due(100_000, 1_000, copy), "the entries a restart replays stay bounded");
        assertTrue(policy.due(5, SnapshotPolicy.MAX_LOG_BYTES, copy), "the Raft log on disk stays bounded");
        assertFalse(policy.due(5, SnapshotPolicy.MAX_LOG_BYTES - 1, 0));
    }

    @Test
    void withDeferOneItShouldBeThePlainEntryCount() {
        SnapshotPolicy exact = new SnapshotPolicy(50, 1);
        assertTrue(exact.due(50, 1, Long.MAX_VALUE));
        assertFalse(exact.due(49, 1, 0));
        assertTrue(exact.ratisThreshold() == 50);
    }

    @Test
    void stagingShouldStartHalfWay() {
        assertFalse(policy.stageDue(4_999, 1_000, 0));
        assertTrue(policy.stageDue(5_000, 1_000, 0));
        assertTrue(policy.stageDue(10_000, 50, 100));
        assertFalse(policy.stageDue(10_000, 49, 100));
    }

    @Test
    void theReplicasOfAGroupShouldStageAtDifferentPointsAndTakeTogether() {
        long[] stagedAt = new long[3];
        for (int rank = 0; rank < 3; rank++) {
            SnapshotPolicy replica = new SnapshotPolicy(10_000, 10, rank, 3);
            long entries = 0;
            while (!replica.stageDue(entries, 1_000, 0)) {
                entries++;
            }
            stagedAt[rank] = entries;
            assertTrue(replica.due(10_000, 1_000, 0), "the snapshot itself stays at the interval");
            assertFalse(replica.due(9_999, 1_000, 0));
        }
        assertTrue(stagedAt[0] == 2_500 && stagedAt[1] == 5_000 && stagedAt[2] == 7_500,
                "staging at 1/4, 2/4 and 3/4 of the interval: " + java.util.Arrays.toString(stagedAt));
        long copy = 400L << 20;
        SnapshotPolicy last = new SnapshotPolicy(10_000, 10, 2, 3);
        assertFalse(last.stageDue(20_000, copy / 2, copy), "by log bytes too: 3/4 of the copy's size");
        assertTrue(last.stageDue(20_000, copy * 3 / 4, copy));
    }

    @Test
    void everyMemberOfAConfigurationShouldGetItsOwnRankWhateverOrderItIsListedIn() {
        // n4 replaced n3: with the spec's list n4 had no place and took one by hash, possibly n1's or n2's
        java.util.List<String> conf = java.util.List.of("n4", "n1", "n2");
        java.util.Set<Integer> ranks = new java.util.HashSet<>();
        for (String self : conf) {
            SnapshotPolicy ranked = policy.amongReplicas(conf, self);
            assertTrue(ranked.replicas() == 3, "group of 3: " + ranked);
            assertTrue(ranked.equals(policy.amongReplicas(java.util.List.of("n2", "n4", "n1"), self)),
                    "every replica ranks the same configuration alike, in whatever order it lists it");
            ranks.add(ranked.rank());
        }
        assertTrue(ranks.equals(java.util.Set.of(0, 1, 2)), "one rank each: " + ranks);
        SnapshotPolicy outsider = policy.amongReplicas(conf, "n9");
        assertTrue(outsider.rank() >= 0 && outsider.rank() < 3, "a node the configuration does not list yet still gets a valid rank");
        assertTrue(policy.amongReplicas(java.util.List.of(), "n1").replicas() == 1, "no configuration: a group of one");
    }

    @Test
    void theReplicasOfAGroupShouldTakeLargeSnapshotsInTurnsAndSmallOnesTogether() {
        long copy = 200L << 20;
        long firstDueIndex = 123_457; // the index at which every replica's rule holds (the same entries everywhere)
        long window = new SnapshotPolicy(10_000, 10, 0, 3).window(20_000, copy);
        assertEquals(2_048, window, "every / replicas, rounded down to a power of two");
        long[] takenAt = takenInTurns(firstDueIndex, 20_000, copy, copy, 0);
        for (long at : takenAt) {
            assertTrue(at - firstDueIndex <= 3 * window, "waited at most three windows: " + (at - firstDueIndex));
        }

        for (int rank = 0; rank < 3; rank++) {
            SnapshotPolicy replica = new SnapshotPolicy(10_000, 10, rank, 3);
            assertFalse(replica.takeDue(9_999, copy, copy, firstDueIndex + 2 * window), "never before it is due");
            long cheap = SnapshotPolicy.STAGGER_FROM_COPY_BYTES - 1;
            assertTrue(replica.takeDue(10_000, cheap, cheap, firstDueIndex), "a cheap snapshot is taken at once");
            assertTrue(replica.takeDue(90_000, copy, copy, firstDueIndex), "within an interval of the deferral bound: at once");
            assertTrue(replica.takeDue(20_000, SnapshotPolicy.TURNS_END_LOG_BYTES, copy, firstDueIndex), "past the turns' end: at once");
            assertTrue(new SnapshotPolicy(10, 1, rank, 3).takeDue(10, 1, 1, firstDueIndex), "defer 1: the plain entry count");
            assertTrue(replica.inTurns(20_000, copy, copy), "large: in turns (the replica stages again before its take)");
            assertFalse(replica.inTurns(10_000, cheap, cheap), "cheap: at once, no second staging to wait for");
            assertFalse(replica.inTurns(20_000, SnapshotPolicy.TURNS_END_LOG_BYTES, copy), "past the turns' end: at once");
        }
        assertFalse(new SnapshotPolicy(10_000, 10).inTurns(20_000, copy, copy), "a group of one takes no turns");
    }

    @Test
    void aReplicasFirstLargeSnapshotShouldAlsoBeTakenInTurns() {
        // no copy yet (0), but 1.1 GB of log: 10,000 entries of 112 KB, as append-batched's; all due together
        long entryBytes = 112_000;
        long[] takenAt = takenInTurns(10_000, 10_000, 10_000 * entryBytes, 0, entryBytes);
        long window = new SnapshotPolicy(10_000, 10, 0, 3).window(10_000, 10_000 * entryBytes);
        assertTrue(window < 10_000 / 3, "large entries: a shorter window, " + window);
        for (long at : takenAt) {
            assertTrue((at - 10_000) * entryBytes + 10_000 * entryBytes < SnapshotPolicy.TURNS_END_LOG_BYTES,
                    "every turn came before the log reached the turns' end: " + java.util.Arrays.toString(takenAt));
        }
    }

    /**
     * Steps the three replicas of a group from {@code dueIndex} (all due there, with {@code entries} and
     * {@code logBytes} since their last snapshot, growing by {@code entryBytes} an entry) until each takes
     * its snapshot; asserts that each took in a window of its own and returns the indexes.
     */
    private static long[] takenInTurns(long dueIndex, long entries, long logBytes, long copy, long entryBytes) {
        long[] takenAt = new long[3];
        long[] window = new long[3];
        for (int rank = 0; rank < 3; rank++) {
            SnapshotPolicy replica = new SnapshotPolicy(10_000, 10, rank, 3);
            long index = dueIndex;
            long n = entries;
            long bytes = logBytes;
            while (!replica.takeDue(n, bytes, copy, index)) {
                index++;
                n++;
                bytes += entryBytes;
            }
            takenAt[rank] = index;
            window[rank] = replica.window(n, bytes);
        }
        long[] windows = new long[3];
        for (int rank = 0; rank < 3; rank++) {
            windows[rank] = takenAt[rank] / window[rank];
        }
        assertEquals(3, java.util.Arrays.stream(windows).distinct().count(),
                "each replica in a window of its own: " + java.util.Arrays.toString(takenAt));
        return takenAt;
    }

    @Test
    void nonPositiveSettingsShouldBeRefused() {
        assertThrows(IllegalArgumentException.class, () -> new SnapshotPolicy(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new SnapshotPolicy(1, 0));
        assertThrows(IllegalArgumentException.class, () -> new SnapshotPolicy(1, 1, 3, 3));
    }
}

package io.strand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClusterSpecTest {
    private static final int PINNED_DEFAULT = 37;
    private static final Path DATA = Path.of("/tmp/unused");

    @Test
    void shardOfShouldNeverChangeForAGivenName() {
        // Pinned values: shardOf is part of the on-disk contract of a cluster (CRC-32C of UTF-8, unsigned, mod S).
        java.util.zip.CRC32C check = new java.util.zip.CRC32C(); // the Castagnoli check value
        check.update("123456789".getBytes());
        assertEquals(0xE3069283L, check.getValue());
        assertEquals(6, ClusterSpec.shardOf("acme", 8));
        assertEquals(PINNED_DEFAULT, ClusterSpec.shardOf("default", 64));
        assertEquals(ClusterSpec.shardOf("é-ws", 64), ClusterSpec.shardOf("é-ws", 64));
        for (String ws : List.of("a", "b", "tenant-17", "zz_top")) {
            int k = ClusterSpec.shardOf(ws, 16);
            assertTrue(k >= 0 && k < 16);
        }
    }

    @Test
    void replicasOfShouldRotateOverSortedMembersWithTheFirstAsPreferredLeader() {
        ClusterSpec spec = ClusterSpec.of("n2", "n3=h:3,n1=h:1,n2=h:2,n4=h:4", 8, DATA);
        assertEquals(List.of("n1", "n2", "n3"), ids(spec.replicasOf(0)));
        assertEquals(List.of("n2", "n3", "n4"), ids(spec.replicasOf(1)));
        assertEquals(List.of("n4", "n1", "n2"), ids(spec.replicasOf(3)));
        Map<String, Integer> preferred = new HashMap<>();
        for (int k = 0; k < 8; k++) {
            preferred.merge(spec.replicasOf(k).getFirst().id(), 1, Integer::sum);
        }
        assertEquals(Map.of("n1", 2, "n2", 2, "n3", 2, "n4", 2), preferred, "leaders spread");
        assertEquals(List.of(0, 1, 3, 4, 5, 7), spec.shardsOf("n2"));
    }

    @Test
    void theSystemShardShouldBeOnEveryMemberWhateverTheReplicaCount() {
        ClusterSpec spec = ClusterSpec.of("n2", "n3=h:3,n1=h:1,n2=h:2,n4=h:4", 8, DATA);
        assertEquals(7, spec.systemShard(), "CRC-32C of _system mod 8");
        assertEquals(List.of("n4", "n1", "n2", "n3"), ids(spec.replicasOf(7)), "the preferred leader as placement gives it, then the rest");
        assertEquals(List.of(0, 1, 2, 4, 5, 6, 7), spec.shardsOf("n3"), "shard 7 by the system rule, the others by rotation");
    }

    @Test
    void replicasOfShouldUseEveryNodeWhenThereAreFewerThanReplicas() {
        ClusterSpec spec = ClusterSpec.of("n1", "n1=h:1,n2=h:2", 4, DATA);
        assertEquals(2, spec.effectiveReplicas());
        assertEquals(List.of("n2", "n1"), ids(spec.replicasOf(1)));
    }

    @Test
    void groupIdShouldBeTheNameBasedUuidOfTheShard() {
        assertEquals("5c03dd7d-5311-3f18-8fd7-9841dcdae556", ClusterSpec.groupId(0).toString());
    }

    @Test
    void constructorShouldRejectABadClusterList() {
        assertThrows(IllegalArgumentException.class, () -> ClusterSpec.of("n1", "n1=h:1,n1=h:2", 4, DATA));
        assertThrows(IllegalArgumentException.class, () -> ClusterSpec.of("n1", "n1=h:1,n2=h:1", 4, DATA));
        assertThrows(IllegalArgumentException.class, () -> ClusterSpec.of("n9", "n1=h:1", 4, DATA));
        assertThrows(IllegalArgumentException.class, () -> ClusterSpec.of("n1", "n1=h", 4, DATA));
        assertThrows(IllegalArgumentException.class, () -> ClusterSpec.of("n1", "n1=h:1", 0, DATA));
    }

    private static List<String> ids(List<ClusterSpec.Member> members) {
        return members.stream().map(ClusterSpec.Member::id).toList();
    }
}

package io.ratchet.chaos.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.cluster.Cluster.GroupVoters;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a split is drawn so that one side keeps a majority of every group's voters. */
class PartitionNemesisTest {
    @Test
    void theMinorityIsDrawnFromVotersOfEveryGroupAndSizedByTheSmallestGroup() {
        // A grow from four voters to five that group 0 has and group 3 has not yet: a split of two
        // against three of the five would leave group 3 two of its four on each side.
        List<GroupVoters> halfway = List.of(new GroupVoters(List.of("n1", "n2", "n3", "n4", "n5"), false),
                new GroupVoters(List.of("n1", "n2", "n3", "n4"), false));
        assertEquals(1, PartitionNemesis.minority(halfway));
        assertEquals(List.of("n1", "n2", "n3", "n4"), PartitionNemesis.votersOfEvery(halfway));

        List<GroupVoters> five = List.of(new GroupVoters(List.of("n1", "n2", "n3", "n4", "n5"), false));
        assertEquals(2, PartitionNemesis.minority(five));
        // While a change is under way the old voters decide too: five becoming from four keeps 3 of 4 on the other side.
        assertEquals(1, PartitionNemesis.minority(List.of(new GroupVoters(List.of("n1", "n2", "n3", "n4", "n5"), true))));
        assertEquals(1, PartitionNemesis.minority(List.of(new GroupVoters(List.of("n1", "n2", "n3"), false))));
        assertEquals(0, PartitionNemesis.minority(List.of(new GroupVoters(List.of("n1", "n2", "n3"), true))),
                "three voters in a change: no split is safe");
    }
}

package io.ratchet.chaos.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.NodeStatus;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What the membership nemesis reads from the nodes' statuses: a configuration counts only once every group
 * has a leader holding it committed with no change under way, and a node some groups name and others do
 * not (a change stopped half way) is a member whose storage must be kept.
 */
class SettledConfigurationTest {
    private static final long TERM = 3;

    @Test
    void oneGroupSettlesOnItsLeadersCommittedConfiguration() {
        NodeStatus leader = single("n1", "LEADER", 500, conf(400, false, "n1", "n2", "n3"));
        NodeStatus follower = single("n2", "FOLLOWER", 480, conf(400, false, "n1", "n2", "n3"));
        SettledConfiguration view = SettledConfiguration.of(List.of(leader, follower)).orElseThrow();
        assertEquals(List.of("n1", "n2", "n3"), view.voters());
        assertEquals("n1", view.leader());
        assertTrue(view.agreed());
        assertTrue(view.live("n2"));
        assertFalse(view.live("n3"), "a node that did not answer is not live");

        assertEquals(Optional.empty(), SettledConfiguration.of(List.of(single("n1", "LEADER", 500,
                conf(400, true, "n1", "n2", "n3")))), "a change under way");
        assertEquals(Optional.empty(), SettledConfiguration.of(List.of(single("n1", "LEADER", 300,
                conf(400, false, "n1", "n2", "n3")))), "the entry that made it is not committed yet");
        assertEquals(Optional.empty(), SettledConfiguration.of(List.of(follower)), "no leader");
    }

    @Test
    void aNodeOnlySomeGroupsNameIsAMemberButTheGroupsDoNotAgree() {
        NodeStatus.Configuration four = conf(900, false, "n1", "n2", "n3", "n4");
        NodeStatus.Configuration three = conf(700, false, "n2", "n3", "n4");
        // An add of n1 that groups 0..2 took and group 3 did not; n2 leads groups 0 and 1, n3 groups 2 and 3.
        NodeStatus n2 = grouped("n2", group(0, "LEADER", 1000, four), group(1, "LEADER", 1000, four),
                group(2, "FOLLOWER", 1000, four), group(3, "FOLLOWER", 1000, three));
        NodeStatus n3 = grouped("n3", group(0, "FOLLOWER", 1000, four), group(1, "FOLLOWER", 1000, four),
                group(2, "LEADER", 1000, four), group(3, "LEADER", 1000, three));
        SettledConfiguration view = SettledConfiguration.of(List.of(n2, n3)).orElseThrow();

        assertFalse(view.agreed());
        assertEquals(Map.of("n1", List.of(0, 1, 2)), view.halfway());
        assertTrue(view.member("n1"), "named by a group: its storage is kept");
        assertFalse(view.memberOfEvery("n1"), "the add is not done");
        assertTrue(view.memberOfEvery("n4"));
        assertFalse(view.member("n5"));
        assertEquals("n2", view.leader(), "group 0's leader");
        assertEquals(List.of("n1", "n2", "n3", "n4"), view.voters(), "group 0's voters");
        assertTrue(view.toString().contains("n1 only in groups [0, 1, 2]"), view.toString());

        // The same change done in group 3 too: the groups agree.
        NodeStatus n3done = grouped("n3", group(0, "FOLLOWER", 1000, four), group(1, "FOLLOWER", 1000, four),
                group(2, "LEADER", 1000, four), group(3, "LEADER", 1000, four));
        SettledConfiguration done = SettledConfiguration.of(List.of(n2, n3done)).orElseThrow();
        assertTrue(done.agreed());
        assertEquals(Map.of(), done.halfway());
        assertTrue(done.memberOfEvery("n1"));
    }

    @Test
    void everyGroupMustHaveALeaderWithASettledConfigurationAndTheHighestTermWins() {
        NodeStatus.Configuration three = conf(700, false, "n1", "n2", "n3");
        NodeStatus n1 = grouped("n1", group(0, "LEADER", 1000, three), group(1, "FOLLOWER", 1000, three));
        NodeStatus n2 = grouped("n2", group(0, "FOLLOWER", 1000, three), group(1, "CANDIDATE", 1000, three));
        assertEquals(Optional.empty(), SettledConfiguration.of(List.of(n1, n2)), "group 1 has no leader");

        NodeStatus n2changing = grouped("n2", group(0, "FOLLOWER", 1000, three),
                group(1, "LEADER", 1000, conf(990, true, "n1", "n2", "n3", "n4")));
        assertEquals(Optional.empty(), SettledConfiguration.of(List.of(n1, n2changing)), "group 1's change is under way");

        // A stale leader of an older term beside the real one: the higher term's configuration counts.
        NodeStatus stale = new NodeStatus("n3", "n3:1", "LEADER", null, TERM, 0, 0, 0, 0, 0, 0, null, three, null,
                List.of(new NodeStatus.GroupStatus(0, "LEADER", "n3", TERM - 1, 800, 800, conf(600, false, "n1", "n3", "n5")),
                        new NodeStatus.GroupStatus(1, "FOLLOWER", null, TERM, 1000, 1000, three)));
        NodeStatus n2leads = grouped("n2", group(0, "FOLLOWER", 1000, three), group(1, "LEADER", 1000, three));
        SettledConfiguration view = SettledConfiguration.of(List.of(stale, n1, n2leads)).orElseThrow();
        assertEquals("n1", view.leader());
        assertTrue(view.agreed());
    }

    @Test
    void aNodeIsLiveOnlyWhenItHasCaughtUpInEveryGroup() {
        NodeStatus.Configuration three = conf(700, false, "n1", "n2", "n3");
        NodeStatus n1 = grouped("n1", group(0, "LEADER", 5000, three), group(1, "LEADER", 5000, three));
        NodeStatus behind = grouped("n2", group(0, "FOLLOWER", 5000, three),
                group(1, "FOLLOWER", 5000 - SettledConfiguration.CAUGHT_UP - 1, three));
        NodeStatus level = grouped("n3", group(0, "FOLLOWER", 4990, three), group(1, "FOLLOWER", 4990, three));
        SettledConfiguration view = SettledConfiguration.of(List.of(n1, behind, level)).orElseThrow();
        assertFalse(view.live("n2"), "still catching up in group 1");
        assertTrue(view.live("n3"));
        assertTrue(view.live("n1"));
    }

    private static NodeStatus.Configuration conf(long index, boolean changing, String... voters) {
        return new NodeStatus.Configuration(index, changing,
                Arrays.stream(voters).map(id -> new NodeStatus.ConfiguredPeer(id, id + ":1", "VOTER")).toList());
    }

    /** A node of a cluster of one group: the status' own fields are the group's. */
    private static NodeStatus single(String id, String role, long index, NodeStatus.Configuration conf) {
        return new NodeStatus(id, id + ":1", role, "n1", TERM, index, index, 0, 0, 0, 0, null, conf, null, List.of());
    }

    /** A node of several groups; its own fields are group 0's, as the admin status gives them. */
    private static NodeStatus grouped(String id, NodeStatus.GroupStatus... groups) {
        List<NodeStatus.GroupStatus> each = new ArrayList<>(Arrays.asList(groups));
        NodeStatus.GroupStatus first = each.get(0);
        return new NodeStatus(id, id + ":1", first.role(), first.leader(), first.term(), first.appliedIndex(),
                first.commitIndex(), 0, 0, 0, 0, null, first.configuration(), null, List.copyOf(each));
    }

    private static NodeStatus.GroupStatus group(int group, String role, long index, NodeStatus.Configuration conf) {
        return new NodeStatus.GroupStatus(group, role, null, TERM, index, index, conf);
    }
}

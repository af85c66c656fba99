package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;

class HandOverTest {
    private static final RaftPeerId N2 = RaftPeerId.valueOf("n2");
    private static final RaftPeerId N3 = RaftPeerId.valueOf("n3");

    @Test
    void aNodeBackFromARestartIsNotHandedAGroupUntilItHoldsEveryCommittedEntry() {
        // n3 answered a moment ago but is still catching up: committed is 1000, it matches 400.
        List<HandOver.Follower> voters = List.of(new HandOver.Follower(N2, 40, 1000), new HandOver.Follower(N3, 5, 400));
        assertEquals(List.of(N2), HandOver.caughtUp(voters, 1_000, 1000));
        // Once it matches the commit index it is a target again.
        voters = List.of(new HandOver.Follower(N2, 40, 1000), new HandOver.Follower(N3, 5, 1000));
        assertEquals(List.of(N3, N2), HandOver.caughtUp(voters, 1_000, 1000));
    }

    @Test
    void theFurthestInTheLogComesFirstThenTheMostRecentlyHeard() {
        List<HandOver.Follower> voters = List.of(new HandOver.Follower(N2, 5, 900), new HandOver.Follower(N3, 50, 1000));
        assertEquals(List.of(N3, N2), HandOver.heard(voters, 1_000));
        // Silent for longer than the window: not a target at all.
        assertEquals(List.of(N2), HandOver.heard(voters, 20));
    }

    @Test
    void unknownMatchIndicesMakeNoVoterCaughtUp() {
        List<HandOver.Follower> voters = List.of(new HandOver.Follower(N2, 5, -1), new HandOver.Follower(N3, 5, -1));
        assertEquals(List.of(), HandOver.caughtUp(voters, 1_000, 0));
    }

    @Test
    void theBalancerPassesOverAVoterStarvedOfCpuAndTakesTheNext() {
        RaftPeerId n1 = RaftPeerId.valueOf("n1");
        java.util.Map<RaftPeerId, Integer> led = java.util.Map.of(n1, 3, N2, 0, N3, 1);
        // n2 leads nothing because the slow-leader watch just handed its groups away: it is not handed one back.
        assertEquals(java.util.Optional.of(N3), LeaderBalancer.target(List.of(N2, N3), led, 3, N2::equals));
        assertEquals(java.util.Optional.of(N2), LeaderBalancer.target(List.of(N2, N3), led, 3, p -> false));
        // Nobody leads two fewer than the giver: nothing moves.
        assertEquals(java.util.Optional.empty(), LeaderBalancer.target(List.of(N2, N3), java.util.Map.of(n1, 2, N2, 1, N3, 1), 2, p -> false));
    }
}
